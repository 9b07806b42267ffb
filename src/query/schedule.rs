//! A request scheduler: path requests answered within a per-tick budget.
//!
//! Requests wait in a queue ordered by priority (higher first), then by
//! submission. Each [`PathScheduler::tick`] answers them in that order until
//! the tick's budget of search expansions is spent. A flat search that does
//! not fit is stopped and resumed next tick where it stopped
//! ([`crate::search::astar_resume`]), so it makes exactly the expansions it
//! would have made in one go and gives the same answer. A request is started
//! through the hierarchy only when the tick's budget left covers its worst
//! case (one expansion per nav node for the L2 search, plus the cap on
//! refining a short route), so the hierarchy never runs out of budget half
//! way either; answers are then bit for bit those of
//! [`NavQuery::find_path`] with the scheduler's query settings.
//!
//! Requests for one goal (same point, filter and priority) are merged into
//! a group move ([`NavQuery::find_paths_to`]): the first of them to come up
//! pulls the goal's legs and finds every nav node's distance to the goal
//! (from the all-pairs table, or by one search over the nav nodes), and
//! every waiting request that serves is answered in the same tick, ahead of
//! requests of that priority submitted in between, as far as the tick's
//! budget goes (a unit costs one plus one per leg it pulls to its cluster's
//! nav nodes). That work is kept for later ticks while the mesh stays the
//! same. A request it does not serve (near the goal) waits for its own
//! turn, and so do the requests behind it when it is the first.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use glam::Vec2;

use super::group::GroupGoal;
use super::{hierarchical, BatchQuery, Ends, NavQuery, Path, PathStatus, QueryFilter};
use crate::error::QueryError;
use crate::fxmap::FxHashMap;
use crate::mesh::NavMesh;

/// Names a request made to a [`PathScheduler`]; ids grow with submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestId(u64);

/// A request answered by [`PathScheduler::tick`].
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The request.
    pub id: RequestId,
    /// Its path, or why there is none (as [`NavQuery::find_path`] says).
    pub result: Result<Path, QueryError>,
}

#[derive(Debug, Clone, Copy)]
struct Request {
    start: Vec2,
    goal: Vec2,
    filter: QueryFilter,
}

/// Queue order: higher priority first, then earlier submission.
type Key = (Reverse<u8>, u64);

/// What requests must share to be merged into one group move: the goal
/// point, the filter and the priority (floats by their bits).
type GoalKey = (u32, u32, u64, u32, bool, u8);

/// The filter of a first path: `filter`, with partial paths allowed.
fn first_path_filter(filter: &QueryFilter) -> QueryFilter {
    QueryFilter {
        allow_partial: true,
        ..*filter
    }
}

fn goal_key(r: &Request, key: Key) -> GoalKey {
    let f = &r.filter;
    (
        r.goal.x.to_bits(),
        r.goal.y.to_bits(),
        f.excluded_areas,
        f.snap_distance.to_bits(),
        f.allow_partial,
        key.0 .0,
    )
}

/// A request being answered over several ticks.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    key: Key,
    request: Request,
    /// The resolved ends once its flat search has started.
    ends: Option<Ends>,
    /// [`NavMesh::serial`] of the mesh it was started on.
    serial: u64,
}

/// What a group search did for the request that brought it up.
enum Merged {
    /// Answered with the others it served.
    Answered,
    /// Not served by the group search (or no duplicate waits): it goes on
    /// as a request of its own.
    NotServed,
    /// Its share would overrun the tick's budget: it is first next tick.
    NoRoom,
}

/// How far a slice got.
enum Slice {
    /// `path` holds the answer.
    Done,
    /// The flat search stopped at the slice's budget; resume it.
    Pending(Ends),
    /// Not started: the hierarchy needs more budget than the tick has left.
    Wait,
}

