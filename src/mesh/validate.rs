//! [`NavMesh::validate`]: every invariant the runtime relies on.

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
            if region.vertices.iter().any(|v| !v.is_finite()) {
                return Err(region_error(i, "has a non-finite vertex"));
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
        if let Some(h) = &data.hierarchy {
            h.check(&self.tables.portal_regions, data.regions.len())?;
        }
        Ok(())
    }
}
