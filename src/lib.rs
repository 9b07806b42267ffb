//! portalnav: hierarchical 2D navigation for real-time strategy and MOBA games.
//!
//! Walkable space (JSON level polygons or Moving AI grid maps) is baked into
//! convex regions linked by portals; queries run A* over the portals and pull
//! the path taut across them.

#![doc = include_str!("../README.md")]
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod bake;
mod error;
mod fxmap;
pub mod geometry;
mod io;
mod level;
mod mesh;
mod query;
pub mod render;
mod search;
#[cfg(test)]
mod test_data;

pub use bake::{
    BakeConfig, Edit, ObstacleId, TileCache, TriangleSoup, DEFAULT_CLUSTER_SIZE,
    DEFAULT_WIDE_PORTAL, MAX_DERIVED_RADII,
};
pub use error::{BakeError, EditError, FileError, LevelError, QueryError, RadiusError};
/// Structured changes to baked files for the fuzz targets (feature `fuzzing`).
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub use io::fuzzing;
pub use io::{write_atomically, FORMAT_VERSION};
pub use level::{AgentClass, Area, Grid, Level, NavPoint, Scenario};
pub use mesh::{
    AreaKind, BakeStats, HierarchyError, HierarchyStats, NavMesh, NavNode, NavPointKind, Portal,
    PortalId, Region, RegionId, SizedMesh, ValidationError,
};
pub use query::{
    Answer, BatchQuery, Fallback, FollowEvent, NavQuery, Path, PathFollower, PathScheduler,
    PathStatus, QueryFilter, RaycastHit, RequestId, SearchLevel, Steering, DEFAULT_MAX_EXPANSIONS,
};
