//! Many path requests at once ([`BatchQuery`]): a box-selected army ordered
//! across the map, creep waves down three lanes.

use glam::Vec2;

use super::{NavQuery, Path, QueryFilter};
use crate::error::QueryError;
use crate::mesh::NavMesh;

/// Answers many (start, goal) requests in one call, on rayon's threads when
/// the `parallel` feature is on (it is by default).
///
/// Each request is answered exactly as [`NavQuery::find_path`] would answer
/// it alone, whatever the number of threads: a query's answer depends only
/// on the mesh, the request, the filter and the settings, never on the
/// queries answered before it by the same scratch space. Results come back
/// in request order. The batch keeps its per-thread scratch queries and
/// every path's waypoint buffer from call to call, so a game that issues a
/// batch every frame does not allocate per request once the buffers have
/// grown.
///
/// # Example
/// ```
/// use glam::vec2;
/// use portalnav::{BakeConfig, BatchQuery, Level, NavMesh, QueryFilter};
///
/// let level = Level::from_json_str(r#"{"walkable": [[[0,0],[40,0],[40,40],[0,40]]],
///     "obstacles": [[[15,15],[25,15],[25,25],[15,25]]]}"#)?;
/// let mesh = NavMesh::bake(&level, &BakeConfig::default())?;
/// let mut batch = BatchQuery::new();
/// let army: Vec<_> = (0..200)
///     .map(|i| (vec2(2.0 + (i % 20) as f32 * 0.5, 2.0 + (i / 20) as f32 * 0.5), vec2(35.0, 35.0)))
///     .collect();
/// batch.find_paths(&mesh, &army, &QueryFilter::default());
/// assert_eq!(batch.len(), 200);
/// assert!(batch.iter().all(|r| r.is_ok()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct BatchQuery {
    /// Settings every worker copies (hierarchy on or off, expansion budget).
    template: NavQuery,
    /// One scratch query per thread, kept between calls, so a thread's
    /// chunks all run on warm buffers (a lock per chunk, never contended:
    /// a thread holds only its own).
    workers: Vec<std::sync::Mutex<NavQuery>>,
    paths: Vec<Path>,
    outcomes: Vec<Result<(), QueryError>>,
}

impl Clone for BatchQuery {
    /// The settings and the last answers; the scratch queries start cold.
    fn clone(&self) -> Self {
        BatchQuery {
            template: self.template.clone(),
            workers: Vec::new(),
            paths: self.paths.clone(),
            outcomes: self.outcomes.clone(),
        }
    }
}

/// Requests per chunk handed to a thread: enough to pay for the hand-off,
/// few enough that two threads share a frame's batch evenly.
const CHUNK: usize = 16;

impl BatchQuery {
    /// A batch with [`NavQuery::new`]'s settings.
    #[must_use]
    pub fn new() -> BatchQuery {
        BatchQuery::with_settings(&NavQuery::new())
    }

    /// A batch whose requests are answered with `query`'s settings (the
    /// hierarchy on or off, the expansion budget).
    #[must_use]
    pub fn with_settings(query: &NavQuery) -> BatchQuery {
        let mut template = NavQuery::new();
        template.use_hierarchy = query.use_hierarchy;
        template.max_expansions = query.max_expansions;
        BatchQuery {
            template,
            ..BatchQuery::default()
        }
    }

    /// Answers every `(start, goal)` request; read the answers with
    /// [`BatchQuery::get`] or [`BatchQuery::iter`], in request order, until
    /// the next call.
    pub fn find_paths(&mut self, mesh: &NavMesh, requests: &[(Vec2, Vec2)], filter: &QueryFilter) {
        let n = requests.len();
        self.paths.resize_with(n, Path::default);
        self.outcomes.resize(n, Ok(()));
        #[cfg(feature = "parallel")]
        let threads = rayon::current_num_threads().max(1);
        #[cfg(not(feature = "parallel"))]
        let threads = 1;
        if self.workers.len() < threads {
            let template = self.template.clone();
            self.workers
                .resize_with(threads, || std::sync::Mutex::new(template.clone()));
        }
        let answer = |query: &mut NavQuery,
                      requests: &[(Vec2, Vec2)],
                      paths: &mut [Path],
                      outcomes: &mut [Result<(), QueryError>]| {
            for ((&(start, goal), path), outcome) in requests.iter().zip(paths).zip(outcomes) {
                *outcome = query.find_path_into(mesh, start, goal, filter, path);
            }
        };
        let workers = &self.workers;
        // the calling thread's own scratch query (a poisoned lock only means
        // another chunk panicked; the scratch holds no state that matters)
        let mine = || {
            #[cfg(feature = "parallel")]
            let k = rayon::current_thread_index().unwrap_or(0) % workers.len();
            #[cfg(not(feature = "parallel"))]
            let k = 0;
            workers[k]
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            requests
                .par_chunks(CHUNK)
                .zip(self.paths.par_chunks_mut(CHUNK))
                .zip(self.outcomes.par_chunks_mut(CHUNK))
                .for_each(|((r, p), o)| answer(&mut mine(), r, p, o));
        }
        #[cfg(not(feature = "parallel"))]
        requests
            .chunks(CHUNK)
            .zip(self.paths.chunks_mut(CHUNK))
            .zip(self.outcomes.chunks_mut(CHUNK))
            .for_each(|((r, p), o)| answer(&mut mine(), r, p, o));
    }

    /// Requests answered by the last call.
    #[must_use]
    pub fn len(&self) -> usize {
        self.outcomes.len()
    }

    /// True when the last call had no requests.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.outcomes.is_empty()
    }

    /// The answer to request `i` of the last call (`None` past its end).
    #[must_use]
    pub fn get(&self, i: usize) -> Option<Result<&Path, &QueryError>> {
        let outcome = self.outcomes.get(i)?;
        Some(outcome.as_ref().map(|()| &self.paths[i]))
    }

    /// Takes the answer to request `i` (of the last call's requests),
    /// leaving an empty path in its place.
    pub(crate) fn take(&mut self, i: usize) -> Result<Path, QueryError> {
        match &self.outcomes[i] {
            Ok(()) => Ok(std::mem::take(&mut self.paths[i])),
            Err(e) => Err(e.clone()),
        }
    }

    /// The answers of the last call, in request order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Result<&Path, &QueryError>> + '_ {
        self.outcomes
            .iter()
            .zip(&self.paths)
            .map(|(outcome, path)| outcome.as_ref().map(|()| path))
    }
}
