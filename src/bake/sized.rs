//! Meshes for wider agents, derived from a baked mesh: its walkable space
//! (the union of its regions) eroded by the extra radius on the grid the bake
//! snapped to, then triangulated, merged and assembled as a bake does. The
//! result is the mesh a bake of the level for that radius gives: the same
//! outline goes through the same steps.

use std::sync::Arc;
use std::time::Instant;

use i_overlay::core::fill_rule::FillRule;
use i_overlay::core::overlay_rule::OverlayRule;

use super::outline::{Contours, Grid};
use super::tiles::TiledDerivation;
use super::{
    assemble, finish, in_curve_order, merged_polygons, regions_by_kind, AssemblyScratch, BakeConfig,
};
use crate::error::{BakeError, RadiusError};
use crate::level::Level;
use crate::mesh::{NavMesh, Sized, SizedMesh, SizedSlot};

/// Most meshes for other radii a mesh keeps derived at once; asking for one
/// more forgets the one asked for first (holders of its `Arc` keep it).
pub const MAX_DERIVED_RADII: usize = 8;

impl NavMesh {
    /// The mesh for agents of `radius` (world units): walkable space shrunk
    /// so that a unit's centre anywhere on it keeps its body at least
    /// `radius` from every wall and obstacle. Query it as any mesh: paths,
    /// rays, nearest points, group moves, followers and schedulers on it all
    /// serve that radius.
    ///
    /// The radius of the mesh itself gives the mesh ([`SizedMesh::Baked`],
    /// whether this mesh was baked or derived). Any other, up to
    /// [`NavMesh::max_radius`], is derived on first use (it costs about a bake
    /// of the level, see BENCHMARKS.md; ask at load time for the radii a
    /// game uses) and kept, up to [`MAX_DERIVED_RADII`] of them; deriving
    /// holds back only callers asking for the same radius. From a radius-0
    /// mesh baked whole with the default hierarchy settings, a derived mesh
    /// is the one [`NavMesh::bake`] gives for the level at that radius, with
    /// the hierarchy when this mesh has one: the same bytes when saved,
    /// except where a costed area's edge crosses a wall off the snapping
    /// grid (there the area's outline may differ by a grid step). A mesh
    /// baked in tiles derives tile by tile, and a [`crate::TileCache`] edit
    /// carries every derived radius to the edited mesh. Area kinds are this
    /// mesh's, so a [`crate::QueryFilter`] means the same on both.
    ///
    /// # Errors
    /// [`RadiusError::Invalid`] for a NaN, infinite or negative radius,
    /// [`RadiusError::BelowBaked`] under [`NavMesh::agent_radius`],
    /// [`RadiusError::AboveMaximum`] over [`NavMesh::max_radius`], and
    /// [`RadiusError::Bake`] when no walkable space is left for such a unit.
    ///
    /// # Example
    /// ```
    /// use portalnav::{BakeConfig, Level, NavMesh, NavQuery, QueryFilter};
    ///
    /// // a room with a 2-unit doorway in a wall
    /// let level = Level::from_json_str(r#"{
    ///     "walkable": [[[0,0],[20,0],[20,10],[0,10]]],
    ///     "obstacles": [[[9,0],[11,0],[11,4],[9,4]], [[9,6],[11,6],[11,10],[9,10]]]
    /// }"#)?;
    /// let config = BakeConfig { max_radius: Some(1.5), ..BakeConfig::default() };
    /// let mesh = NavMesh::bake(&level, &config)?;
    /// let (a, b) = (glam::vec2(3.0, 5.0), glam::vec2(17.0, 5.0));
    /// let mut query = NavQuery::new();
    ///
    /// let small = mesh.for_radius(0.5)?;
    /// assert!(query.find_path(&small, a, b, &QueryFilter::default()).is_ok());
    /// let large = mesh.for_radius(1.25)?;
    /// assert!(query.find_path(&large, a, b, &QueryFilter::default()).is_err(), "the doorway is too narrow");
    /// assert!(mesh.for_radius(2.0).is_err(), "above the maximum");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn for_radius(&self, radius: f32) -> Result<SizedMesh<'_>, RadiusError> {
        if !(radius.is_finite() && radius >= 0.0) {
            return Err(RadiusError::Invalid { radius });
        }
        let baked = self.data.agent_radius;
        if radius < baked {
            return Err(RadiusError::BelowBaked { radius, baked });
        }
        let max = self.data.max_radius;
        if radius > max {
            return Err(RadiusError::AboveMaximum { radius, max });
        }
        if radius == baked {
            return Ok(SizedMesh::Baked(self));
        }
        let bits = radius.to_bits();
        let lock = || {
            self.sized
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        let slot = {
            let mut slots = lock();
            match slots.iter().find(|(b, _)| *b == bits) {
                Some((_, slot)) => Arc::clone(slot),
                None => {
                    if slots.len() == MAX_DERIVED_RADII {
                        slots.remove(0);
                    }
                    let slot = SizedSlot::default();
                    slots.push((bits, Arc::clone(&slot)));
                    slot
                }
            }
        };
        // derived outside the list's lock: one caller derives, the others
        // asking for the same radius wait for it
        let mut failure = None;
        let sized = slot.get_or_init(|| {
            derive_sized(self, radius)
                .map_err(|error| failure = Some(error))
                .ok()
        });
        match sized {
            Some(sized) => Ok(SizedMesh::Derived(Arc::clone(&sized.mesh))),
            None => {
                // forget the failure, so that asking again tries again
                lock().retain(|(_, s)| !Arc::ptr_eq(s, &slot));
                match failure {
                    Some(error) => Err(RadiusError::Bake { radius, error }),
                    // another caller's derivation failed: derive to say why
                    None => self.for_radius(radius),
                }
            }
        }
    }

