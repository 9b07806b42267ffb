//! Arrival slots: distinct goal points spread around one target, so a
//! group sent there stands around it instead of piling onto one point
//! ([`NavQuery::arrival_slots`], [`NavQuery::find_paths_to_slots`]).
//!
//! The slots are points of a hexagonal lattice through the target, `spacing`
//! apart. They grow from the target like a puddle: the frontier point
//! nearest the target is taken next if the straight step to it from the
//! taken neighbour that offered it is clear (a ray walk over the regions,
//! honouring the filter's areas). So every slot is joined to the target by a
//! chain of clear steps, a wall splits the puddle instead of being jumped,
//! and in open ground the slots fill a disc. The chain's crossings are kept:
//! a unit's path to its slot is its path to the target with the chain
//! appended, pulled taut as one corridor.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use glam::{vec2, Vec2};
use ordered_float::OrderedFloat;

use super::{NavQuery, Path, PathStatus, QueryFilter};
use crate::error::QueryError;
use crate::fxmap::FxHashMap;
use crate::mesh::NavMesh;

/// The six neighbours of a lattice point, in lattice steps.
const HEX: [(i32, i32); 6] = [(1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1)];

/// A taken slot: where it is, its dense region, the slot whose step reached
/// it (itself for the target), and the crossings of that step in
/// [`Slots::crossings`].
#[derive(Debug, Clone, Copy)]
struct Slot {
    at: Vec2,
    region: u32,
    parent: u32,
    first: u32,
    len: u32,
}

/// A lattice point offered by a taken slot: (distance to the target,
/// lattice point, index of the slot).
type Offer = (OrderedFloat<f32>, (i32, i32), u32);

/// Scratch for growing slots, kept in the [`NavQuery`].
#[derive(Debug, Clone, Default)]
pub(super) struct Slots {
    taken: Vec<Slot>,
    crossings: Vec<u32>,
    /// Lattice point -> index in `taken`, for points taken.
    index: FxHashMap<(i32, i32), u32>,
    frontier: BinaryHeap<Reverse<Offer>>,
    /// A chain of slots walked back to the target.
    chain: Vec<u32>,
}

impl NavQuery {
    /// Up to `count` distinct walkable points around `target`, `spacing`
    /// apart on a hexagonal lattice through it, nearest first; the first is
    /// `target` itself (snapped onto the mesh if the filter allows). Each is
    /// joined to the target by straight clear steps between slots (see the
    /// module docs), so none is behind a wall from the others, and none is
    /// in an area the filter excludes. Fewer than `count` come back only
    /// when the target's pocket of walkable space holds no more. The cost
    /// grows with `count` (six short ray walks per slot at most).
    ///
    /// # Errors
    /// The target's errors as for [`NavQuery::find_path`]'s goal, and
    /// [`QueryError::BadSpacing`] for a spacing that is not finite, not
    /// positive, or too small to keep points distinct at the target's
    /// coordinates.
    ///
    /// # Example
    /// ```
    /// use glam::vec2;
    /// use portalnav::{BakeConfig, Level, NavMesh, NavQuery, QueryFilter};
    ///
    /// let level = Level::from_json_str(r#"{"walkable": [[[0,0],[40,0],[40,40],[0,40]]]}"#)?;
    /// let mesh = NavMesh::bake(&level, &BakeConfig::default())?;
    /// let mut query = NavQuery::new();
    /// let slots = query.arrival_slots(&mesh, vec2(20.0, 20.0), 7, 1.5, &QueryFilter::default())?;
    /// assert_eq!(slots.len(), 7);
    /// assert_eq!(slots[0], vec2(20.0, 20.0));
    /// for (i, a) in slots.iter().enumerate() {
    ///     for b in &slots[i + 1..] {
    ///         assert!(a.distance(*b) >= 1.5 - 1e-4);
    ///     }
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn arrival_slots(
        &mut self,
        mesh: &NavMesh,
        target: Vec2,
        count: usize,
        spacing: f32,
        filter: &QueryFilter,
    ) -> Result<Vec<Vec2>, QueryError> {
        self.grow_slots(mesh, target, count, spacing, filter)?;
        Ok(self.slots.taken.iter().map(|s| s.at).collect())
    }

    /// Paths from every start in `starts` to its own arrival slot around
    /// `target` ([`NavQuery::arrival_slots`], `spacing` apart), in order.
    /// Each unit's path is its [`NavQuery::find_paths_to`] path to `target`
    /// with the slot's chain of steps appended and pulled taut as one
    /// corridor; the path ends at the slot (its last waypoint). Units whose
    /// path to the target is shorter take the slots nearer the target. When
    /// the target's pocket holds fewer slots than there are units, slots are
    /// handed out again from the nearest. Units without a complete path to
    /// the target keep that answer.
    ///
    /// # Example
    /// ```
    /// use glam::vec2;
    /// use portalnav::{BakeConfig, Level, NavMesh, NavQuery, QueryFilter};
    ///
    /// let level = Level::from_json_str(r#"{"walkable": [[[0,0],[40,0],[40,40],[0,40]]],
    ///     "obstacles": [[[15,15],[25,15],[25,25],[15,25]]]}"#)?;
    /// let mesh = NavMesh::bake(&level, &BakeConfig::default())?;
    /// let mut query = NavQuery::new();
    /// let army: Vec<_> = (0..20).map(|i| vec2(2.0 + i as f32, 2.0)).collect();
    /// let filter = QueryFilter::default();
    /// let paths = query.find_paths_to_slots(&mesh, &army, vec2(35.0, 35.0), 1.0, &filter);
    /// let ends: Vec<_> = paths.iter().map(|p| *p.as_ref().unwrap().waypoints().last().unwrap()).collect();
    /// for (i, a) in ends.iter().enumerate() {
    ///     assert!(ends[i + 1..].iter().all(|b| a.distance(*b) >= 1.0 - 1e-4));
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn find_paths_to_slots(
        &mut self,
        mesh: &NavMesh,
        starts: &[Vec2],
        target: Vec2,
        spacing: f32,
        filter: &QueryFilter,
    ) -> Vec<Result<Path, QueryError>> {
        let mut out = self.find_paths_to(mesh, starts, target, filter);
        let complete = |r: &Result<Path, QueryError>| {
            r.as_ref()
                .ok()
                .filter(|p| p.status() == PathStatus::Complete)
                .map(Path::length)
        };
        let mut order: Vec<(f32, usize)> = out
            .iter()
            .enumerate()
            .filter_map(|(i, r)| Some((complete(r)?, i)))
            .collect();
        if order.is_empty() {
            return out;
        }
        if let Err(e) = self.grow_slots(mesh, target, order.len(), spacing, filter) {
            for i in order.iter().map(|&(_, i)| i) {
                out[i] = Err(e.clone());
            }
            return out;
        }
        order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let slots = self.slots.taken.len();
        for (n, &(_, i)) in order.iter().enumerate() {
            if let Ok(path) = &mut out[i] {
                self.extend_to_slot(mesh, path, n % slots);
            }
        }
        out
    }

