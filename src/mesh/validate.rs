//! [`NavMesh::validate`]: every invariant the runtime relies on.

use std::collections::HashMap;

use super::NavMesh;
use crate::geometry;

/// Slack for convexity and area checks, in square world units per unit of
/// edge length: f32 vertices of a region merged in f64 may bend inward by
/// rounding, never by more than this.
const CONVEX_EPS: f32 = 1e-3;

/// An invariant of a [`NavMesh`] that does not hold.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("mesh invariant broken: {0}")]
pub struct ValidationError(pub String);

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
        let err = |s: String| Err(ValidationError(s));
        let data = &self.data;
        let mut total_area = 0.0f64;
        for (i, (key, region)) in data.regions.iter().enumerate() {
            if region.index as usize != i {
                return err(format!("region {i} carries index {}", region.index));
            }
            let n = region.vertices.len();
            if n < 3 || region.portals.len() != n {
                return err(format!(
                    "region {i} has {n} vertices and {} edge slots",
                    region.portals.len()
                ));
            }
            if region.vertices.iter().any(|v| !v.is_finite()) {
                return err(format!("region {i} has a non-finite vertex"));
            }
            let area = region.area_size();
            if area <= 0.0 {
                return err(format!("region {i} is not counter-clockwise (area {area})"));
            }
            total_area += area;
            for k in 0..n {
                let a = region.vertices[k];
                let b = region.vertices[(k + 1) % n];
                let c = region.vertices[(k + 2) % n];
                let turn = geometry::orient(a, b, c);
                if turn < -CONVEX_EPS * (b - a).length().max((c - b).length()).max(1.0) {
                    return err(format!(
                        "region {i} is not convex at vertex {}",
                        (k + 1) % n
                    ));
                }
            }
            if region.area as usize >= data.areas.len().max(1) {
                return err(format!(
                    "region {i} has area kind {} of {}",
                    region.area,
                    data.areas.len()
                ));
            }
            for (k, portal) in region.portals.iter().enumerate() {
                let Some(pid) = portal else { continue };
                let Some(p) = data.portals.get(*pid) else {
                    return err(format!("region {i} edge {k} names a missing portal"));
                };
                if !p.regions.contains(&key) {
                    return err(format!(
                        "region {i} edge {k} names portal {} that does not touch it",
                        p.index
                    ));
                }
                // the edge must be the portal seen from this region's side
                let (l, r) = if p.regions[0] == key {
                    (p.left, p.right)
                } else {
                    (p.right, p.left)
                };
                if region.vertices[k] != r || region.vertices[(k + 1) % n] != l {
                    return err(format!(
                        "region {i} edge {k} does not match the ends of portal {}",
                        p.index
                    ));
                }
            }
        }
        let mut seen: HashMap<(u32, u32), u32> = HashMap::new();
        for (j, (pkey, p)) in data.portals.iter().enumerate() {
            if p.index as usize != j {
                return err(format!("portal {j} carries index {}", p.index));
            }
            let [ka, kb] = p.regions;
            let (Some(a), Some(b)) = (data.regions.get(ka), data.regions.get(kb)) else {
                return err(format!("portal {j} names a missing region"));
            };
            if ka == kb {
                return err(format!("portal {j} joins region {} to itself", a.index));
            }
            for region in [a, b] {
                let count = region.portals.iter().filter(|&&q| q == Some(pkey)).count();
                if count != 1 {
                    return err(format!(
                        "portal {j} appears {count} times on region {}",
                        region.index
                    ));
                }
            }
            if a.component != b.component {
                return err(format!(
                    "portal {j} joins components {} and {}",
                    a.component, b.component
                ));
            }
            if p.left == p.right {
                return err(format!("portal {j} has zero width"));
            }
            if let Some(other) = seen.insert((a.index.min(b.index), a.index.max(b.index)), j as u32)
            {
                // two portals between the same regions are allowed only on different edges
                let q = &data.portals.values().nth(other as usize);
                if q.is_some_and(|q| q.left == p.left && q.right == p.right) {
                    return err(format!("portals {other} and {j} duplicate one edge"));
                }
            }
        }
        if data.stats.components > 0 {
            if let Some(r) = data
                .regions
                .values()
                .find(|r| r.component >= data.stats.components)
            {
                return err(format!(
                    "region {} is in component {} of {}",
                    r.index, r.component, data.stats.components
                ));
            }
        }
        let expected = data.stats.walkable_area;
        if expected > 0.0 && (total_area - expected).abs() > 1e-4 * expected.max(1.0) {
            return err(format!(
                "regions cover {total_area} but the walkable area is {expected}"
            ));
        }
        // the graph the search uses must be the portals
        if self.tables.portal_regions.len() != data.portals.len()
            || self.tables.region_keys.len() != data.regions.len()
        {
            return err("search tables out of date".to_string());
        }
        if let Some(h) = &data.hierarchy {
            h.check(&self.tables.portal_regions, data.regions.len())
                .map_err(ValidationError)?;
        }
        Ok(())
    }
}
