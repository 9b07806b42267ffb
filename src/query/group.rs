//! Group moves: many units ordered to one goal, with one search from the
//! goal serving them all ([`NavQuery::find_paths_to`]).

use glam::Vec2;

use super::hierarchical::{legs, pull_all};
use super::{Ends, NavQuery, Path, QueryFilter};
use crate::error::QueryError;
use crate::mesh::hierarchy::HierarchyData;
use crate::mesh::NavMesh;
use crate::search::{astar, NavGraph, LEG};

/// The goal of a group move once its search has run.
#[derive(Debug, Clone, Copy)]
pub(super) struct GroupGoal {
    region: u32,
    cluster: u32,
}

impl NavQuery {
    /// Paths from every start in `starts` to one `goal`, in order: a
    /// box-selected army sent across the map.
    ///
    /// On a mesh whose hierarchy is searched rather than tabled (more than
    /// 2,048 nav nodes), one Dijkstra from the goal over the nav nodes gives
    /// every unit its distance to the goal from any nav node; each unit then
    /// needs only its own legs to its cluster's nav nodes, and pulls its own
    /// path taut through its own corridor. That is the route the unit's own
    /// query would choose: the cheapest of leg + distance to the goal over
    /// its legs, so its path is what [`NavQuery::find_path`] gives but where
    /// two routes cost the same. Units the hierarchy does not serve (near
    /// the goal, or with a filter that excludes areas), and every unit on a
    /// mesh with the all-pairs table or without a hierarchy, get exactly
    /// [`NavQuery::find_path`]'s answer. Units standing on the same point
    /// share one answer.
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
    /// let army: Vec<_> = (0..100)
    ///     .map(|i| vec2(2.0 + (i % 10) as f32 * 0.5, 2.0 + (i / 10) as f32 * 0.5))
    ///     .collect();
    /// let filter = QueryFilter::default();
    /// let paths = query.find_paths_to(&mesh, &army, vec2(35.0, 35.0), &filter);
    /// for (start, path) in army.iter().zip(&paths) {
    ///     let alone = query.find_path(&mesh, *start, vec2(35.0, 35.0), &filter)?;
    ///     assert!(path.as_ref().unwrap().length() <= alone.length() + 1e-4);
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn find_paths_to(
        &mut self,
        mesh: &NavMesh,
        starts: &[Vec2],
        goal: Vec2,
        filter: &QueryFilter,
    ) -> Vec<Result<Path, QueryError>> {
        let shared = self.search_from_goal(mesh, goal, filter);
        let mut out: Vec<Result<Path, QueryError>> = Vec::with_capacity(starts.len());
        for (i, &s) in starts.iter().enumerate() {
            // a unit on the same point as the one before shares its answer
            // (units standing on one point are usually listed together)
            if i > 0 && starts[i - 1] == s {
                out.push(out[i - 1].clone());
                continue;
            }
            let answer = match (shared, mesh.data.hierarchy.as_ref()) {
                (Some(g), Some(h)) => self.group_path(mesh, h, s, goal, g, filter),
                _ => self.find_path(mesh, s, goal, filter),
            };
            out.push(answer);
        }
        out
    }

    /// Runs the Dijkstra from `goal` over the nav nodes into `self.group`,
    /// with the goal's legs in `self.group_legs`; `None` when the group move
    /// has nothing to share (see [`NavQuery::find_paths_to`]).
    pub(super) fn search_from_goal(
        &mut self,
        mesh: &NavMesh,
        goal: Vec2,
        filter: &QueryFilter,
    ) -> Option<GroupGoal> {
        let h = mesh.data.hierarchy.as_ref()?;
        if !self.use_hierarchy || filter.excluded_areas != 0 || h.has_table() {
            return None;
        }
        let (at, region) = self
            .resolve(mesh, goal, "goal", filter.snap_distance)
            .ok()?;
        let cluster = h.region_cluster[region as usize];
        legs(mesh, h, region, at, &mut self.group_legs);
        pull_all(
            mesh,
            h,
            &mut self.group_legs,
            (at, region),
            (&mut self.leg_buffer, &mut self.leg_ends),
        );
        if self.group_legs.is_empty() {
            return None;
        }
        let graph = NavGraph {
            h,
            ht: &mesh.hier,
            start_legs: &self.group_legs,
            goal_legs: &[],
            start: at,
            goal: at,
            heuristic_scale: 0.0,
            start_cluster: cluster,
            alternate: true,
            landmark_goal: &[],
        };
        // no goal node: the search runs until every nav node is settled
        astar(
            &graph,
            &mut self.group,
            &[(graph.start_node(), 0.0, LEG)],
            u32::MAX,
        );
        Some(GroupGoal { region, cluster })
    }

    /// Expansions of the last group search ([`NavQuery::search_from_goal`]).
    pub(super) fn group_expansions(&self) -> u32 {
        self.group.expansions()
    }

    /// One unit's path of a group move to `g` (see [`NavQuery::find_paths_to`]).
    fn group_path(
        &mut self,
        mesh: &NavMesh,
        h: &HierarchyData,
        start: Vec2,
        goal: Vec2,
        g: GroupGoal,
        filter: &QueryFilter,
    ) -> Result<Path, QueryError> {
        let mut path = Path::default();
        let Some(ends) = self.prepare(mesh, start, goal, filter, &mut path)? else {
            return Ok(path);
        };
        if !self.path_from_group(mesh, h, &ends, g, &mut path) {
            self.answer(mesh, &ends, filter, &mut path)?;
        }
        Ok(path)
    }

    /// Fills `path` for a unit with resolved `ends` from the goal's search
    /// (`g`), if it serves the unit: false for a unit in or beside the
    /// goal's cluster, or with no leg to a nav node the search settled.
    /// Makes no search expansions either way.
    pub(super) fn path_from_group(
        &mut self,
        mesh: &NavMesh,
        h: &HierarchyData,
        ends: &Ends,
        g: GroupGoal,
        path: &mut Path,
    ) -> bool {
        let cs = h.region_cluster[ends.start_region as usize];
        let routed =
            cs != g.cluster && !h.neighbours(cs, g.cluster) && self.group_route(mesh, h, ends) && {
                self.goal_legs.clone_from(&self.group_legs);
                self.stitch(mesh, h, ends.start_region, g.region)
            };
        if routed {
            self.pull_route(mesh, h, ends, path);
        }
        routed
    }

    /// The unit's L2 route into `self.l2_route` (its legs in
    /// `self.start_legs`): the cheapest leg + distance from its nav node to
    /// the goal, then the goal's search tree walked from that node back to
    /// the goal, each step along the corridor its node was reached by.
    /// False when no leg reaches a settled nav node.
    fn group_route(&mut self, mesh: &NavMesh, h: &HierarchyData, ends: &Ends) -> bool {
        legs(mesh, h, ends.start_region, ends.start, &mut self.start_legs);
        let end = (ends.start, ends.start_region);
        let scratch = (&mut self.leg_buffer, &mut self.leg_ends);
        pull_all(mesh, h, &mut self.start_legs, end, scratch);
        let first = self
            .start_legs
            .iter()
            .filter_map(|l| Some((l.cost + self.group.cost(l.node)?, l.node)))
            .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let Some((_, first)) = first else {
            return false;
        };
        // from the goal's search start to `first`, then turned round
        self.group.path_to(first, &mut self.l2_nodes);
        self.l2_route.clear();
        self.l2_route.push((first, LEG));
        for w in self.l2_nodes[1..].windows(2).rev() {
            let via = self.group.payload(w[1]).unwrap_or(LEG);
            self.l2_route.push((w[0], via));
        }
        true
    }
}