    /// Grows `count` slots around `target` into `self.slots`.
    fn grow_slots(
        &mut self,
        mesh: &NavMesh,
        target: Vec2,
        count: usize,
        spacing: f32,
        filter: &QueryFilter,
    ) -> Result<(), QueryError> {
        let (at, region) = self.resolve(mesh, target, "goal", filter.snap_distance)?;
        // lattice points must stay distinct in f32 at the target's coordinates
        let ulp = at.abs().max_element().max(1.0) * f32::EPSILON;
        if !spacing.is_finite() || spacing <= 64.0 * ulp {
            return Err(QueryError::BadSpacing { spacing });
        }
        let s = &mut self.slots;
        s.taken.clear();
        s.crossings.clear();
        s.index.clear();
        s.frontier.clear();
        if count == 0 {
            return Ok(());
        }
        let (du, dv) = (vec2(spacing, 0.0), vec2(0.5, 3f32.sqrt() * 0.5) * spacing);
        let point = |(i, j): (i32, i32)| at + du * i as f32 + dv * j as f32;
        s.taken.push(Slot {
            at,
            region,
            parent: 0,
            first: 0,
            len: 0,
        });
        s.index.insert((0, 0), 0);
        offer(s, (0, 0), 0, &point);
        while self.slots.taken.len() < count {
            let Some(Reverse((_, lattice, from))) = self.slots.frontier.pop() else {
                break; // the pocket is full
            };
            if self.slots.index.contains_key(&lattice) {
                continue;
            }
            let (to, parent) = (point(lattice), self.slots.taken[from as usize]);
            self.crossings.clear();
            let Ok(end) = self.walk_segment(mesh, parent.region, parent.at, to, true) else {
                continue; // a wall between: another neighbour may reach it
            };
            let t = &mesh.tables;
            let allowed = |&c: &u32| t.allowed(t.entered(c), filter.excluded_areas);
            if !self.crossings.iter().all(allowed) {
                continue;
            }
            let s = &mut self.slots;
            let k = s.taken.len() as u32;
            s.taken.push(Slot {
                at: to,
                region: end,
                parent: from,
                first: s.crossings.len() as u32,
                len: self.crossings.len() as u32,
            });
            s.crossings.extend_from_slice(&self.crossings);
            s.index.insert(lattice, k);
            offer(s, lattice, k, &point);
        }
        Ok(())
    }

    /// Extends `path`, a complete path to the slots' target, to slot `k`.
    fn extend_to_slot(&mut self, mesh: &NavMesh, path: &mut Path, k: usize) {
        let t = &mesh.tables;
        let Some(&start) = path.waypoints.first() else {
            return;
        };
        let mut dense = path
            .corridor
            .iter()
            .filter_map(|&key| mesh.data.regions.get(key).map(|r| r.index));
        let Some(start_region) = dense.next() else {
            return;
        };
        self.crossings.clear();
        let mut from = start_region;
        for r in dense {
            let Some(c) = t.crossing_between(from, r) else {
                return; // not a corridor of this mesh: leave the path alone
            };
            self.crossings.push(c);
            from = r;
        }
        // the slot's chain of steps, from the target out
        let s = &mut self.slots;
        s.chain.clear();
        let mut at = k as u32;
        while at != 0 {
            s.chain.push(at);
            at = s.taken[at as usize].parent;
        }
        for &step in s.chain.iter().rev() {
            let slot = s.taken[step as usize];
            let range = slot.first as usize..(slot.first + slot.len) as usize;
            self.crossings.extend_from_slice(&s.crossings[range]);
        }
        let (end, level) = (s.taken[k].at, path.level);
        self.path_along_crossings(mesh, start_region, start, end, PathStatus::Complete, path);
        path.level = level;
    }
}

/// Offers the lattice neighbours of slot `k` (at `lattice`) not yet taken.
fn offer(s: &mut Slots, lattice: (i32, i32), k: u32, point: &dyn Fn((i32, i32)) -> Vec2) {
    let centre = point((0, 0));
    for (di, dj) in HEX {
        let next = (lattice.0.saturating_add(di), lattice.1.saturating_add(dj));
        if !s.index.contains_key(&next) {
            let d = point(next).distance(centre);
            s.frontier.push(Reverse((OrderedFloat(d), next, k)));
        }
    }
}