/// Path requests answered within a per-tick budget of search expansions, in
/// priority order, long searches sliced over ticks (see the module docs).
/// One per thread, like a [`NavQuery`].
///
/// # Example
/// ```
/// use glam::vec2;
/// use portalnav::{BakeConfig, Level, NavMesh, PathScheduler, QueryFilter};
///
/// let level = Level::from_json_str(r#"{"walkable": [[[0,0],[64,0],[64,64],[0,64]]],
///     "obstacles": [[[30,0],[34,0],[34,50],[30,50]]]}"#)?;
/// let mesh = NavMesh::bake(&level, &BakeConfig::default())?;
/// let mut scheduler = PathScheduler::new(1024);
/// let filter = QueryFilter::default();
/// let low = scheduler.submit(&mesh, vec2(5., 5.), vec2(60., 5.), &filter, 0)?.0;
/// let high = scheduler.submit(&mesh, vec2(5., 9.), vec2(60., 9.), &filter, 9)?.0;
/// let mut answered = Vec::new();
/// while !scheduler.is_empty() {
///     for answer in scheduler.tick(&mesh, 50) {
///         answered.push(answer.id);
///         assert!(answer.result.is_ok());
///     }
///     assert!(scheduler.last_work() <= 50);
/// }
/// assert_eq!(answered, [high, low]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct PathScheduler {
    capacity: usize,
    queue: BTreeMap<Key, Request>,
    /// The queue again, grouped by goal: merge candidates in queue order.
    by_goal: BTreeSet<(GoalKey, Key)>,
    /// The queue's priorities by request number, so a cancel finds its
    /// request without a scan.
    priority: FxHashMap<u64, Reverse<u8>>,
    merge_goals: bool,
    /// The group search held in `query`, with the mesh it ran on.
    group: Option<(GoalKey, u64, GroupGoal)>,
    /// Scratch: the requests of one group, leader first.
    waiting: Vec<Key>,
    next: u64,
    query: NavQuery,
    /// Answers first paths at submission.
    quick: NavQuery,
    /// Answers them for [`PathScheduler::submit_many`], with `quick`'s settings.
    first_paths: BatchQuery,
    first_budget: u32,
    in_flight: Option<InFlight>,
    path: Path,
    answers: Vec<Answer>,
    last_work: u32,
    /// The deadline of the tick under way ([`PathScheduler::tick_until`]).
    deadline: Option<Instant>,
}

impl PathScheduler {
    /// Expansions of a flat search between two readings of the clock under
    /// [`PathScheduler::tick_until`]: a small share of a millisecond on the
    /// bundled maps (BENCHMARKS.md), so a tick overruns its deadline by
    /// little, while reading the clock stays rare.
    pub const TIME_SLICE: u32 = 256;

    /// A scheduler holding at most `capacity` requests (queued or in
    /// flight), with a default [`NavQuery`] and no first paths.
    #[must_use]
    pub fn new(capacity: usize) -> PathScheduler {
        PathScheduler::with_query(capacity, NavQuery::new())
    }

    /// As [`PathScheduler::new`], answering with `query`'s settings (its
    /// expansion budget per request, whether it uses the hierarchy).
    #[must_use]
    pub fn with_query(capacity: usize, query: NavQuery) -> PathScheduler {
        let mut quick = NavQuery::new();
        quick.set_use_hierarchy(false);
        PathScheduler {
            capacity,
            queue: BTreeMap::new(),
            by_goal: BTreeSet::new(),
            priority: FxHashMap::default(),
            merge_goals: true,
            group: None,
            waiting: Vec::new(),
            next: 0,
            query,
            first_paths: BatchQuery::with_settings(&quick),
            quick,
            first_budget: 0,
            in_flight: None,
            path: Path::default(),
            answers: Vec::new(),
            last_work: 0,
            deadline: None,
        }
    }

