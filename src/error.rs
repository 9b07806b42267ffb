//! One error enum per stage: reading a level, baking it, querying a mesh, and
//! loading or saving a baked file.

use std::path::PathBuf;

use glam::Vec2;

/// Something is wrong with a level (JSON file, Moving AI map or in-memory [`crate::Level`]).
///
/// Every variant names where the problem is (`source` is a file path, or
/// `<memory>` for levels built in code) and what is wrong with it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LevelError {
    /// The file could not be read.
    #[error("{source_name}: cannot read the file: {error}")]
    Io {
        /// The file.
        source_name: String,
        /// The operating system's reason.
        #[source]
        error: std::io::Error,
    },
    /// The JSON is not well formed or does not match the level schema.
    #[error("{source_name}: line {line}, column {column}: {message}")]
    Json {
        /// The file.
        source_name: String,
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
        /// What serde_json found.
        message: String,
    },
    /// A field holds a value the level cannot use.
    #[error("{source_name}: {field}: {reason}")]
    Field {
        /// The file.
        source_name: String,
        /// Path of the field, e.g. `walkable[0][3]`.
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A Moving AI `.map` file is malformed.
    #[error("{source_name}:{line}: {reason}")]
    Map {
        /// The file.
        source_name: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// The level has no walkable area at all.
    #[error("{source_name}: the level has no walkable area")]
    Empty {
        /// The file.
        source_name: String,
    },
}

/// The bake could not turn a level into a navigation mesh.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BakeError {
    /// After obstacles, impassable areas and the agent radius, nothing walkable is left.
    #[error("nothing walkable is left after subtracting obstacles and eroding by radius {radius}")]
    NothingWalkable {
        /// The agent radius used, world units.
        radius: f32,
    },
    /// The level breaks a rule the bake relies on ([`crate::Level::validate`]).
    #[error("invalid level")]
    Level(#[from] LevelError),
    /// A configuration value is out of its documented range.
    #[error("bake config: {field}: {reason}")]
    Config {
        /// The field of [`crate::BakeConfig`].
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The triangulation rejected the outline.
    #[error("triangulation failed: {reason}")]
    Triangulation {
        /// What went wrong.
        reason: String,
        /// The triangulator's own error, when it reported one.
        #[source]
        cause: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// The level is beyond what the bake serves in bounded time (see
    /// [`crate::bake::MAX_CROSSINGS`]).
    #[error("the level is too complex to bake: {reason}")]
    TooComplex {
        /// What limit it passes.
        reason: String,
    },
    /// The level names an agent class it does not define.
    #[error("no agent class named {0:?} in the level")]
    UnknownAgent(String),
}

/// A path query could not be answered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// A coordinate is NaN or infinite.
    #[error("{which} point ({x}, {y}) is not finite")]
    NonFinite {
        /// `start`, `goal` or `point`.
        which: &'static str,
        /// The x coordinate as given.
        x: f32,
        /// The y coordinate as given.
        y: f32,
    },
    /// The point is not on the walkable mesh (inside an obstacle or outside the level).
    #[error("{which} point {point} is not on the navigation mesh")]
    OffMesh {
        /// `start`, `goal` or `point`.
        which: &'static str,
        /// The point as given.
        point: Vec2,
    },
    /// Start and goal are on different islands of walkable space.
    #[error("the goal cannot be reached from the start (different connected components)")]
    Unreachable,
    /// The search was stopped by its expansion budget before it reached the goal
    /// and no partial path was asked for.
    #[error("the search ran out of its budget of {budget} expansions")]
    BudgetExhausted {
        /// The budget that ran out.
        budget: u32,
    },
    /// A [`crate::PathFollower`] was asked to follow before it had a path
    /// (or after a replan failed).
    #[error("the follower has no path: plan one first")]
    NoPath,
    /// A [`crate::PathScheduler`] already holds as many requests as it may;
    /// the request was not queued.
    #[error("the request queue is full ({capacity} requests)")]
    QueueFull {
        /// The scheduler's capacity.
        capacity: usize,
    },
    /// A path handed to a [`crate::PathFollower`] does not run over this
    /// mesh's regions (it was found on another mesh, or is empty).
    #[error("the path does not run over this mesh's regions (found on another mesh?)")]
    StalePath,
    /// The point is not where a unit of this mesh's radius fits: closer than
    /// the radius to a wall, or off walkable space, and no fitting point lies
    /// within the filter's snap distance (on a mesh above radius 0: from
    /// [`crate::NavMesh::for_radius`], or baked for an agent). On a radius-0
    /// mesh the same case is [`QueryError::OffMesh`].
    #[error("{which} point {point} has no room for a unit of radius {radius} (too close to a wall, or off the mesh)")]
    NoRoom {
        /// `start`, `goal` or `point`.
        which: &'static str,
        /// The point as given.
        point: Vec2,
        /// The unit's radius, world units.
        radius: f32,
    },
    /// Arrival slots were asked for with a spacing that is not finite, not
    /// positive, or too small to keep points apart at the target's
    /// coordinates.
    #[error("arrival slot spacing {spacing} is not a usable distance here")]
    BadSpacing {
        /// The spacing as given.
        spacing: f32,
    },
}

/// A baked file could not be written or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// The operating system refused to read or write the file.
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The reason.
        #[source]
        error: std::io::Error,
    },
    /// The file is shorter than its header says.
    #[error("baked file is truncated: {found} bytes, expected {expected}")]
    Truncated {
        /// Bytes the header promises.
        expected: u64,
        /// Bytes present.
        found: u64,
    },
    /// The file does not start with the portalnav magic bytes.
    #[error("not a portalnav baked file (bad magic bytes)")]
    BadMagic,
    /// The file was written by an incompatible version of portalnav.
    #[error(
        "baked file format version {found} is not supported (this build reads version {supported})"
    )]
    UnsupportedVersion {
        /// Version in the file.
        found: u32,
        /// Version this build reads.
        supported: u32,
    },
    /// The body does not match its checksum: the file is corrupted.
    #[error("baked file is corrupted (checksum {found:#018x}, expected {expected:#018x})")]
    Checksum {
        /// Checksum stored in the header.
        expected: u64,
        /// Checksum of the body.
        found: u64,
    },
    /// The body passed its checksum but does not decode as a mesh.
    #[error("baked file body does not decode")]
    Decode(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The mesh could not be encoded.
    #[error("the mesh cannot be encoded")]
    Encode(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The body decodes but the mesh fails [`crate::NavMesh::validate`].
    #[error("baked file holds an invalid mesh")]
    Invalid(#[from] crate::ValidationError),
}

/// A mesh for an agent size could not be given ([`crate::NavMesh::for_radius`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RadiusError {
    /// The radius is NaN, infinite or negative.
    #[error("agent radius {radius} is not a finite number >= 0")]
    Invalid {
        /// The radius as given.
        radius: f32,
    },
    /// The radius is below the one the mesh was baked for: its walls are
    /// already pushed out further than such a unit needs.
    #[error("agent radius {radius} is below the radius {baked} this mesh was baked for")]
    BelowBaked {
        /// The radius as given.
        radius: f32,
        /// [`crate::NavMesh::agent_radius`].
        baked: f32,
    },
    /// The radius is above what the mesh was baked to serve.
    #[error(
        "agent radius {radius} is above this mesh's maximum {max} (bake with a larger max radius)"
    )]
    AboveMaximum {
        /// The radius as given.
        radius: f32,
        /// [`crate::NavMesh::max_radius`].
        max: f32,
    },
    /// The mesh's level has no agent class of this name.
    #[error("no agent class named {0:?} in this mesh")]
    UnknownAgent(String),
    /// Deriving the mesh for the radius failed; [`BakeError::NothingWalkable`]
    /// when no spot of the level has room for such a unit.
    #[error("no mesh for agent radius {radius}")]
    Bake {
        /// The radius as given.
        radius: f32,
        /// Why.
        #[source]
        error: BakeError,
    },
}

/// Why a runtime edit of a [`crate::TileCache`] was refused; the mesh is left
/// as it was.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// The id names no obstacle of this cache: removed already (or twice in
    /// one batch), or from another cache.
    #[error("edit {index}: no obstacle {id:?} in this tile cache")]
    UnknownObstacle {
        /// Position of the edit in its batch.
        index: usize,
        /// The id given.
        id: crate::ObstacleId,
    },
    /// The obstacle's outline is not a valid polygon.
    #[error("edit {index}: bad obstacle outline")]
    Polygon {
        /// Position of the edit in its batch.
        index: usize,
        /// What is wrong with it, and where.
        #[source]
        error: LevelError,
    },
    /// A tile failed to bake.
    #[error("re-baking the edited tiles failed")]
    Bake(#[from] BakeError),
}
