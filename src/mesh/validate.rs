//! [`NavMesh::validate`]: every invariant the runtime relies on.

use glam::Vec2;
use std::collections::HashMap;

use super::NavMesh;
use crate::geometry;

/// Slack for convexity and area checks, in square world units per unit of
/// edge length: f32 vertices of a region merged in f64 may bend inward by
/// rounding, never by more than this.
const CONVEX_EPS: f32 = 1e-3;

/// An invariant of a [`NavMesh`] that does not hold, and where.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ValidationError {
    /// A region (by dense index) is malformed or disagrees with its portals.
    #[error("region {index}: {reason}")]
    Region {
        /// Dense index of the region ([`crate::Region::index`]).
        index: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A portal (by dense index) is malformed or disagrees with its regions.
    #[error("portal {index}: {reason}")]
    Portal {
        /// Dense index of the portal ([`crate::Portal::index`]).
        index: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// The regions do not add up to the walkable area the bake recorded.
    #[error("the regions cover {covered} square units but the walkable area is {expected}")]
    WalkableArea {
        /// Sum of the region areas.
        covered: f64,
        /// The walkable area recorded by the bake.
        expected: f64,
    },
    /// The radii the mesh serves, or its snapping grid, are out of range.
    #[error("agent sizes: {0}")]
    Sizes(String),
    /// The derived search tables do not match the regions and portals.
    #[error("the search tables do not match the regions and portals")]
    Tables,
    /// The nav-point hierarchy is inconsistent with itself or the mesh.
    #[error("hierarchy: {0}")]
    Hierarchy(#[from] HierarchyError),
}

/// A part of the stored nav-point hierarchy that does not hold together.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{part}: {reason}")]
pub struct HierarchyError {
    /// The table at fault: `clusters`, `nav nodes`, `leg tables`,
    /// `landmarks`, `corridors` or `all-pairs table`.
    pub part: &'static str,
    /// What is wrong with it.
    pub reason: String,
}

impl HierarchyError {
    pub(crate) fn new(part: &'static str, reason: impl Into<String>) -> HierarchyError {
        HierarchyError {
            part,
            reason: reason.into(),
        }
    }
}

/// Most grid steps from the origin to a corner (the bake's grid holds
/// 2^23; an erosion for a wider agent needs them in i_overlay's integers).
const MAX_GRID_STEPS: f64 = 8_388_608.0;

/// The radii and the snapping grid: a radius range the derivation can
/// serve, agent classes of finite radii (a class above the maximum is
/// refused when asked for), a tiling the bake could make, and a grid of a
/// power-of-two step.
fn check_sizes(data: &super::MeshData) -> Result<(), ValidationError> {
    let (baked, max) = (data.agent_radius, data.max_radius);
    if !(baked.is_finite() && baked >= 0.0 && max.is_finite() && max >= baked) {
        return Err(ValidationError::Sizes(format!(
            "agent radius {baked} and max radius {max} are not finite with 0 <= radius <= max"
        )));
    }
    if let Some(a) = data
        .agents
        .iter()
        .find(|a| !(a.radius.is_finite() && a.radius >= 0.0))
    {
        return Err(ValidationError::Sizes(format!(
            "agent class {:?} has radius {}",
            a.name, a.radius
        )));
    }
    if let Some(t) = data.tiling {
        let tiles = u64::from(t.count[0]) * u64::from(t.count[1]);
        let far = t
            .first
            .iter()
            .map(|&f| (f as f64 * t.size).abs())
            .fold(0.0, f64::max);
        if !(t.size.is_finite() && t.size >= 1.0)
            || tiles == 0
            || tiles > crate::bake::MAX_TILES as u64
            || far.is_nan()
            || far > 2f64.powi(24)
        {
            return Err(ValidationError::Sizes(format!(
                "tiles of {} by {} x {} from {:?} are not a tiling this build bakes",
                t.size, t.count[0], t.count[1], t.first
            )));
        }
    }
    let scale = data.snap_scale;
    let exponent = scale.log2();
    if !(exponent.is_finite() && exponent.fract() == 0.0 && (-64.0..=64.0).contains(&exponent)) {
        return Err(ValidationError::Sizes(format!(
            "snapping grid of {scale} steps per unit is not a power of two within 2^-64..=2^64"
        )));
    }
    Ok(())
}

pub(crate) fn region_error(index: usize, reason: impl Into<String>) -> ValidationError {
    ValidationError::Region {
        index,
        reason: reason.into(),
    }
}

pub(crate) fn portal_error(index: usize, reason: impl Into<String>) -> ValidationError {
    ValidationError::Portal {
        index,
        reason: reason.into(),
    }
}

impl NavMesh {
    /// Checks every invariant: regions are convex, counter-clockwise and
    /// non-degenerate; each portal is an edge of exactly its two regions with
    /// matching endpoints; regions and portals refer to each other both ways;
    /// components are consistent across portals; dense indices are in order; and
    /// the region areas add up to the walkable area recorded by the bake; and
    /// the nav-point hierarchy, if any, stays inside the mesh with every
    /// cached corridor leading where it says.
    ///
    /// # Errors
    /// The first broken invariant, described.
    pub fn validate(&self) -> Result<(), ValidationError> {
        let data = &self.data;
        check_sizes(data)?;
        // every corner lies on the snapping grid, inside what it holds
        let scale = data.snap_scale;
        let on_grid = |v: Vec2| {
            let (x, y) = (f64::from(v.x) * scale, f64::from(v.y) * scale);
            x.fract() == 0.0 && y.fract() == 0.0 && x.abs().max(y.abs()) <= MAX_GRID_STEPS
        };
        let mut total_area = 0.0f64;
        // per portal (dense index): how often each of its two regions lists it
        let mut appearances = vec![[0u32; 2]; data.portals.len()];
        for (i, (key, region)) in data.regions.iter().enumerate() {
            if region.index as usize != i {
                return Err(region_error(i, format!("carries index {}", region.index)));
            }
            let n = region.vertices.len();
            if n < 3 || region.portals.len() != n {
                return Err(region_error(
                    i,
                    format!("has {n} vertices and {} edge slots", region.portals.len()),
                ));
            }
            if (0..n).any(|k| region.vertices[k] == region.vertices[(k + 1) % n]) {
                return Err(region_error(i, "has an edge of zero length"));
            }
            if region.vertices.iter().any(|v| !v.is_finite()) {
                return Err(region_error(i, "has a non-finite vertex"));
            }
            if let Some(k) = region.vertices.iter().position(|&v| !on_grid(v)) {
                return Err(region_error(
                    i,
                    format!(
                        "has vertex {k} off the snapping grid of step {}",
                        1.0 / scale
                    ),
                ));
            }
            let area = region.area_size();
            if area <= 0.0 {
                return Err(region_error(
                    i,
                    format!("is not counter-clockwise (area {area})"),
                ));
            }
            total_area += area;
            for k in 0..n {
                let a = region.vertices[k];
                let b = region.vertices[(k + 1) % n];
                let c = region.vertices[(k + 2) % n];
                let turn = geometry::orient(a, b, c);
                if turn < -CONVEX_EPS * (b - a).length().max((c - b).length()).max(1.0) {
                    return Err(region_error(
                        i,
                        format!("is not convex at vertex {}", (k + 1) % n),
                    ));
                }
            }
            if region.area as usize >= data.areas.len().max(1) {
                return Err(region_error(
                    i,
                    format!("has area kind {} of {}", region.area, data.areas.len()),
                ));
            }
            for (k, portal) in region.portals.iter().enumerate() {
                let Some(pid) = portal else { continue };
                let Some(p) = data.portals.get(*pid) else {
                    return Err(region_error(i, format!("edge {k} names a missing portal")));
                };
                if !p.regions.contains(&key) {
                    return Err(region_error(
                        i,
                        format!("edge {k} names portal {} that does not touch it", p.index),
                    ));
                }
                // the edge must be the portal seen from this region's side
                let (l, r) = if p.regions[0] == key {
                    (p.left, p.right)
                } else {
                    (p.right, p.left)
                };
                if region.vertices[k] != r || region.vertices[(k + 1) % n] != l {
                    return Err(region_error(
                        i,
                        format!("edge {k} does not match the ends of portal {}", p.index),
                    ));
                }
                let side = usize::from(p.regions[0] != key);
                if let Some(count) = appearances.get_mut(p.index as usize) {
                    count[side] = count[side].saturating_add(1);
                }
            }
        }
        let mut seen: HashMap<(u32, u32), u32> = HashMap::new();
        let by_index: Vec<&super::Portal> = data.portals.values().collect();
        for (j, p) in by_index.iter().enumerate() {
            if p.index as usize != j {
                return Err(portal_error(j, format!("carries index {}", p.index)));
            }
            let [ka, kb] = p.regions;
            let (Some(a), Some(b)) = (data.regions.get(ka), data.regions.get(kb)) else {
                return Err(portal_error(j, "names a missing region"));
            };
            if ka == kb {
                return Err(portal_error(
                    j,
                    format!("joins region {} to itself", a.index),
                ));
            }
            for (side, region) in [a, b].into_iter().enumerate() {
                let count = appearances[j][side];
                if count != 1 {
                    return Err(portal_error(
                        j,
                        format!("appears {count} times on region {}", region.index),
                    ));
                }
            }
            if a.component != b.component {
                return Err(portal_error(
                    j,
                    format!("joins components {} and {}", a.component, b.component),
                ));
            }
            if p.left == p.right {
                return Err(portal_error(j, "has zero width"));
            }
            if let Some(other) = seen.insert((a.index.min(b.index), a.index.max(b.index)), j as u32)
            {
                // two portals between the same regions are allowed only on different edges
                let q = by_index[other as usize];
                if q.left == p.left && q.right == p.right {
                    return Err(portal_error(j, format!("duplicates portal {other}")));
                }
            }
        }
        if data.stats.components > 0 {
            if let Some(r) = data
                .regions
                .values()
                .find(|r| r.component >= data.stats.components)
            {
                return Err(region_error(
                    r.index as usize,
                    format!(
                        "is in component {} of {}",
                        r.component, data.stats.components
                    ),
                ));
            }
        }
        let expected = data.stats.walkable_area;
        if expected > 0.0 && (total_area - expected).abs() > 1e-4 * expected.max(1.0) {
            return Err(ValidationError::WalkableArea {
                covered: total_area,
                expected,
            });
        }
        // the graph the search uses must be the portals
        if self.tables.portal_regions.len() != data.portals.len()
            || self.tables.region_keys.len() != data.regions.len()
        {
            return Err(ValidationError::Tables);
        }
        self.check_no_overlap()?;
        if let Some(h) = &data.hierarchy {
            h.check(&self.tables.portal_regions, data.regions.len())?;
            let zones = self.hier.open_zones.len();
            if zones > super::hierarchy::MAX_OPEN_ZONES {
                return Err(HierarchyError::new(
                    "clusters",
                    format!(
                        "{zones} open zones, more than {}",
                        super::hierarchy::MAX_OPEN_ZONES
                    ),
                )
                .into());
            }
        }
        Ok(())
    }

    /// Regions do not overlap: no two edges of the mesh (walls, and each
    /// portal once) cross, overlap or touch other than at shared ends, and
    /// no edge lies on another except two walls back to back (a sweep,
    /// O(n log n)); and, those found apart, no point is covered by two
    /// regions: with the portals checked to be edges of both their regions,
    /// the regions covering a point are the walls' winding number around it,
    /// which a second sweep bounds by 1 (`geometry::first_double_cover`,
    /// O(n log n) whatever the regions' shapes: it replaced a test of each
    /// corner against the regions the point locator lists near it, which a
    /// hub of thin regions made quadratic).
    fn check_no_overlap(&self) -> Result<(), ValidationError> {
        let data = &self.data;
        let mut edges = Vec::new();
        let mut owner = Vec::new(); // the region an edge is listed under
        for region in data.regions.values() {
            let v = &region.vertices;
            for k in 0..v.len() {
                if region.portals[k].is_none() {
                    edges.push((v[k].as_dvec2(), v[(k + 1) % v.len()].as_dvec2()));
                    owner.push(region.index as usize);
                }
            }
        }
        let walls = edges.len();
        for p in data.portals.values() {
            edges.push((p.right.as_dvec2(), p.left.as_dvec2()));
            owner.push(
                data.regions
                    .get(p.regions[0])
                    .map_or(0, |r| r.index as usize),
            );
        }
        // A wall may run along another wall the other way round (two regions
        // back to back, not joined); anything else on a portal, or on a
        // wall the same way round, is a region on top of another.
        let conflict = |i: usize, j: usize| {
            let ((a0, a1), (b0, b1)) = (edges[i], edges[j]);
            geometry::segments_conflict(a0, a1, b0, b1, i < walls && j < walls)
        };
        if let Some((i, j)) = geometry::first_conflict(&edges, conflict) {
            return Err(region_error(
                owner[i],
                format!(
                    "overlaps region {}: edges {:?} and {:?} cross",
                    owner[j], edges[i], edges[j]
                ),
            ));
        }
        // no edges cross: regions overlap only where the walls cover the
        // plane twice (the portals, each an edge of both its regions the
        // other way round, cancel out)
        if let Some((i, j)) = geometry::first_double_cover(&edges[..walls]) {
            let reason = if i == j {
                format!(
                    "does not enclose what it covers beside its wall {:?}",
                    edges[i]
                )
            } else {
                format!(
                    "overlaps region {}: walls {:?} and {:?} cover the plane twice between them",
                    owner[j], edges[i], edges[j]
                )
            };
            return Err(region_error(owner[i], reason));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use glam::{vec2, Vec2};

    use super::ValidationError;
    use crate::{BakeConfig, Level, NavMesh};

    /// Two unit-less islands: a 10 x 10 square at the origin and a second
    /// shape far to the right, each a single region without portals.
    fn islands(second: &str) -> NavMesh {
        let level = Level::from_json_str(&format!(
            r#"{{"walkable": [[[0,0],[10,0],[10,10],[0,10]], {second}]}}"#
        ))
        .unwrap();
        let config = BakeConfig {
            corridors: false,
            ..BakeConfig::default()
        };
        let mesh = NavMesh::bake(&level, &config).unwrap();
        mesh.validate().unwrap();
        mesh
    }

    /// The mesh with every region right of x = 50 moved by `shift`, its
    /// tables derived again as a loaded file's would be.
    fn moved(mesh: &NavMesh, shift: Vec2) -> NavMesh {
        let mut data = mesh.data.clone();
        for region in data.regions.values_mut() {
            if region.vertices.iter().all(|v| v.x > 50.0) {
                for v in &mut region.vertices {
                    *v += shift;
                }
            }
        }
        NavMesh::from_data(data)
    }

    /// Regression (hostile-input campaign): validate accepted overlapping
    /// regions, so a crafted file could stack any number of them (and the
    /// point locator listed each in every cell). Stacked, crossing and
    /// nested regions are now refused; regions that only touch are not.
    #[test]
    fn overlapping_regions_are_refused() {
        let square = islands("[[100,0],[110,0],[110,10],[100,10]]");
        let stacked = moved(&square, vec2(-100.0, 0.0));
        let crossing = moved(&square, vec2(-95.0, 5.0));
        let small = islands("[[102,2],[104,2],[104,4],[102,4]]");
        let nested = moved(&small, vec2(-100.0, 0.0));
        let touching = moved(&square, vec2(-90.0, 0.0));
        for (what, mesh) in [
            ("stacked", stacked),
            ("crossing", crossing),
            ("nested", nested),
        ] {
            let error = mesh.validate().expect_err(what);
            assert!(
                matches!(&error, ValidationError::Region { reason, .. }
                    if reason.contains("overlaps") || reason.contains("inside")),
                "{what}: {error}"
            );
        }
        touching
            .validate()
            .expect("side by side, sharing an edge without a portal");
    }

    /// The radii, agent classes, snapping grid and tiling a file records
    /// are checked on load: each broken one is refused, naming what.
    #[test]
    fn broken_sizes_and_grids_are_refused() {
        let mesh = islands("[[100,0],[110,0],[110,10],[100,10]]");
        let broken = |change: &dyn Fn(&mut super::super::MeshData)| {
            let mut data = mesh.data.clone();
            change(&mut data);
            NavMesh::from_data(data).validate()
        };
        let sizes =
            |error: Result<(), ValidationError>| matches!(error, Err(ValidationError::Sizes(_)));
        assert!(sizes(broken(&|d| d.max_radius = -1.0)));
        assert!(sizes(broken(&|d| d.max_radius = f32::NAN)));
        assert!(
            sizes(broken(&|d| d.agent_radius = 2.0)),
            "above the maximum"
        );
        assert!(sizes(broken(&|d| d.snap_scale = 3.0)));
        assert!(sizes(broken(&|d| d.snap_scale = f64::INFINITY)));
        assert!(sizes(broken(&|d| {
            d.agents.push(crate::AgentClass {
                name: "ghost".into(),
                radius: f32::NAN,
            })
        })));
        assert!(sizes(broken(&|d| {
            d.tiling = Some(super::super::TileGrid {
                size: 16.0,
                first: [0, 0],
                count: [0, 4],
            })
        })));
        let off_grid = broken(&|d| {
            let step = 1.0 / d.snap_scale as f32;
            let region = d.regions.values_mut().next().unwrap();
            region.vertices[0].x += step / 2.0;
        });
        assert!(
            matches!(&off_grid, Err(ValidationError::Region { reason, .. }) if reason.contains("snapping grid")),
            "{off_grid:?}"
        );
        // a file that lists no area kinds at all still derives wider meshes
        let mut data = mesh.data.clone();
        data.areas.clear();
        data.max_radius = 1.0;
        let bare = NavMesh::from_data(data);
        bare.validate().unwrap();
        assert!(bare.for_radius(1.0).is_ok());
    }
}