    /// With `budget > 0`, [`PathScheduler::submit`] answers at once with a
    /// first path from a flat search of at most `budget` expansions: the
    /// whole path if it fits (the request is then done and not queued), else
    /// a partial one towards the goal ([`PathStatus::Partial`]) while the
    /// full answer is queued. These expansions are not charged to any tick.
    pub fn set_first_path_budget(&mut self, budget: u32) -> &mut Self {
        self.first_budget = budget;
        self.quick.set_max_expansions(budget.max(1));
        self.first_paths = BatchQuery::with_settings(&self.quick);
        self
    }

    /// Whether requests for one goal are merged into group moves (on by
    /// default; see the module docs). Merged answers are
    /// [`NavQuery::find_paths_to`]'s: never longer than `find_path`'s (within
    /// 1e-4), though not always the same where two routes cost the same.
    pub fn set_merge_goals(&mut self, merge: bool) -> &mut Self {
        self.merge_goals = merge;
        self
    }

    /// Queues a request. With first paths on, also answers with one at once
    /// (see [`PathScheduler::set_first_path_budget`]); `Some` complete path
    /// means the request is already answered and was not queued.
    ///
    /// # Errors
    /// [`QueryError::QueueFull`] when `capacity` requests are waiting (the
    /// request is not queued). With first paths on, the first search's
    /// errors for bad ends ([`QueryError::NonFinite`],
    /// [`QueryError::OffMesh`] (on a mesh above radius 0, [`QueryError::NoRoom`]), [`QueryError::Unreachable`]), also not queued.
    pub fn submit(
        &mut self,
        mesh: &NavMesh,
        start: Vec2,
        goal: Vec2,
        filter: &QueryFilter,
        priority: u8,
    ) -> Result<(RequestId, Option<Path>), QueryError> {
        if self.len() >= self.capacity {
            // refused before any search
            return Err(QueryError::QueueFull {
                capacity: self.capacity,
            });
        }
        let first = (self.first_budget > 0).then(|| {
            self.quick
                .find_path(mesh, start, goal, &first_path_filter(filter))
        });
        self.admit((start, goal), filter, priority, first)
    }

    /// Submits `requests` (start, goal) with one filter and priority: what
    /// [`PathScheduler::submit`] answers for each in turn (the same ids,
    /// first paths, errors and queue), with the first paths searched in
    /// parallel ([`BatchQuery`], on rayon's threads). An order given to a
    /// whole army in one tick.
    ///
    /// # Errors
    /// Per request, as [`PathScheduler::submit`].
    pub fn submit_many(
        &mut self,
        mesh: &NavMesh,
        requests: &[(Vec2, Vec2)],
        filter: &QueryFilter,
        priority: u8,
    ) -> Vec<Result<(RequestId, Option<Path>), QueryError>> {
        if self.first_budget > 0 {
            self.first_paths
                .find_paths(mesh, requests, &first_path_filter(filter));
        }
        (0..requests.len())
            .map(|i| {
                let first = (self.first_budget > 0).then(|| self.first_paths.take(i));
                self.admit(requests[i], filter, priority, first)
            })
            .collect()
    }

    /// The rest of a submission once its first path (if first paths are
    /// on) was searched: refused when the queue is full, else numbered;
    /// answered by a complete first path or its error, else queued.
    fn admit(
        &mut self,
        (start, goal): (Vec2, Vec2),
        filter: &QueryFilter,
        priority: u8,
        first: Option<Result<Path, QueryError>>,
    ) -> Result<(RequestId, Option<Path>), QueryError> {
        if self.len() >= self.capacity {
            return Err(QueryError::QueueFull {
                capacity: self.capacity,
            });
        }
        let id = RequestId(self.next);
        self.next += 1;
        let first = match first.transpose()? {
            Some(path) if path.status() == PathStatus::Complete => return Ok((id, Some(path))),
            first => first,
        };
        let request = Request {
            start,
            goal,
            filter: *filter,
        };
        self.enqueue((Reverse(priority), id.0), request);
        Ok((id, first))
    }

