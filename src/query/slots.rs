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
use slotmap::Key;

use super::{NavQuery, Path, PathStatus, QueryFilter};
use crate::error::QueryError;
use crate::fxmap::FxHashMap;
use crate::geometry::{committed_corners_while, pull_corners_while, push_point};
use crate::mesh::{NavMesh, RegionId};

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
    /// The crossings of a slot's chain of steps, from the target out.
    tail: Vec<u32>,
    /// The chain's regions walked back from the slot with its loops cut:
    /// (region, dense region, crossing forward into the one before it).
    kept: Vec<(RegionId, u32, u32)>,
    /// Portals walked back from a slot: its chain's, then the corridor's.
    back: Vec<[Vec2; 2]>,
    /// Corners of a path pulled back from a slot, nearest the slot first.
    found: Vec<Vec2>,
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

    /// Extends `path`, a complete path to the slots' target, to slot `k`:
    /// the taut path along its corridor with the slot's chain of steps
    /// appended, pulled back from the slot until it meets a corner of the
    /// path to the target ([`NavQuery::extend_from_corner`]); a path the
    /// mesh does not know is left to [`NavQuery::extend_along_corridor`],
    /// which leaves it alone.
    fn extend_to_slot(&mut self, mesh: &NavMesh, path: &mut Path, k: usize) {
        self.slots.chain_to(k);
        if !self.extend_from_corner(mesh, path, k) {
            self.extend_along_corridor(mesh, path, k);
        }
    }

    /// [`NavQuery::extend_to_slot`] by the end of the corridor alone. The new
    /// corridor is the old one with the chain's regions appended, its
    /// loops cut walking back from the slot as `corridor_without_loops`
    /// cuts them: it follows the old corridor up to some region and the
    /// chain from there. The funnel runs back from the slot over the new
    /// corridor's portals, a few regions at a time, until it commits a
    /// corner of the path to the target that is an end of one of the old
    /// corridor's portals it walked. That corner is on the new taut path (a
    /// committed corner stays whatever portals come after), and the new
    /// path's part before it is the old one's (the taut path to a point of
    /// a corridor stays in the regions up to the first that holds it, which
    /// both corridors share), so the path is the old one up to that corner
    /// and the corners pulled back from the slot after it: the path pulling
    /// the whole corridor gives, for the funnel over the corridor's end
    /// only. A walk that reaches the start without meeting a corner (a
    /// straight path to the target has none) pulls the path from the slot
    /// to the start. False, with `path` untouched, only for a path that is
    /// not one of this mesh's (a region or portal it names is gone).
    fn extend_from_corner(&mut self, mesh: &NavMesh, path: &mut Path, k: usize) -> bool {
        let t = &mesh.tables;
        let s = &mut self.slots;
        if k == 0 {
            return true; // the target's own slot: the path is already there
        }
        let n = path.waypoints.len();
        if n < 2 || path.corridor.is_empty() {
            return false;
        }
        // a region's bit in a 64-bit filter of the chain's regions
        let bit = |key: RegionId| 1u64 << (key.data().as_ffi() % 64);
        // the chain walked back from the slot, loops cut: each region kept
        // with the crossing forward into the one kept before it
        s.kept.clear();
        let mut filter = 0;
        for i in (0..s.tail.len()).rev() {
            let region = t.entered(s.tail[i]);
            let key = t.region_keys[region as usize];
            match s.kept.iter().position(|e| e.0 == key) {
                Some(p) => s.kept.truncate(p + 1),
                None => {
                    let forward = s.tail.get(i + 1).copied().unwrap_or(NO_CROSSING);
                    s.kept.push((key, region, forward));
                    filter |= bit(key);
                }
            }
        }
        // then the corridor from the target back: a region the chain kept
        // cuts the loop there (the last such cut, the nearest the start, holds)
        let mut cut = None;
        for (i, &key) in path.corridor.iter().enumerate().rev() {
            if filter & bit(key) != 0 {
                if let Some(p) = s.kept.iter().position(|e| e.0 == key) {
                    s.kept.truncate(p + 1);
                    cut = Some(i);
                }
            }
        }
        let dense = |key: RegionId| mesh.data.dense_index(key);
        // the portals walked back from the slot over the chain's part
        s.back.clear();
        s.back.extend(
            s.kept
                .iter()
                .skip(1)
                .map(|&(_, _, forward)| t.crossing_ends(forward ^ 1)),
        );
        // where the walk goes on along the old corridor: `corridor[..=last]`
        let (last, mut region) = match (cut, s.kept.last()) {
            (Some(i), Some(&(_, region, _))) => (i, region),
            (Some(_), None) => return false, // a cut is at a region kept
            (None, _) => {
                let last = path.corridor.len() - 1;
                let Some(target) = dense(path.corridor[last]) else {
                    return false;
                };
                // out of the target region into the chain's first kept region
                if let Some(&first) = s.tail.first() {
                    s.back.push(t.crossing_ends(first ^ 1));
                }
                (last, target)
            }
        };
        let chain_portals = s.back.len();
        let corners = &path.waypoints[1..n - 1];
        let slot = s.taken[k].at;
        // the corridor's regions still to walk back over: `corridor[..next]`
        let mut next = last;
        let mut chunk = SLOT_BACK_REGIONS;
        loop {
            let stop = next.saturating_sub(chunk);
            while next > stop {
                let Some(before) = dense(path.corridor[next - 1]) else {
                    return false;
                };
                let Some(x) = t.crossing_between(before, region) else {
                    return false;
                };
                s.back.push(t.crossing_ends(x ^ 1));
                (region, next) = (before, next - 1);
            }
            // walked to the start, the funnel knows its goal and gives every
            // corner; before that, those the portals so far commit
            let whole = next == 0;
            s.found.clear();
            let (back, found, mut met) = (&s.back, &mut s.found, None);
            // a corner of the old path on a portal of the old corridor walked
            let on_old = |p: Vec2| back[chain_portals..].iter().any(|e| e[0] == p || e[1] == p);
            let corner = |p: Vec2| match corners.iter().rposition(|&c| c == p) {
                Some(j) if on_old(p) => {
                    met = Some(j);
                    false
                }
                _ => {
                    found.push(p);
                    true
                }
            };
            if whole {
                pull_corners_while(slot, path.waypoints[0], back, corner);
            } else {
                committed_corners_while(slot, back, corner);
            }
            if met.is_some() || whole {
                // the start and the old corners up to the one met (none if
                // no corner was met), then the corners out to the slot
                path.waypoints.truncate(met.map_or(1, |j| j + 2));
                path.waypoints.extend(s.found.iter().rev());
                push_point(&mut path.waypoints, slot);
                // the old corridor up to the cut, then the chain's kept regions
                let chain = s.kept.len() - usize::from(cut.is_some());
                path.corridor.truncate(last + 1);
                path.corridor
                    .extend(s.kept[..chain].iter().rev().map(|e| e.0));
                path.finish(PathStatus::Complete);
                return true;
            }
            chunk *= 4;
        }
    }

    /// [`NavQuery::extend_to_slot`] by pulling the whole corridor: the
    /// path's regions as crossings, the chain's appended, loops cut.
    fn extend_along_corridor(&mut self, mesh: &NavMesh, path: &mut Path, k: usize) {
        let t = &mesh.tables;
        let Some(&start) = path.waypoints.first() else {
            return;
        };
        let mut dense = path
            .corridor
            .iter()
            .filter_map(|&key| mesh.data.dense_index(key));
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
        self.crossings.extend_from_slice(&self.slots.tail);
        let (end, level) = (self.slots.taken[k].at, path.level);
        self.path_along_crossings(mesh, start_region, start, end, PathStatus::Complete, path);
        path.level = level;
    }
}