    /// The mesh for an agent class of the level this mesh was baked from
    /// ([`NavMesh::agents`]), as [`NavMesh::for_radius`] with its radius.
    ///
    /// # Errors
    /// [`RadiusError::UnknownAgent`] for a name the level does not define,
    /// otherwise as [`NavMesh::for_radius`].
    pub fn for_agent(&self, name: &str) -> Result<SizedMesh<'_>, RadiusError> {
        let class = self
            .data
            .agents
            .iter()
            .find(|a| a.name == name)
            .ok_or_else(|| RadiusError::UnknownAgent(name.to_string()))?;
        self.for_radius(class.radius)
    }
}

/// The mesh for `radius` (above `base`'s own), tile by tile for a tiled
/// mesh, with its tiles.
fn derive_sized(base: &NavMesh, radius: f32) -> Result<Sized, BakeError> {
    Ok(match TiledDerivation::new(base, radius) {
        Some(tiled) => {
            let (mesh, tiles) = tiled.derive(radius, None)?;
            Sized {
                mesh: Arc::new(mesh),
                tiles: Some(Arc::new(tiles)),
            }
        }
        None => Sized {
            mesh: Arc::new(derive(base, radius)?),
            tiles: None,
        },
    })
}

/// The mesh a bake of `base`'s level gives for `radius` (above the base's
/// own), for a mesh baked whole.
fn derive(base: &NavMesh, radius: f32) -> Result<NavMesh, BakeError> {
    let started = Instant::now();
    let data = &base.data;
    let grid = Grid::with_scale(data.snap_scale);
    // walkable space and each area kind's part of it, as the regions give them
    let kinds = regions_by_kind(base, None);
    let walkable: Contours = kinds.iter().flatten().cloned().collect();
    let shapes = grid.overlay(&walkable, &[], OverlayRule::Subject, FillRule::NonZero);
    let shapes = grid.erode(shapes, radius - data.agent_radius);
    if shapes.is_empty() {
        return Err(BakeError::NothingWalkable { radius });
    }
    let costed = kinds.into_iter().enumerate().skip(1);
    let outline = grid.outline(shapes, costed.filter(|(_, c)| !c.is_empty()));
    let (tri, mut polygons) = merged_polygons(&outline)?;
    if tri.tris.is_empty() {
        return Err(BakeError::NothingWalkable { radius });
    }
    in_curve_order(&tri.points, &mut polygons);
    let (mut derived, linked) = assemble(
        &tri.points,
        &polygons,
        (data.areas.clone(), data.key_generation()),
        &mut AssemblyScratch::default(),
    );
    derived.stats.triangles = tri.tris.len() as u32;
    derived.stats.dropped_constraints = tri.dropped;
    derived.stats.walkable_area = tri.walkable_area;
    derived.snap_scale = data.snap_scale;
    let (level, config) = finishing(base, radius);
    finish((derived, linked), &level, &config, (radius, started), None)
}

/// What finishing a mesh derived from `base` for `radius` reads: the
/// level's name, nav points and agent classes, and a config that builds a
/// hierarchy when the base has one (its cluster size, the default wide
/// portal and byte bound) and serves the base's maximum radius.
pub(super) fn finishing(base: &NavMesh, radius: f32) -> (Level, BakeConfig) {
    let data = &base.data;
    let h = data.hierarchy.as_ref();
    let config = BakeConfig {
        agent_radius: radius,
        corridors: h.is_some(),
        cluster_size: h.map_or(super::DEFAULT_CLUSTER_SIZE, |h| h.cluster_size),
        max_radius: Some(data.max_radius),
        ..BakeConfig::default()
    };
    let level = Level {
        name: data.name.clone(),
        nav_points: data.nav_points.clone(),
        agents: data.agents.clone(),
        ..Level::default()
    };
    (level, config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_radius_outside_what_the_mesh_serves_is_a_typed_error() {
        let level = Level::from_json_str(
            r#"{"walkable": [[[0,0],[10,0],[10,10],[0,10]]],
                "agents": [{"name": "tank", "radius": 1.5}]}"#,
        )
        .unwrap();
        let mesh = NavMesh::bake(&level, &BakeConfig::default()).unwrap();
        assert_eq!(mesh.max_radius(), 1.5, "the largest class by default");
        for bad in [f32::NAN, f32::INFINITY, -0.5] {
            assert!(
                matches!(mesh.for_radius(bad), Err(RadiusError::Invalid { .. })),
                "{bad}"
            );
        }
        assert!(matches!(
            mesh.for_radius(1.6),
            Err(RadiusError::AboveMaximum { max, .. }) if max == 1.5
        ));
        assert!(matches!(
            mesh.for_agent("titan"),
            Err(RadiusError::UnknownAgent(_))
        ));
        let tank = mesh.for_agent("tank").unwrap();
        assert_eq!(tank.agent_radius(), 1.5);
        assert!(matches!(
            tank.for_radius(1.0),
            Err(RadiusError::BelowBaked { baked, .. }) if baked == 1.5
        ));
        // asked again: the same mesh, not a second derivation
        let again = mesh.for_agent("tank").unwrap();
        assert!(std::ptr::eq(&*tank, &*again));
        assert!(std::ptr::eq(&*mesh.for_radius(0.0).unwrap(), &mesh));
    }
}