    /// Withdraws a request that has not been answered; false if there is none.
    pub fn cancel(&mut self, id: RequestId) -> bool {
        if self.in_flight.is_some_and(|f| f.key.1 == id.0) {
            self.in_flight = None;
            return true;
        }
        let Some(&priority) = self.priority.get(&id.0) else {
            return false;
        };
        self.dequeue((priority, id.0)).is_some()
    }

    /// Queues `request` under `key`, in every index.
    fn enqueue(&mut self, key: Key, request: Request) {
        self.by_goal.insert((goal_key(&request, key), key));
        self.priority.insert(key.1, key.0);
        self.queue.insert(key, request);
    }

    /// Takes the request under `key` out of the queue and every index.
    fn dequeue(&mut self, key: Key) -> Option<Request> {
        let request = self.queue.remove(&key)?;
        self.by_goal.remove(&(goal_key(&request, key), key));
        self.priority.remove(&key.1);
        Some(request)
    }

    /// Requests waiting or in flight.
    #[must_use]
    pub fn len(&self) -> usize {
        self.queue.len() + usize::from(self.in_flight.is_some())
    }

    /// No request is waiting or in flight.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Expansions the last tick spent (a request answered without a search
    /// counts as one).
    #[must_use]
    pub fn last_work(&self) -> u32 {
        self.last_work
    }

    /// The smallest tick budget in which the scheduler uses `mesh`'s
    /// hierarchy (its worst case, see [`PathScheduler::tick`]); 0 when the
    /// mesh has none.
    #[must_use]
    pub fn hierarchy_budget(mesh: &NavMesh) -> u32 {
        hierarchy_worst_case(mesh)
    }

    /// Answers requests in priority order until `budget` expansions are
    /// spent; returns the requests answered this tick, in answer order. A
    /// request in flight is finished before the next is started, whatever
    /// was submitted meanwhile.
    ///
    /// The work exceeds `budget` by at most one expansion (when the
    /// hierarchy was tried and left nothing for the flat search). The
    /// hierarchy is used only in ticks whose budget covers its worst case
    /// (the mesh's nav-node count plus 2, plus the cap on refining a short
    /// route, which grows with the clusters' aim,
    /// `HierarchyStats::cluster_aim`); with smaller budgets every request
    /// takes the flat search. A
    /// request in flight when the mesh is replaced (an edit) starts again on
    /// the new one.
    pub fn tick(&mut self, mesh: &NavMesh, budget: u32) -> &[Answer] {
        self.run_tick(mesh, budget, None)
    }

    /// [`PathScheduler::tick`], also stopping once `deadline` has passed:
    /// a game gives the scheduler what is left of the tick's time for
    /// navigation after its edits and orders. The clock is read before each
    /// request (merged ones included) and between slices of at most
    /// [`PathScheduler::TIME_SLICE`] expansions of a flat search, so the
    /// tick runs past `deadline` by at most one slice, one hierarchical
    /// attempt or one group search (each bounded in expansions as
    /// [`PathScheduler::tick`] says). A deadline already past does nothing:
    /// a game that never leaves the scheduler time starves its queue.
    pub fn tick_until(&mut self, mesh: &NavMesh, budget: u32, deadline: Instant) -> &[Answer] {
        self.run_tick(mesh, budget, Some(deadline))
    }