/// Regions of a path's corridor [`NavQuery::extend_from_corner`] walks back
/// over before it first looks for a corner (four times as many each time
/// after). Speed only: any count gives the same path.
const SLOT_BACK_REGIONS: usize = 16;

impl Slots {
    /// The crossings of the chain of steps from the target out to slot `k`,
    /// into `self.tail`.
    fn chain_to(&mut self, k: usize) {
        self.chain.clear();
        let mut at = k as u32;
        while at != 0 {
            self.chain.push(at);
            at = self.taken[at as usize].parent;
        }
        self.tail.clear();
        for &step in self.chain.iter().rev() {
            let slot = self.taken[step as usize];
            let range = slot.first as usize..(slot.first + slot.len) as usize;
            self.tail.extend_from_slice(&self.crossings[range]);
        }
    }
}

/// No crossing: the forward crossing of the slot's own region.
const NO_CROSSING: u32 = u32::MAX;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BakeConfig;

    /// Pulling back from the slot to a corner of the path to the target
    /// gives what pulling the whole corridor gives (the same corridor and
    /// length; where the path runs along a straight wall, the wall's
    /// corners it names may differ), on Aurora's units sent to slots
    /// around a scenario's goal; every unit takes that way, those with a
    /// straight path to the target and those whose slot cuts a loop too.
    #[test]
    fn a_slot_path_pulled_back_to_a_corner_is_the_whole_corridor_pulled() {
        let level = crate::test_data::bundled_level("maps/Aurora.map");
        let mesh = NavMesh::bake(&level, &BakeConfig::default()).expect("bakes");
        let scen = crate::Scenario::load_file(crate::test_data::bundled("maps/Aurora.map.scen"))
            .expect("scenarios");
        let target = scen[scen.len() - 1].goal_point();
        let starts: Vec<_> = scen.iter().take(1000).map(|s| s.start_point()).collect();
        let filter = QueryFilter::default();
        let mut q = NavQuery::new();
        let paths = q.find_paths_to(&mesh, &starts, target, &filter);
        q.grow_slots(&mesh, target, paths.len(), 1.0, &filter)
            .expect("slots");
        let (mut fast, mut same_points, mut cut, mut straight) = (0, 0, 0, 0);
        for (n, path) in paths.iter().enumerate() {
            let Ok(path) = path else { continue };
            let k = n % q.slots.taken.len();
            // both ways, each from the path to the target
            q.slots.chain_to(k);
            let mut whole = path.clone();
            q.extend_along_corridor(&mesh, &mut whole, k);
            let mut back = path.clone();
            if !q.extend_from_corner(&mesh, &mut back, k) {
                continue;
            }
            fast += 1;
            assert_eq!(back.corridor(), whole.corridor(), "unit {n}");
            let (a, b) = (back.length(), whole.length());
            assert!((a - b).abs() <= 1e-5 * b, "unit {n}: {a} against {b}");
            assert_eq!(back.waypoints().last(), Some(&q.slots.taken[k].at));
            same_points += usize::from(back.waypoints() == whole.waypoints());
            // the chain came back into the corridor and cut a loop
            cut += usize::from(!back.corridor().starts_with(path.corridor()));
            // no corner to meet: pulled from the slot to the start
            straight += usize::from(path.waypoints().len() == 2);
        }
        let all = paths.iter().filter(|p| p.is_ok()).count();
        assert_eq!(fast, all, "{fast} of {all} pulled back");
        assert!(cut > 0, "no slot's chain cut a loop");
        assert!(straight > 0, "no straight path to the target");
        eprintln!(
            "{fast} pulled back ({cut} cutting a loop, {straight} straight), {same_points} with the same waypoints"
        );
    }
}