    /// The loop of [`PathScheduler::tick`] and [`PathScheduler::tick_until`].
    fn run_tick(&mut self, mesh: &NavMesh, budget: u32, deadline: Option<Instant>) -> &[Answer] {
        self.answers.clear();
        self.last_work = 0;
        let hierarchy = self.query.use_hierarchy && budget >= hierarchy_worst_case(mesh);
        self.deadline = deadline;
        // flat searches in slices under a deadline, the clock read between them
        let slice = if deadline.is_some() {
            Self::TIME_SLICE
        } else {
            u32::MAX
        };
        while self.last_work < budget && !self.out_of_time() {
            let left = budget - self.last_work;
            let mut flight = match self.in_flight.take() {
                Some(f) if f.serial == mesh.serial => f,
                Some(f) => InFlight {
                    ends: None,
                    serial: mesh.serial,
                    ..f
                },
                None => match self.queue.first_key_value().map(|(&k, _)| k) {
                    Some(key) => {
                        let request = self.dequeue(key).expect("the first key");
                        if hierarchy && self.merge_goals {
                            match self.answer_group(mesh, key, request, budget) {
                                Merged::Answered => continue,
                                Merged::NotServed => {}
                                Merged::NoRoom => {
                                    // first in line again next tick
                                    self.enqueue(key, request);
                                    break;
                                }
                            }
                        }
                        InFlight {
                            key,
                            request,
                            ends: None,
                            serial: mesh.serial,
                        }
                    }
                    None => break,
                },
            };
            // a group search may have spent some of the tick
            let left = left.min(budget.saturating_sub(self.last_work));
            if left == 0 {
                self.in_flight = Some(flight);
                break;
            }
            let outcome = match flight.ends {
                None => self.start(mesh, &flight.request, (left, slice), hierarchy),
                Some(ends) => self.resume(mesh, &ends, &flight.request.filter, left.min(slice)),
            };
            self.last_work += self.query.last_expansions.max(1);
            let id = RequestId(flight.key.1);
            match outcome {
                Ok(Slice::Done) => self.answers.push(Answer {
                    id,
                    result: Ok(self.path.clone()),
                }),
                Err(error) => self.answers.push(Answer {
                    id,
                    result: Err(error),
                }),
                Ok(Slice::Pending(ends)) => {
                    flight.ends = Some(ends);
                    self.in_flight = Some(flight);
                    if deadline.is_none() {
                        break; // the budget ran out
                    }
                    // a slice or the budget ran out: the loop's test says which
                }
                Ok(Slice::Wait) => {
                    self.in_flight = Some(flight);
                    break;
                }
            }
        }
        &self.answers
    }

    /// Whether the tick under way has passed its deadline.
    fn out_of_time(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Answers `request` (just taken from the queue) and the waiting
    /// requests for the same goal from one group search, as far as `budget`
    /// goes; says what became of `request`. Nothing happens without
    /// a waiting duplicate, on a mesh the group search does not serve (see
    /// [`NavQuery::find_paths_to`]), or when the tick has too little budget
    /// left for the search.
    fn answer_group(&mut self, mesh: &NavMesh, key: Key, request: Request, budget: u32) -> Merged {
        let gk = goal_key(&request, key);
        let max = (key.0, u64::MAX); // the priority is part of `gk`
        let Some(h) = mesh.data.hierarchy.as_ref() else {
            return Merged::NotServed;
        };
        if self.by_goal.range((gk, key)..=(gk, max)).next().is_none() {
            return Merged::NotServed; // no duplicate waiting
        }
        let g = match self.group {
            Some((k, serial, g)) if k == gk && serial == mesh.serial => g,
            _ => {
                // the search settles each nav node once, from the goal node
                let worst = mesh.nav_nodes().len() as u32 + 2;
                if budget - self.last_work < worst {
                    return Merged::NotServed;
                }
                self.group = None;
                // `None` comes before the search runs: nothing to charge
                let Some(g) = self
                    .query
                    .search_from_goal(mesh, request.goal, &request.filter)
                else {
                    return Merged::NotServed;
                };
                self.last_work += self.query.group_expansions();
                self.group = Some((gk, mesh.serial, g));
                g
            }
        };
        let mut waiting = std::mem::take(&mut self.waiting);
        waiting.clear();
        waiting.push(key);
        waiting.extend(self.by_goal.range((gk, key)..=(gk, max)).map(|&(_, k)| k));
        let first = self.answer_waiting(mesh, h, g, (key, request), &waiting, budget);
        self.waiting = waiting;
        first
    }

    /// The loop of [`PathScheduler::answer_group`] over `waiting` (the
    /// leader `request` first, at `key`).
    fn answer_waiting(
        &mut self,
        mesh: &NavMesh,
        h: &crate::mesh::hierarchy::HierarchyData,
        g: GroupGoal,
        (key, request): (Key, Request),
        waiting: &[Key],
        budget: u32,
    ) -> Merged {
        let mut first = Merged::NoRoom;
        for &k in waiting {
            if self.last_work >= budget || self.out_of_time() {
                break;
            }
            let r = if k == key { request } else { self.queue[&k] };
            let q = &mut self.query;
            // every waiting request has the group's goal and filter (`goal_key`)
            let (result, work) =
                match q.prepare_to(mesh, r.start, g.goal(), &r.filter, &mut self.path) {
                    Ok(None) => (Ok(()), 1),
                    Ok(Some(ends)) => {
                        // a unit pulls a leg to each nav node of its cluster;
                        // one the tree does not serve may refine its route
                        let c = h.region_cluster[ends.start_region as usize];
                        let legs = 1 + h.nodes_of(c).len() as u32;
                        let most = legs.saturating_add(hierarchical::refine_budget(h));
                        if self.last_work.saturating_add(most) > budget {
                            break;
                        }
                        let before = q.last_expansions;
                        if !q.path_from_group(mesh, h, &ends, g, &mut self.path) {
                            if k == key {
                                // the others wait too: none is answered before it
                                return Merged::NotServed;
                            }
                            continue; // it waits for its own turn
                        }
                        (Ok(()), legs + q.last_expansions.saturating_sub(before))
                    }
                    Err(e) => (Err(e), 1),
                };
            self.last_work += work;
            if k == key {
                first = Merged::Answered;
            } else {
                self.dequeue(k);
            }
            self.answers.push(Answer {
                id: RequestId(k.1),
                result: result.map(|()| self.path.clone()),
            });
        }
        first
    }

    /// Starts a request with `left` expansions.
    fn start(
        &mut self,
        mesh: &NavMesh,
        request: &Request,
        (left, slice): (u32, u32),
        hierarchy: bool,
    ) -> Result<Slice, QueryError> {
        let q = &mut self.query;
        let Some(ends) = q.prepare(
            mesh,
            request.start,
            request.goal,
            &request.filter,
            &mut self.path,
        )?
        else {
            return Ok(Slice::Done);
        };
        if hierarchy && request.filter.excluded_areas == 0 && mesh.data.hierarchy.is_some() {
            if left < hierarchy_worst_case(mesh) {
                return Ok(Slice::Wait);
            }
            if q.try_hierarchical(mesh, &ends, &mut self.path).is_ok() {
                return Ok(Slice::Done);
            }
        }
        let flat_left = left.saturating_sub(q.last_expansions).min(slice).max(1);
        let done = q.run_flat(
            mesh,
            &ends,
            &request.filter,
            &mut self.path,
            false,
            flat_left,
        )?;
        Ok(if done {
            Slice::Done
        } else {
            Slice::Pending(ends)
        })
    }

    /// Resumes a request's flat search with `left` more expansions.
    fn resume(
        &mut self,
        mesh: &NavMesh,
        ends: &Ends,
        filter: &QueryFilter,
        left: u32,
    ) -> Result<Slice, QueryError> {
        let q = &mut self.query;
        q.last_expansions = 0;
        let budget = q.flat.expansions().saturating_add(left);
        let done = q.run_flat(mesh, ends, filter, &mut self.path, true, budget)?;
        Ok(if done {
            Slice::Done
        } else {
            Slice::Pending(*ends)
        })
    }
}

/// Expansions a hierarchical attempt can make at most: the L2 A* never
/// reopens a node, so one per nav node and for both ends, and the
/// refinement of a short route has its own cap (0 without a hierarchy).
fn hierarchy_worst_case(mesh: &NavMesh) -> u32 {
    mesh.data.hierarchy.as_ref().map_or(0, |h| {
        (mesh.nav_nodes().len() as u32 + 2).saturating_add(hierarchical::refine_budget(h))
    })
}
