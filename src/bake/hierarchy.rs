//! The L2 bake: clusters, nav nodes, leg tables and cached corridors (see
//! [`crate::mesh::hierarchy`] for what they are and how a query uses them).
//!
//! ```text
//! regions -> clusters (heavy-edge matching: wide portals merge first, so the
//!            cuts fall on narrow ones)
//!         -> nav nodes (samples of every portal between two clusters, plus
//!            designer points)
//!         -> per cluster: an exact search over it from each nav node (the
//!            leg table), then the corridor of every pair of its nav nodes
//!         -> designer pairs: the flat portal search over the whole mesh
//! ```

use std::time::Instant;

use glam::{DVec2, Vec2};

use crate::level::NavPoint;
pub(crate) use crate::mesh::hierarchy::MAX_CLUSTER_SIZE;
use crate::mesh::hierarchy::{
    bucketed, bucketed_into, leg_entry_bytes, HierarchyTables, TableBuild,
};
use crate::mesh::hierarchy::{
    crossings_budget, open_clusters, open_zones, stored_size, Corridor, HierarchyData,
    HierarchyStats, L2Table, LegPoint, NavNode, NavPointKind, MAX_OPEN_ZONES, NO_STEP,
};
use crate::mesh::{NavMesh, Tables, TileGrid};
use crate::search::{astar, Between, NavGraph, PortalSearch, SearchContext, SearchOutcome, Via};

/// The hierarchy of a mesh a rebuild replaces (a runtime edit), and which
/// of that mesh's regions the new one kept: a cluster made of the same kept
/// regions, with the same nav nodes and leg points, gets the same leg
/// tables (the searches behind them stay inside the cluster), so they are
/// copied, their crossings renumbered, instead of searched again.
pub(crate) struct Previous<'a> {
    pub tables: &'a Tables,
    pub hierarchy: &'a HierarchyData,
    /// Per dense region of the old mesh: the same region in the new one,
    /// `u32::MAX` where the edit changed it (`Succession::regions`).
    pub regions: &'a [u32],
}

/// Builds the hierarchy of a baked mesh, with its derived tables, or `None`
/// when it would cost more than its budgets allow (see [`within_budget`]).
/// Designer points off the mesh are skipped. Clusters aim for `aim`
/// regions, one of [`cluster_sizes`] of the configured `cluster_size`; both
/// are in `2..=MAX_CLUSTER_SIZE` (the caller checks).
///
/// With a `byte_limit`, a hierarchy whose stored fields are already over it
/// once its leg tables are built stops there: it comes back `unfinished`
/// (no corridors, landmarks or designer corridors, empty tables, zero
/// corridor and crossing counts), with the bytes counted so far, a lower
/// bound of the whole's; the caller drops it as it would the whole.
///
/// A hierarchy that gets the all-pairs table is marked as having one (so
/// it saves the same bytes and carries no landmarks) but its rows are left
/// to the caller: a bake computes them for the hierarchy it keeps, an edit
/// leaves them to `TileCache::refresh_table` (queries search L2 until then).
pub(crate) fn build(
    mesh: &NavMesh,
    designer: &[NavPoint],
    (cluster_size, aim, wide_portal): (u32, u32, f32),
    previous: Option<Previous<'_>>,
    byte_limit: Option<f64>,
) -> Option<(HierarchyData, HierarchyTables)> {
    let started = Instant::now();
    let t = &mesh.tables;
    let (region_cluster, clusters) = match mesh.data.tiling.as_ref() {
        Some(tiling) => {
            // the partition an edit replaces, at this aim
            let same_aim = previous.as_ref().filter(|p| {
                let h = p.hierarchy;
                let regions = p.tables.region_keys.len();
                h.stats.cluster_aim == aim
                    && h.region_cluster.len() == regions
                    && p.regions.len() == regions
            });
            let old = same_aim.map(|p| Blocked {
                tables: p.tables,
                clusters: &p.hierarchy.region_cluster,
                kept: p.regions,
            });
            partition_blocks(t, tiling, aim, old)
        }
        None => partition(t, aim),
    };

    // clusters whose corridors or explorations would not pay are left
    // open: no nav node stands on their portals
    let open = unpaying_clusters(t, &region_cluster, clusters, wide_portal);
    // nav nodes: the samples of boundary portals in portal order, then designer points
    let mut nodes = Vec::new();
    for (p, &[a, b]) in t.portal_regions.iter().enumerate() {
        let (ca, cb) = (region_cluster[a as usize], region_cluster[b as usize]);
        if ca != cb && !open[ca as usize] && !open[cb as usize] {
            for at in portal_samples(t.portal_ends[p], wide_portal) {
                nodes.push(NavNode {
                    at,
                    kind: NavPointKind::Boundary { portal: p as u32 },
                    clusters: [ca, cb],
                    regions: [a, b],
                });
            }
        }
    }
    for (i, d) in designer.iter().enumerate() {
        if let Some(key) = mesh.locate(d.at) {
            let r = mesh.data.regions[key].index;
            let c = region_cluster[r as usize];
            if open[c as usize] {
                continue;
            }
            nodes.push(NavNode {
                at: d.at,
                kind: NavPointKind::Designer { index: i as u32 },
                clusters: [c, c],
                regions: [r, r],
            });
        }
    }
    // each cluster's nav nodes, in order
    let sides = nodes.iter().enumerate().flat_map(|(i, n)| {
        let [a, b] = n.clusters;
        let other = (b != a).then_some((b, i as u32));
        std::iter::once((a, i as u32)).chain(other)
    });
    let (cluster_start, cluster_nodes) = bucketed(clusters as usize, sides);

    let mut h = HierarchyData {
        cluster_size,
        region_cluster,
        cluster_start,
        cluster_nodes,
        nodes,
        corridors: Vec::new(),
        crossings: Vec::new(),
        designer_corridors: Vec::new(),
        designer_crossings: Vec::new(),
        point_start: Vec::new(),
        points: Vec::new(),
        leg_start: Vec::new(),
        leg_cost: Vec::new(),
        leg_route: Vec::new(),
        leg_steps: Vec::new(),
        step_start: Vec::new(),
        landmarks: 0,
        landmark_dist: Vec::new(),
        pending_landmarks: (0, Vec::new()),
        l2_table: L2Table::default(),
        unfinished: false,
        legs_missing: Vec::new(),
        stats: HierarchyStats::default(),
    };
    // open as a load derives it: those left open, and any whose every
    // neighbour was (so it has no nav node either)
    let open = open_clusters(&h, t);
    if !within_budget(t, &h, &open) || open_zones(&h, t, &open).len() > MAX_OPEN_ZONES {
        return None;
    }
    // all of it open (a comb alone): nothing for a query to use
    if open.contains(&true) && h.nodes.is_empty() {
        return None;
    }
    // the leg tables' least size is known before their searches: with
    // the rest, already over the limit (a hub's crowded neighbours, a map
    // in small tiles), they would be searched for nothing
    if let Some(limit) = byte_limit {
        let least = h.measured_bytes() + leg_table_floor(t, &h, &open, wide_portal);
        if least as f64 > limit {
            h.legs_missing = vec![true; clusters as usize];
            return Some(unfinished(h, (clusters, aim), least, started));
        }
    }
    // tables to copy from the hierarchy replaced, if it has any
    let previous_tables = previous.as_ref().filter(|p| p.hierarchy.has_some_legs());
    let kept = previous_tables.map(|p| Kept::new(p, t));
    let (from_old, entries) =
        match build_leg_tables(t, &mut h, (wide_portal, byte_limit), kept.as_ref(), &open) {
            Ok(built) => built,
            Err(least) => return Some(unfinished(h, (clusters, aim), least, started)),
        };
    // what is stored so far is most of it (corridors are not; landmarks
    // and designer corridors would add to it): already over the limit, the
    // rest would be built for nothing
    let stored_so_far = h.measured_bytes_with(entries);
    debug_assert_eq!(stored_so_far, h.measured_bytes());
    let later_parts = |h: &HierarchyData| {
        stored_size(&h.designer_corridors)
            + stored_size(&h.designer_crossings)
            + stored_size(&h.landmarks)
            + stored_size(&h.landmark_dist)
    };
    let parts_so_far = later_parts(&h);
    if let Some(limit) = byte_limit {
        let bytes = stored_so_far;
        if bytes as f64 > limit {
            return Some(unfinished(h, (clusters, aim), bytes, started));
        }
    }
    // fails only over the crossings budget: in a bake every nav node
    // stands on a leg point of each of its clusters
    let cap = crossings_budget(h.region_cluster.len());
    if let Some(old) = previous.as_ref().map(|p| p.hierarchy) {
        // about what the hierarchy it replaces held
        h.corridors.reserve(old.corridors.len());
        h.crossings.reserve(old.crossings.len());
    }
    let derived = match kept.as_ref() {
        // a cluster whose leg tables were copied has the same corridors
        Some(k) => {
            let mut node_map = Vec::new();
            let reuse = |c: u32, nodes: &[u32], corridors: &mut _, crossings: &mut _| {
                let reused = from_old[c as usize].is_some_and(|oc| {
                    k.corridors((c, oc), nodes, (corridors, crossings), &mut node_map)
                });
                #[cfg(test)]
                tests::REUSED_CLUSTERS.with(|n| n.set(n.get() + usize::from(reused)));
                reused
            };
            h.derive_cluster_corridors_reusing(&t.portal_regions, cap, reuse)
        }
        None => h.derive_cluster_corridors(&t.portal_regions, cap),
    };
    if derived.is_err() {
        return None;
    }
    designer_corridors(t, &mut h);
    h.append_designer_corridors()
        .expect("a bake's designer crossings fit in u32");
    // the L2 graph as the query sees it, for the searches over all of it
    let ht = HierarchyTables::build(&h, &t.portal_regions, designer.len());
    // landmarks serve the L2 search, which a table replaces; the bytes a
    // table is measured against are those stored so far, the designer
    // corridors' measured again (no landmarks yet, default stats)
    let allowance = stored_so_far - parts_so_far + later_parts(&h)
        - stored_size(&h.landmarks)
        - stored_size(&h.landmark_dist)
        - stored_size(&h.stats);
    debug_assert_eq!(allowance, h.table_allowance());
    let tabled = TableBuild::possible(&h, &ht, allowance);
    if !tabled {
        landmarks(&ht, &mut h, LANDMARKS);
    }

    h.stats = HierarchyStats {
        clusters,
        cluster_aim: aim,
        nav_nodes: h.nodes.len() as u32,
        corridors: h.corridors.len() as u32,
        crossings: h.crossings.len() as u32,
        leg_entries: h.leg_cost.len() as u32,
        // the stored fields are written one after the other: those changed
        // since are measured again, not the whole
        bytes: stored_so_far - parts_so_far + later_parts(&h),
        all_pairs_table: tabled,
        bake_ms: started.elapsed().as_secs_f64() * 1e3,
    };
    Some((h, ht))
}

/// `h` stopped over its byte limit ([`build`]), with the `bytes` counted
/// so far: no corridors, landmarks or tables, the leg tables it has.
fn unfinished(
    mut h: HierarchyData,
    (clusters, aim): (u32, u32),
    bytes: u64,
    started: Instant,
) -> (HierarchyData, HierarchyTables) {
    h.unfinished = true;
    h.stats = HierarchyStats {
        clusters,
        cluster_aim: aim,
        nav_nodes: h.nodes.len() as u32,
        corridors: 0,
        crossings: 0,
        leg_entries: h.leg_cost.len() as u32,
        bytes,
        all_pairs_table: false,
        bake_ms: started.elapsed().as_secs_f64() * 1e3,
    };
    (h, HierarchyTables::default())
}

/// The fewest bytes the leg tables of `h` take (its nav nodes placed, its
/// `open` clusters without tables): [`legs_floor`] per cluster, its leg
/// points counted from the portals touching it ([`cluster_legs`]' samples)
/// and its designer points.
fn leg_table_floor(t: &Tables, h: &HierarchyData, open: &[bool], wide_portal: f32) -> u64 {
    let mut points = vec![0usize; open.len()];
    for (p, &[a, b]) in t.portal_regions.iter().enumerate() {
        let (ca, cb) = (h.region_cluster[a as usize], h.region_cluster[b as usize]);
        let k = portal_samples(t.portal_ends[p], wide_portal).count();
        points[ca as usize] += k;
        if cb != ca {
            points[cb as usize] += k;
        }
    }
    for n in &h.nodes {
        if let NavPointKind::Designer { .. } = n.kind {
            points[n.clusters[0] as usize] += 1;
        }
    }
    (0..open.len())
        .filter(|&c| !open[c])
        .map(|c| legs_floor(points[c], h.nodes_of(c as u32).len()))
        .sum()
}

/// Corridors the hierarchy may hold per region of the mesh (plus
/// [`BUDGET_SLACK`]). The Moving AI maps need at most 4.
const CORRIDORS_PER_REGION: u64 = 16;
/// Pairs of portals that share a region, per portal (plus
/// [`BUDGET_SLACK`]): an exploration of a cluster for the leg tables can
/// enter a region through each portal and leave it through each other one,
/// and measures each of its states to every leg point of the region, once
/// per nav node.
const POINT_PAIRS_PER_PORTAL: u64 = 64;
/// What every budget allows even on the smallest mesh.
const BUDGET_SLACK: u64 = 1 << 16;

fn budget(t: &Tables, per_region: u64) -> u64 {
    per_region * t.region_keys.len() as u64 + BUDGET_SLACK
}

/// Portals past which a region is a hub: the matching rounds of
/// [`partition`] leave it alone, and only dead ends join it
/// ([`Clusters::dead_ends`], a comb's teeth), so the cluster that
/// [`unpaying_clusters`] then leaves open, and the box of its open zone,
/// hold the hub and its pockets rather than the regions beside it. With d
/// portals, one exploration through the hub costs d^2 states, over
/// [`POINT_PAIRS_PER_PORTAL`] d from d = 64 on; no region of the Moving AI
/// maps or the bundled levels has more than 24.
const HUB_PORTALS: u32 = 128;

/// What a cluster may cost beyond its share of [`CORRIDORS_PER_REGION`]
/// and [`POINT_PAIRS_PER_PORTAL`] before it is left open
/// ([`unpaying_clusters`]).
const CLUSTER_SLACK: u64 = 1 << 14;

/// Per cluster of the partition `region_cluster` (`clusters` of them):
/// whether it would not pay for itself. A cluster with k nav nodes costs
/// k^2 / 2 corridors, and a region with d portals d^2 states of each
/// exploration of its cluster; a hub region with thousands of neighbours
/// (a comb's spine, the centre of a hub of walls) makes both quadratic.
/// Such a cluster is left open: no nav node stands on its portals, it has
/// no leg tables, and a query whose path might pass through it takes the
/// flat search ([`crate::mesh::hierarchy::open_zones`]), so the rest of
/// the mesh keeps its hierarchy. The cost counted for a cluster: its
/// corridors over [`CORRIDORS_PER_REGION`] per region, or its regions'
/// d^2 over [`POINT_PAIRS_PER_PORTAL`] per portal end, beyond
/// [`CLUSTER_SLACK`].
fn unpaying_clusters(
    t: &Tables,
    region_cluster: &[u32],
    clusters: u32,
    wide_portal: f32,
) -> Vec<bool> {
    let n = clusters as usize;
    let mut nodes = vec![0u64; n];
    for (p, &[a, b]) in t.portal_regions.iter().enumerate() {
        let (ca, cb) = (region_cluster[a as usize], region_cluster[b as usize]);
        if ca != cb {
            let k = portal_samples(t.portal_ends[p], wide_portal).count() as u64;
            nodes[ca as usize] += k;
            nodes[cb as usize] += k;
        }
    }
    let (mut regions, mut ends, mut pairs) = (vec![0u64; n], vec![0u64; n], vec![0u64; n]);
    for (r, &c) in region_cluster.iter().enumerate() {
        let d = u64::from(t.region_start[r + 1] - t.region_start[r]);
        regions[c as usize] += 1;
        ends[c as usize] += d;
        pairs[c as usize] += d * d;
    }
    (0..n)
        .map(|c| {
            let k = nodes[c];
            k * k.saturating_sub(1) / 2 > CORRIDORS_PER_REGION * regions[c] + CLUSTER_SLACK
                || pairs[c] > POINT_PAIRS_PER_PORTAL * ends[c] + CLUSTER_SLACK
        })
        .collect()
}

/// Whether the hierarchy `h` (its nav nodes placed), less its `open`
/// clusters, pays for itself as a whole: the budgets of
/// [`unpaying_clusters`] over the mesh, where each cluster's slack would
/// add up.
fn within_budget(t: &Tables, h: &HierarchyData, open: &[bool]) -> bool {
    let clusters = open.len() as u32;
    let corridors: u64 = (0..clusters)
        .map(|c| {
            let k = h.nodes_of(c).len() as u64;
            k * k.saturating_sub(1) / 2
        })
        .sum();
    let point_pairs: u64 = (0..t.region_keys.len())
        .filter(|&r| !open[h.region_cluster[r] as usize])
        .map(|r| {
            let d = u64::from(t.region_start[r + 1] - t.region_start[r]);
            d * d
        })
        .sum();
    corridors <= budget(t, CORRIDORS_PER_REGION)
        && point_pairs <= POINT_PAIRS_PER_PORTAL * t.portal_regions.len() as u64 + BUDGET_SLACK
}

/// How far inside a wide portal its end samples sit, world units: a path
/// wrapping the corner passes within this distance of the sample.
const CORNER_INSET: f32 = 0.01;

/// Parts a wide portal's inner samples split it into are at most this many
/// times [`crate::BakeConfig::wide_portal`] wide (32 units by default).
/// A route crosses a cluster boundary at a sample, and the shortest path
/// may cross up to half a part away: the route chosen on the samples can
/// then go a street over. Of the widths tried (16 to 48 units), the
/// narrowest that costs at most one of the 53 Moving AI maps its
/// hierarchy (over the byte bound: AR0316SR, as fast without) and leaves
/// none of their paths over the octile optimum (ARCHITECTURE.md, tuned
/// constants; the measurements in BENCHMARKS.md, session 39).
const SAMPLE_PART_PER_WIDE: f32 = 8.0;

/// Most parts [`portal_samples`] splits a portal into, so that a huge
/// portal (a JSON level's open field) gets a bounded number of samples.
const MAX_SAMPLE_PARTS: u32 = 8;

/// Where a portal is sampled: its midpoint, and for portals wider than
/// `wide` also points next to both ends, where paths that wrap a corner
/// cross, and as many more evenly between the ends as keep the parts at
/// most [`SAMPLE_PART_PER_WIDE`] times `wide` (up to [`MAX_SAMPLE_PARTS`]
/// parts), the inner samples first.
fn portal_samples([l, r]: [Vec2; 2], wide: f32) -> impl Iterator<Item = Vec2> {
    let w = l.distance(r);
    // (the cast saturates, so a huge width clamps to the most parts too)
    let parts = if w > wide {
        ((w / (SAMPLE_PART_PER_WIDE * wide)).ceil() as u32).clamp(2, MAX_SAMPLE_PARTS)
    } else {
        2
    };
    let inner = (1..parts).map(move |k| {
        if 2 * k == parts {
            (l + r) * 0.5
        } else {
            l + (r - l) * (k as f32 / parts as f32)
        }
    });
    let ends = (w > wide).then(|| {
        let inset = (r - l) * (CORNER_INSET / w).min(0.25);
        [l + inset, r - inset]
    });
    inner.chain(ends.into_iter().flatten())
}

/// Clusters a hierarchy shrinks its clusters to have at most, on a mesh of
/// fewer than this many times [`crate::BakeConfig::cluster_size`] regions
/// ([`cluster_sizes`]; the aim's rounding up to a power of two leaves more
/// than 32 from 2,048 regions on). Two ends in one cluster or in neighbouring ones are
/// the flat search's: with k clusters of d neighbours each, about
/// (1 + d) / k of all pairs of ends are. With 64-region clusters, the wide
/// set's 64room_003, AR0316SR and den203d sent 96%, 66% and 100% of their
/// scenarios to the flat search (BENCHMARKS.md, session 21).
pub(crate) const MIN_CLUSTERS: u32 = 64;

/// The smallest clusters [`MIN_CLUSTERS`] shrinks them to, in regions: the
/// smaller a cluster, the more boundary crossings a route makes at sampled
/// points, and the further its path can be from the optimum. On random
/// grids (the hostile-input issue's campaign) 8-region clusters gave 7 paths
/// over the octile optimum in 0.83 million, 16 one in 0.41 million, 24 and
/// 32 none; on the wide set at stride 1, a floor of 16 took Milan_1_256's
/// worst path from 1.009 to 1.022 times polyanya's, 32 to 1.013 (16 also
/// gave AR0012SR and AR0702SR hierarchies within the byte bound, 32 does
/// not; BENCHMARKS.md, session 21).
pub(crate) const SHRUNK_CLUSTER_FLOOR: u32 = 32;

/// The aim tried last, when the hierarchies at the shrunk and the configured
/// aims both break the byte bound. Wide rooms need it: a room region with
/// many portals puts many leg points and nav nodes in one cluster, whose
/// leg tables grow with their product. On the wide set, AR0012SR and
/// AR0702SR fit at 16 and at neither 32 nor 64, and answer 3x faster for
/// it (BENCHMARKS.md, session 22); their worst paths stay within 1.02 times
/// polyanya's and none is over the octile optimum. The price is the
/// smaller clusters' risk that [`SHRUNK_CLUSTER_FLOOR`] avoids elsewhere:
/// on random grids, one path over the octile optimum in 0.41 million at
/// 16 regions, against none at 32; without a hierarchy such a mesh would
/// answer every query with the flat search, exact but slower.
pub(crate) const LAST_RESORT_CLUSTERS: u32 = 16;

/// Meshes of at least this many regions never try [`LAST_RESORT_CLUSTERS`]:
/// there it would build a hierarchy of 256 clusters or more on every bake
/// and edit, for an outcome seen only on small maps of wide rooms (the
/// three such maps of the wide set have 186 to 688 regions). A fixed
/// count, whatever `cluster_size`, so the cost it allows does not grow
/// with the configuration.
const LAST_RESORT_MAX_REGIONS: usize = 4_096;

/// The cluster sizes (aims) a hierarchy is built with, in the order they
/// are tried, for `cluster_size` on a mesh of `regions` regions: first
/// regions / [`MIN_CLUSTERS`] rounded up to a power of two, never below
/// [`SHRUNK_CLUSTER_FLOOR`] nor above `cluster_size` (with the default 64:
/// 32 below 2,112 regions, 64 from there), then, if that is smaller and
/// its hierarchy breaks a budget, `cluster_size` itself; if the first aim
/// is `cluster_size` (a large mesh), half of it instead, never below
/// [`SHRUNK_CLUSTER_FLOOR`]: smaller clusters take fewer leg-table bytes
/// (Aurora with 500 buildings of 4 x 4 cells: 3.06 times the rest of the
/// file at 64, over the default bound, and 2.81 at 32), and a hierarchy
/// that breaks the bound leaves every query to the flat search. Then, on a
/// mesh of fewer than [`LAST_RESORT_MAX_REGIONS`] regions whose first aim
/// is at least twice it, [`LAST_RESORT_CLUSTERS`]. The same on bake,
/// derivation and edit: a function of the mesh and config. The aim moves
/// only where regions / 64 passes a power of two, so an edit, which adds
/// or removes a few regions, rarely moves it (a moved aim partitions the
/// whole mesh anew). Rounding up rather than down: on the ten wide-set
/// maps of 2,048 to 4,095 regions at stride 1, aims of 64 gave the same
/// speed within the machine's noise and worst paths equal or shorter
/// (Archipelago 1.0098 to 1.0046 times polyanya's, Tribes 1.0172 to
/// 1.0137); rounding down gave Boston_1_512 one of 1.0504 (BENCHMARKS.md,
/// session 22).
pub(crate) fn cluster_sizes(cluster_size: u32, regions: usize) -> impl Iterator<Item = u32> {
    let per_cluster = u32::try_from(regions / MIN_CLUSTERS as usize).unwrap_or(u32::MAX);
    // at most `cluster_size` (at most 1,024) before rounding: no overflow
    let step = per_cluster.min(cluster_size).max(1).next_power_of_two();
    let shrunk = cluster_size.min(step.max(SHRUNK_CLUSTER_FLOOR));
    // a mesh large enough to start at `cluster_size` tries half of it next
    let half = (cluster_size / 2).max(SHRUNK_CLUSTER_FLOOR);
    let halved = (shrunk == cluster_size && half < cluster_size).then_some(half);
    // not where it would build about as many clusters as the first aim
    let last_resort = regions < LAST_RESORT_MAX_REGIONS && 2 * LAST_RESORT_CLUSTERS <= shrunk;
    std::iter::once(shrunk)
        .chain((shrunk < cluster_size).then_some(cluster_size))
        .chain(halved)
        .chain(last_resort.then_some(LAST_RESORT_CLUSTERS))
}

/// How far past its aim ([`cluster_sizes`]) a cluster may grow by taking in dead ends
/// ([`Clusters::dead_ends`]: clusters of at most a quarter of the size with
/// one neighbouring cluster). A dead end adds leg points to its neighbour's
/// leg tables but no nav node, and takes its own nav points and their
/// corridors away, so the tables stay about as large; the factor bounds
/// how much larger one cluster's explorations get. (A query's refinement
/// of a short route keeps its budget, set by the aim: through a
/// grown cluster it can run out and keep the stitched corridor.)
/// Measured (BENCHMARKS.md, session 16): an open street of an eroded
/// Berlin_0_512 collects a few hundred pockets: at radius 0.45 the matching
/// alone leaves 1,030 clusters for 6,753 regions, a factor of 4 (and no
/// size limit on the dead end) 473, both with hierarchies over their byte
/// bound; this factor with the quarter-size limit leaves 93 (778 KB, 1.5x
/// the rest of the file). With no limit on the dead end's size, whole maze
/// corridors joined and maze queries slowed up to 20x; with it, the wide
/// set at radius 0 answers as fast as without the phase (geometric mean).
const DEAD_END_GROWTH: u32 = 16;

/// The side of the square blocks of tiles a tiled mesh's clusters keep
/// within, world units (rounded up to whole tiles): an edit partitions
/// again only the blocks it changed. Measured on the bundled maps at tiles
/// of 64 (BENCHMARKS.md, 2026-11-28): blocks of 256 add 0 to 5% clusters
/// and nav nodes and change the hierarchy's bytes by -3% to +3%.
const BLOCK_SIDE: f64 = 256.0;

/// For a mesh tiled by `tiling`, the block of tiles ([`BLOCK_SIDE`]) each
/// dense region `r` of its tables `t` lies in, as `block(t, r)`: by the
/// region's corners' mean, which is inside the convex polygon, and the
/// polygon inside one tile.
fn block_of(tiling: &TileGrid) -> impl Fn(&Tables, u32) -> u32 {
    let side = tiling.size * (BLOCK_SIDE / tiling.size).ceil().max(1.0);
    let origin = DVec2::new(tiling.first[0] as f64, tiling.first[1] as f64) * tiling.size;
    let blocks = |count: u32| ((f64::from(count) * tiling.size) / side).ceil().max(1.0) as u32;
    let (across, up) = (blocks(tiling.count[0]), blocks(tiling.count[1]));
    move |t: &Tables, r: u32| {
        let v = t.polygon(r);
        let mid = v.iter().map(|p| p.as_dvec2()).sum::<DVec2>() / v.len().max(1) as f64;
        let at = ((mid - origin) / side).floor().max(DVec2::ZERO);
        (at.y as u32).min(up - 1) * across + (at.x as u32).min(across - 1)
    }
}

/// What [`partition_blocks`] takes from the partition of the mesh an edit
/// replaced: its tables, each old region's cluster, and its region in the
/// new mesh (`u32::MAX` where the edit changed it).
struct Blocked<'a> {
    tables: &'a Tables,
    clusters: &'a [u32],
    kept: &'a [u32],
}

/// The partition of a tiled mesh: [`partition`]'s rounds run on each block
/// of tiles ([`block_of`]) on its own, over the portals inside it,
/// and the clusters numbered in the order of their first region. A block
/// whose regions an edit all kept, and where it dropped none (`old`),
/// keeps its clusters: its regions and the portals between them are the
/// same, in the same order, so the rounds would give them again.
fn partition_blocks(
    t: &Tables,
    tiling: &TileGrid,
    max: u32,
    old: Option<Blocked<'_>>,
) -> (Vec<u32>, u32) {
    let n = t.region_keys.len();
    let block = block_of(tiling);
    let blocks: Vec<u32> = (0..n as u32).map(|r| block(t, r)).collect();
    let count = blocks.iter().max().map_or(0, |&b| b as usize + 1);
    // the old region of each new one, and the blocks the edit changed:
    // those of the old regions it dropped and of the new regions
    let mut was = vec![u32::MAX; n];
    let mut changed = vec![old.is_none(); count];
    if let Some(old) = &old {
        for (o, &r) in old.kept.iter().enumerate() {
            match was.get_mut(r as usize) {
                Some(w) => *w = o as u32,
                None => {
                    let b = block(old.tables, o as u32) as usize;
                    if let Some(c) = changed.get_mut(b) {
                        *c = true;
                    }
                }
            }
        }
        for (r, &w) in was.iter().enumerate() {
            if w == u32::MAX {
                changed[blocks[r] as usize] = true;
            }
        }
    }
    // each region's cluster, as a key: an old cluster's number, or past
    // them, a new one's
    let base = old
        .as_ref()
        .map_or(0, |o| o.clusters.iter().max().map_or(0, |&c| c + 1));
    let mut key = vec![u32::MAX; n];
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); count];
    for r in 0..n {
        let b = blocks[r] as usize;
        match &old {
            Some(old) if !changed[b] => key[r] = old.clusters[was[r] as usize],
            _ => members[b].push(r as u32),
        }
    }
    #[cfg(test)]
    if old.is_some() {
        // the blocks holding regions whose clusters were kept
        let mut kept: Vec<bool> = changed.iter().map(|&c| !c).collect();
        let kept = blocks
            .iter()
            .filter(|&&b| std::mem::take(&mut kept[b as usize]))
            .count();
        tests::REUSED_BLOCKS.with(|n| n.set(n.get() + kept));
    }
    let mut local = vec![u32::MAX; n];
    let mut next = base;
    let mut inside = Vec::new();
    for regions in members.iter().filter(|m| !m.is_empty()) {
        for (i, &r) in regions.iter().enumerate() {
            local[r as usize] = i as u32;
        }
        // the block's portals, in portal order
        inside.clear();
        for &r in regions {
            for &p in t.portals_of(r) {
                let [a, b] = t.portal_regions[p as usize];
                // each once, from its first region
                if a == r && local[b as usize] != u32::MAX {
                    inside.push(p);
                }
            }
        }
        // regions in order, each one's portals in edge order: portal order
        debug_assert!(inside.windows(2).all(|w| w[0] < w[1]));
        let links = inside.iter().map(|&p| {
            let [a, b] = t.portal_regions[p as usize].map(|r| local[r as usize]);
            let [l, r] = t.portal_ends[p as usize];
            (a.min(b), a.max(b), f64::from(l.distance(r)))
        });
        let (labels, clusters) = cluster_links(regions.len(), links.collect(), max);
        for (&r, &c) in regions.iter().zip(&labels) {
            key[r as usize] = next + c;
        }
        next += clusters;
        for &r in regions {
            local[r as usize] = u32::MAX;
        }
    }
    // numbered in the order of their first region
    let mut number = vec![u32::MAX; next as usize];
    let mut clusters = 0;
    let labels = key
        .iter()
        .map(|&k| {
            let c = &mut number[k as usize];
            if *c == u32::MAX {
                *c = clusters;
                clusters += 1;
            }
            *c
        })
        .collect();
    (labels, clusters)
}

/// Partitions the regions into clusters of about `max` regions by rounds of
/// heavy-edge matching: each round pairs neighbouring clusters, heaviest
/// first, where the weight of two clusters is the total width of the portals
/// between them over the product of their sizes. Wide openings merge early,
/// so the portals left between clusters are the narrow ones (the
/// chokepoints), and small clusters merge first, so clusters grow evenly.
/// A second phase lets clusters under a quarter of `max` (dead-end pockets
/// left beside a full cluster) join a neighbour up to `2 * max`, since each
/// would otherwise cost a nav point for a few regions. A third lets
/// clusters with a single neighbouring cluster join it, up to
/// [`DEAD_END_GROWTH`] times `max`. Deterministic.
fn partition(t: &Tables, max: u32) -> (Vec<u32>, u32) {
    let portals = t.portal_regions.iter().zip(&t.portal_ends);
    let links = portals.map(|(&[a, b], &[l, r])| (a.min(b), a.max(b), f64::from(l.distance(r))));
    cluster_links(t.region_cost.len(), links.collect(), max)
}

/// [`partition`]'s rounds on `n` regions joined by `links` (pairs of
/// regions `(a, b)`, `a <= b`, in portal order, with the portal's width).
fn cluster_links(n: usize, links: Vec<(u32, u32, f64)>, max: u32) -> (Vec<u32>, u32) {
    let mut portals = vec![0u32; n];
    for &(a, b, _) in &links {
        if a != b {
            portals[a as usize] += 1;
            portals[b as usize] += 1;
        }
    }
    let mut state = Clusters {
        labels: Vec::new(),
        size: vec![1; n],
        hub: portals.iter().map(|&d| d > HUB_PORTALS).collect(),
        count: n as u32,
        links: Vec::new(),
        scratch: Scratch::default(),
    };
    state.links = state.contract(links);
    while state.round(|sa, sb| sa + sb <= max) {}
    while state.round(|sa, sb| sa.min(sb) < max / 4 && sa + sb <= 2 * max) {}
    while state.dead_ends(max / 4, DEAD_END_GROWTH * max) {}
    // each region's cluster: its label through every round, composed from
    // the last round back, each step over the clusters before that round
    // (most rounds are late ones, over few clusters)
    let mut rounds = state.labels.iter().rev();
    let mut composed = match rounds.next() {
        Some(last) => last.clone(),
        None => (0..n as u32).collect(),
    };
    for round in rounds {
        composed = round.iter().map(|&c| composed[c as usize]).collect();
    }
    (composed, state.count)
}

/// The partition's state: the clusters' labels after each round, each
/// cluster's size, and the graph of clusters, contracted after every round
/// so that a round costs what the clusters' graph holds, not the mesh's
/// portals.
struct Clusters {
    /// Per round, each cluster's label after it: composed into each
    /// region's cluster once at the end rather than every round.
    labels: Vec<Vec<u32>>,
    size: Vec<u32>,
    /// Per cluster: whether it holds a hub region ([`HUB_PORTALS`]).
    hub: Vec<bool>,
    count: u32,
    /// One entry per pair of neighbouring clusters `(a, b)`, `a < b`, with
    /// the total width of the portals between them.
    links: Vec<(u32, u32, f64)>,
    scratch: Scratch,
}

/// Buffers [`Clusters::contract`] reuses from round to round.
#[derive(Default)]
struct Scratch {
    start: Vec<u32>,
    fill: Vec<u32>,
    bucketed: Vec<(u32, f64)>,
    /// Per cluster: where its pair with the cluster being gathered sits in
    /// the output; `u32::MAX`, or a place before the current bucket's
    /// (left from an earlier cluster), when it has none yet.
    at: Vec<u32>,
    /// [`Clusters::round`]'s sort keys.
    candidates: Vec<u128>,
}

impl Clusters {
    /// Merges the entries of `links` (pairs of current clusters, `a <= b`)
    /// that name the same pair, summing their widths, and drops pairs
    /// inside one cluster. Linear: the entries are bucketed by `a`, and
    /// within a bucket each `b` is found through `scratch`. The order of
    /// the output (by `a`, then by first appearance) and of each sum (the
    /// order of `links`) depends only on the input.
    fn contract(&mut self, links: Vec<(u32, u32, f64)>) -> Vec<(u32, u32, f64)> {
        let count = self.count as usize;
        let Scratch {
            start,
            fill,
            bucketed,
            at,
            ..
        } = &mut self.scratch;
        start.clear();
        start.resize(count + 1, 0);
        for &(a, b, _) in &links {
            if a != b {
                start[a as usize + 1] += 1;
            }
        }
        for c in 0..count {
            start[c + 1] += start[c];
        }
        bucketed.clear();
        bucketed.resize(start[count] as usize, (0, 0.0));
        fill.clear();
        fill.extend_from_slice(start);
        for &(a, b, w) in &links {
            if a != b {
                bucketed[fill[a as usize] as usize] = (b, w);
                fill[a as usize] += 1;
            }
        }
        at.clear();
        at.resize(count, u32::MAX);
        let mut out = links;
        out.clear();
        for a in 0..count {
            let first = out.len();
            for &(b, w) in &bucketed[start[a] as usize..start[a + 1] as usize] {
                let i = at[b as usize];
                if i != u32::MAX && i as usize >= first {
                    out[i as usize].2 += w;
                } else {
                    at[b as usize] = out.len() as u32;
                    out.push((a as u32, b, w));
                }
            }
        }
        out
    }

    /// One round of matching among the pairs `accept` allows; false when none merged.
    fn round(&mut self, accept: impl Fn(u32, u32) -> bool) -> bool {
        // heaviest first, then by the pair: one integer key per candidate,
        // the weight's bits (a weight is finite and at least 0, so its bits
        // order like it) inverted above the pair
        let mut candidates = std::mem::take(&mut self.scratch.candidates);
        candidates.clear();
        candidates.reserve(self.links.len());
        for &(a, b, w) in &self.links {
            let (sa, sb) = (self.size[a as usize], self.size[b as usize]);
            if accept(sa, sb) && !self.hub[a as usize] && !self.hub[b as usize] {
                let weight = w / (f64::from(sa) * f64::from(sb));
                candidates.push(
                    u128::from(!weight.to_bits()) << 64 | u128::from(a) << 32 | u128::from(b),
                );
            }
        }
        if candidates.is_empty() {
            self.scratch.candidates = candidates;
            return false;
        }
        candidates.sort_unstable();
        let count = self.count as usize;
        let mut into: Vec<u32> = (0..self.count).collect();
        let mut matched = vec![false; count];
        for (a, b) in candidates.iter().map(|&k| ((k >> 32) as u32, k as u32)) {
            if !matched[a as usize] && !matched[b as usize] {
                matched[a as usize] = true;
                matched[b as usize] = true;
                into[b as usize] = a;
            }
        }
        self.scratch.candidates = candidates;
        self.merge(&into);
        true
    }

    /// One round of dead ends joining their neighbour: a cluster of at most
    /// `pocket` regions with one neighbouring cluster joins it while the two
    /// hold at most `limit` regions; false when none joined. No route
    /// between two other clusters passes through a dead end, so its
    /// boundary nav points (and
    /// the corridors between them and the rest of its neighbour's) are
    /// dropped for nothing. An eroded mesh needs this: cut corners leave
    /// strings of small regions along an open street's walls, each a pocket
    /// beside the street's region, which the matching leaves as clusters of
    /// their own once the street's cluster is full.
    fn dead_ends(&mut self, pocket: u32, limit: u32) -> bool {
        const NONE: u32 = u32::MAX;
        const MANY: u32 = u32::MAX - 1;
        let count = self.count as usize;
        let mut neighbour = vec![NONE; count];
        for &(ca, cb, _) in &self.links {
            for (c, other) in [(ca, cb), (cb, ca)] {
                let n = &mut neighbour[c as usize];
                *n = match *n {
                    NONE => other,
                    m if m == other => m,
                    _ => MANY,
                };
            }
        }
        let mut into: Vec<u32> = (0..self.count).collect();
        let mut size = self.size.clone();
        let mut joined_by_others = vec![false; count];
        let mut joined = false;
        for c in 0..count {
            let d = neighbour[c];
            // one level of joins per round: a cluster others joined stays,
            // and one that joined another takes no one
            if d >= MANY || joined_by_others[c] || into[d as usize] != d {
                continue;
            }
            if size[c] <= pocket && size[c] + size[d as usize] <= limit {
                size[d as usize] += size[c];
                into[c] = d;
                joined_by_others[d as usize] = true;
                joined = true;
            }
        }
        if joined {
            self.merge(&into);
        }
        joined
    }

    /// Relabels the clusters after each cluster `c` joined `into[c]` (a
    /// cluster that others join joins none itself), keeping their order,
    /// and contracts the graph of clusters to match.
    fn merge(&mut self, into: &[u32]) {
        let count = self.count as usize;
        // compact labels in order
        let mut label = vec![u32::MAX; count];
        let mut next = 0;
        for c in 0..count {
            if into[c] == c as u32 {
                label[c] = next;
                next += 1;
            }
        }
        for c in 0..count {
            label[c] = label[into[c] as usize];
        }
        let mut size = vec![0u32; next as usize];
        let mut hub = vec![false; next as usize];
        for c in 0..count {
            size[label[c] as usize] += self.size[c];
            hub[label[c] as usize] |= self.hub[c];
        }
        self.size = size;
        self.hub = hub;
        self.count = next;
        let mut links = std::mem::take(&mut self.links);
        for (a, b, _) in &mut links {
            let (la, lb) = (label[*a as usize], label[*b as usize]);
            (*a, *b) = (la.min(lb), la.max(lb));
        }
        self.links = self.contract(links);
        self.labels.push(label);
    }
}

/// Expansions one exploration of a cluster may make before its leg table
/// settles for what it found (every entry is still the cost of a real
/// path): far more than a cluster of `MAX_CLUSTER_SIZE` regions needs.
const EXPLORE_BUDGET: u32 = 1 << 22;

/// Fills the points and leg tables of every cluster: for each nav node, one
/// exact search over its cluster ([`PortalSearch::explore`]) gives the
/// shortest path inside the cluster to every leg point, and its route.
/// Returns, per cluster, the old cluster its tables were copied from, and
/// what the tables' entries add to the measured bytes ([`leg_entry_bytes`]).
///
/// With a byte `limit`, the tables that need no search come first: those
/// `kept` copies, and each other cluster's leg points. If what they
/// measure, with each unsearched cluster at its least size
/// ([`legs_floor`]), is already over the limit, the searches would be made
/// for nothing: `h` keeps the copied tables, the others empty
/// ([`HierarchyData::legs_missing`]), and the error is that lower bound of
/// the whole's bytes. A bake's first attempts have nothing to copy, so this
/// is their floor; an edit's copies all but the clusters it touched, so its
/// bound is nearly the exact size.
fn build_leg_tables(
    t: &Tables,
    h: &mut HierarchyData,
    (wide_portal, limit): (f32, Option<f64>),
    kept: Option<&Kept<'_>>,
    open: &[bool],
) -> Result<(Vec<Option<u32>>, u64), u64> {
    let clusters = h.cluster_start.len() - 1;
    // each cluster's regions, in order
    let region_of = h.region_cluster.iter().enumerate();
    let (cluster_region_start, cluster_regions) =
        bucketed(clusters, region_of.map(|(r, &c)| (c, r as u32)));
    let regions_of_cluster = |c: usize| {
        let (from, to) = (cluster_region_start[c], cluster_region_start[c + 1]);
        &cluster_regions[from as usize..to as usize]
    };
    let regions = h.region_cluster.len();
    // clusters are independent: the same tables on any number of threads,
    // in cluster order
    let each = |h: &HierarchyData, which: &[usize], search: bool| -> Vec<ClusterLegs> {
        let one = |s: &mut LegScratch, &c: &usize| {
            // an open cluster has no nav node, so no leg tables: none of
            // its points would reach one
            if open[c] {
                return ClusterLegs::default();
            }
            let cluster = (c as u32, regions_of_cluster(c));
            let mut legs = cluster_legs(t, h, cluster, (wide_portal, kept), s, search);
            if !legs.unsearched {
                legs.bytes =
                    leg_entry_bytes(&legs.points, legs.cost.len(), &legs.route, &legs.steps);
            }
            legs
        };
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            which
                .par_iter()
                .map_init(|| LegScratch::new(regions), one)
                .collect()
        }
        #[cfg(not(feature = "parallel"))]
        {
            let mut s = LegScratch::new(regions);
            which.iter().map(|c| one(&mut s, c)).collect()
        }
    };
    // with nothing to copy, the least size alone was checked (`build`)
    let all: Vec<usize> = (0..clusters).collect();
    let mut tables = each(h, &all, limit.is_none() || kept.is_none());
    let unsearched: Vec<usize> = all.into_iter().filter(|&c| tables[c].unsearched).collect();
    if let Some(limit) = limit.filter(|_| !unsearched.is_empty()) {
        // the tables' offsets and lengths are left out: a lower bound still
        let part = |l: &ClusterLegs, nodes: usize| {
            if l.unsearched {
                legs_floor(l.points.len(), nodes)
            } else {
                l.bytes
            }
        };
        let parts = tables.iter().enumerate();
        let parts = parts.map(|(c, l)| part(l, h.nodes_of(c as u32).len()));
        let least = h.measured_bytes() + parts.sum::<u64>();
        if least as f64 > limit {
            // an unsearched cluster's part of the tables is empty
            h.legs_missing = tables.iter().map(|l| l.unsearched).collect();
            for l in tables.iter_mut().filter(|l| l.unsearched) {
                l.points.clear();
            }
            append_leg_tables(h, &tables);
            return Err(least);
        }
        let searched = each(h, &unsearched, true);
        for (c, legs) in unsearched.into_iter().zip(searched) {
            tables[c] = legs;
        }
    }
    append_leg_tables(h, &tables);
    let entries = tables.iter().map(|l| l.bytes).sum();
    Ok((tables.iter().map(|l| l.kept_from).collect(), entries))
}

/// The fewest bytes the leg tables of a cluster with `points` leg points
/// and `nodes` nav nodes take in the file (as [`HierarchyData::measured_bytes`]
/// counts them): each leg point at least 10 (a point, and a portal and a
/// region of at least a byte each), and each pair of a point and a nav node
/// at least 5 (a cost, and a route step of at least a byte).
fn legs_floor(points: usize, nodes: usize) -> u64 {
    let (points, nodes) = (points as u64, nodes as u64);
    10 * points + 5 * points * nodes
}

/// Appends the clusters' `tables`, in order, to `h`'s empty leg tables.
fn append_leg_tables(h: &mut HierarchyData, tables: &[ClusterLegs]) {
    // sized once: the clusters' tables are appended in order
    let total = |part: fn(&ClusterLegs) -> usize| tables.iter().map(part).sum::<usize>();
    h.leg_cost.reserve_exact(total(|l| l.cost.len()));
    h.leg_route.reserve_exact(total(|l| l.route.len()));
    h.leg_steps.reserve_exact(total(|l| l.steps.len()));
    h.points.reserve_exact(total(|l| l.points.len()));
    h.step_start.reserve_exact(tables.len() + 1);
    h.leg_start.reserve_exact(tables.len());
    h.point_start.reserve_exact(tables.len() + 1);
    h.point_start.push(0);
    for legs in tables {
        h.step_start.push(h.leg_steps.len() as u32);
        h.leg_start.push(h.leg_cost.len() as u32);
        h.leg_cost.extend_from_slice(&legs.cost);
        h.leg_route.extend_from_slice(&legs.route);
        h.leg_steps.extend_from_slice(&legs.steps);
        h.points.extend_from_slice(&legs.points);
        h.point_start.push(h.points.len() as u32);
    }
    h.step_start.push(h.leg_steps.len() as u32);
}

/// One cluster's part of the leg tables (see [`build_leg_tables`]): its leg
/// points, per (point, nav node) the cost and the route's last step, and
/// the steps (numbered from 1 within the cluster).
#[derive(Default)]
struct ClusterLegs {
    points: Vec<LegPoint>,
    cost: Vec<f32>,
    route: Vec<u32>,
    steps: Vec<[u32; 2]>,
    /// The cluster of the replaced hierarchy these were copied from.
    kept_from: Option<u32>,
    /// Not searched (asked not to, and nothing to copy): the leg points
    /// alone, no costs, routes or steps.
    unsearched: bool,
    /// What the entries add to the hierarchy's measured bytes
    /// ([`leg_entry_bytes`]); 0 while unsearched.
    bytes: u64,
}

/// What a rebuild can take from the hierarchy it replaces ([`Previous`]),
/// with the look-ups [`Kept::legs`] needs.
struct Kept<'a> {
    previous: &'a Previous<'a>,
    /// Per dense region of the new mesh: the same region in the old one,
    /// `u32::MAX` for a new region.
    old_of: Vec<u32>,
    /// Regions per old cluster.
    old_cluster_len: Vec<u32>,
    /// Per crossing of the old mesh: the new mesh's crossing for it (the
    /// same move between two kept regions, through the portal with the
    /// same ends), `u32::MAX` where there is none. Found once per rebuild
    /// rather than once per leg step: a kept cluster's steps renumber
    /// every crossing they name.
    new_crossing: Vec<u32>,
    /// Per old cluster: its corridors' place in the old `corridors`
    /// (`None` if it had none).
    old_corridors: Vec<Option<std::ops::Range<usize>>>,
}

impl<'a> Kept<'a> {
    fn new(previous: &'a Previous<'a>, t: &Tables) -> Kept<'a> {
        let mut old_of = vec![u32::MAX; t.region_keys.len()];
        for (old, &new) in previous.regions.iter().enumerate() {
            if let Some(slot) = old_of.get_mut(new as usize) {
                *slot = old as u32;
            }
        }
        let oh = previous.hierarchy;
        let mut old_cluster_len = vec![0u32; oh.cluster_start.len().saturating_sub(1)];
        for &c in &oh.region_cluster {
            if let Some(n) = old_cluster_len.get_mut(c as usize) {
                *n += 1;
            }
        }
        // a portal's two crossings are found together: the way back
        // through the same portal is the other crossing of its new one
        let portals = u32::try_from(previous.tables.portal_ends.len()).unwrap_or(u32::MAX / 2);
        let new_crossing = (0..portals)
            .flat_map(|p| match Self::find_crossing(previous, t, 2 * p) {
                Some(x) => [x, x ^ 1],
                None => [u32::MAX; 2],
            })
            .collect();
        // the clusters' corridors come in cluster order, then designer pairs'
        let mut old_corridors: Vec<Option<std::ops::Range<usize>>> =
            vec![None; old_cluster_len.len()];
        for (i, e) in oh.corridors.iter().enumerate() {
            if let Some(r) = old_corridors.get_mut(e.cluster as usize) {
                let run = r.get_or_insert(i..i);
                debug_assert_eq!(run.end, i, "a cluster's corridors are one run");
                run.end = i + 1;
            }
        }
        Kept {
            previous,
            old_of,
            old_cluster_len,
            new_crossing,
            old_corridors,
        }
    }

    /// The old leg tables of cluster `c` (its `regions`, its leg `points`
    /// as built for it) when the old hierarchy had a cluster of exactly
    /// these regions, all kept, with the same nav nodes (place, kind, the
    /// region a search from it starts in) and the same leg points, in the
    /// same order: every search behind the tables stays in the cluster, so
    /// they come out the same but for the crossings' numbers, renumbered
    /// here. `None` when anything differs.
    fn legs(
        &self,
        h: &HierarchyData,
        (c, regions): (u32, &[u32]),
        points: &[LegPoint],
    ) -> Option<ClusterLegs> {
        let oh = self.previous.hierarchy;
        let old = |r: u32| {
            self.old_of
                .get(r as usize)
                .copied()
                .filter(|&o| o != u32::MAX)
        };
        let oc = *oh.region_cluster.get(old(*regions.first()?)? as usize)?;
        if oh.legs_missing_in(oc) {
            return None; // left unsearched: nothing to copy
        }
        if *self.old_cluster_len.get(oc as usize)? as usize != regions.len() {
            return None;
        }
        for &r in regions {
            if oh.region_cluster.get(old(r)? as usize) != Some(&oc) {
                return None;
            }
        }
        let same_place =
            |a: Vec2, b: Vec2| a.x.to_bits() == b.x.to_bits() && a.y.to_bits() == b.y.to_bits();
        let (nodes, old_nodes) = (h.nodes_of(c), oh.nodes_of(oc));
        if nodes.len() != old_nodes.len() {
            return None;
        }
        for (&n, &o) in nodes.iter().zip(old_nodes) {
            let (a, b) = (&h.nodes[n as usize], oh.nodes.get(o as usize)?);
            let (from, old_from) = (a.region_in(c), b.region_in(oc));
            let kind = match (a.kind, b.kind) {
                (NavPointKind::Boundary { .. }, NavPointKind::Boundary { .. }) => true,
                (NavPointKind::Designer { index: i }, NavPointKind::Designer { index: j }) => {
                    i == j
                }
                _ => false,
            };
            if !kind || !same_place(a.at, b.at) || old(from) != Some(old_from) {
                return None;
            }
        }
        let old_points = oh.points_of(oc);
        if points.len() != old_points.len() {
            return None;
        }
        for (a, b) in points.iter().zip(old_points) {
            if !same_place(a.at, b.at)
                || old(a.region) != Some(b.region)
                || a.portal.is_some() != b.portal.is_some()
            {
                return None;
            }
        }
        let c = oc as usize;
        let old_steps = oh
            .leg_steps
            .get(*oh.step_start.get(c)? as usize..*oh.step_start.get(c + 1)? as usize)?;
        // sized once (collecting into an `Option` would grow it step by step)
        let mut steps = Vec::with_capacity(old_steps.len());
        for &[step, x] in old_steps {
            let new = *self.new_crossing.get(x as usize)?;
            if new == u32::MAX {
                return None;
            }
            steps.push([step, new]);
        }
        let entries = *oh.leg_start.get(c)? as usize..*oh.leg_start.get(c + 1)? as usize;
        Some(ClusterLegs {
            points: points.to_vec(),
            cost: oh.leg_cost.get(entries.clone())?.to_vec(),
            route: oh.leg_route.get(entries)?.to_vec(),
            steps,
            kept_from: Some(oc),
            unsearched: false,
            bytes: 0,
        })
    }

    /// Appends the corridors of new cluster `c`, whose leg tables
    /// [`Kept::legs`] copied from old cluster `oc` (`new_nodes`: its nav
    /// nodes in the new hierarchy), as walking them would make
    /// them: the old ones, in order, with their nav nodes, regions and
    /// crossings renumbered (the walks follow the same steps, renumbered).
    /// False, having appended nothing, if a piece has no new number.
    ///
    /// `node_map` is scratch: per old nav node, its new number, where this
    /// cluster's are written (others may hold a number from an earlier
    /// cluster, which a corridor of this one never names).
    fn corridors(
        &self,
        (c, oc): (u32, u32),
        new_nodes: &[u32],
        (corridors, crossings): (&mut Vec<Corridor>, &mut Vec<u32>),
        node_map: &mut Vec<u32>,
    ) -> bool {
        let oh = self.previous.hierarchy;
        if oh.unfinished {
            return false; // it has no corridors to take
        }
        let (from, to) = (corridors.len(), crossings.len());
        let mut copy = || -> Option<()> {
            // the nav nodes match in order (`Kept::legs` checked)
            node_map.resize(oh.nodes.len(), u32::MAX);
            for (&o, &n) in oh.nodes_of(oc).iter().zip(new_nodes) {
                *node_map.get_mut(o as usize)? = n;
            }
            let node = |o: u32| {
                let n = *node_map.get(o as usize)?;
                (n != u32::MAX).then_some(n)
            };
            let region = |r: u32| {
                let new = *self.previous.regions.get(r as usize)?;
                (new != u32::MAX).then_some(new)
            };
            let Some(range) = self.old_corridors.get(oc as usize)?.clone() else {
                return Some(()); // a cluster whose nav nodes have no corridors
            };
            for e in oh.corridors.get(range)? {
                let first = crossings.len() as u32;
                for &x in oh
                    .crossings
                    .get(e.first as usize..(e.first + e.len) as usize)?
                {
                    let new = *self.new_crossing.get(x as usize)?;
                    if new == u32::MAX {
                        return None;
                    }
                    crossings.push(new);
                }
                corridors.push(Corridor {
                    ends: [node(e.ends[0])?, node(e.ends[1])?],
                    regions: [region(e.regions[0])?, region(e.regions[1])?],
                    cluster: c,
                    cost: e.cost,
                    first,
                    len: e.len,
                });
            }
            Some(())
        };
        let copied = copy().is_some();
        if !copied {
            corridors.truncate(from);
            crossings.truncate(to);
        }
        copied
    }

    /// The new mesh's crossing for the old mesh's crossing `x`: the same
    /// move between two kept regions, through the portal with the same ends.
    fn find_crossing(previous: &Previous<'_>, t: &Tables, x: u32) -> Option<u32> {
        let ot = previous.tables;
        let new = |r: u32| {
            previous
                .regions
                .get(r as usize)
                .copied()
                .filter(|&n| (n as usize) < t.region_keys.len())
        };
        let ends = *ot.portal_ends.get((x / 2) as usize)?;
        let (from, into) = (new(ot.entered(x ^ 1))?, new(ot.entered(x))?);
        t.portals_of(from).iter().find_map(|&p| {
            let (crossing, entered) = t.crossing_out_of(p, from)?;
            if entered != into {
                return None; // most portals: no need to compare their ends
            }
            let [l, r] = t.portal_ends[p as usize];
            let same = (l == ends[0] && r == ends[1]) || (l == ends[1] && r == ends[0]);
            same.then_some(crossing)
        })
    }
}

/// Scratch space of [`cluster_legs`], one per thread.
struct LegScratch {
    search: PortalSearch,
    /// Per dense region: its place in the cluster being built.
    local_region: Vec<u32>,
    /// Per state of the exploration under way: its leg step, or
    /// [`UNNUMBERED`].
    step_of: Vec<u32>,
    best: Vec<(f32, u32)>,
    /// States on the way to the point being numbered, with the crossing
    /// each made.
    chain: Vec<(u32, u32)>,
    /// The cluster's leg points touching each of its regions: pairs of
    /// (the region's place in the cluster, point) as they are found, then
    /// by region (`touching`, from `touching_start`), in that order.
    touch: Vec<(u32, u32)>,
    touching_start: Vec<u32>,
    touching: Vec<u32>,
}

/// A state whose leg step is not numbered yet (`LegScratch::step_of`).
const UNNUMBERED: u32 = u32::MAX;

impl LegScratch {
    fn new(regions: usize) -> LegScratch {
        LegScratch {
            search: PortalSearch::default(),
            local_region: vec![u32::MAX; regions],
            step_of: Vec::new(),
            best: Vec::new(),
            chain: Vec::new(),
            touch: Vec::new(),
            touching_start: Vec::new(),
            touching: Vec::new(),
        }
    }
}

/// The leg tables of cluster `c` (whose regions are `regions`): copied when
/// `kept` has them, else searched, or with `may_search` false its leg points
/// alone, marked unsearched.
fn cluster_legs(
    t: &Tables,
    h: &HierarchyData,
    (c, regions): (u32, &[u32]),
    (wide_portal, kept): (f32, Option<&Kept<'_>>),
    s: &mut LegScratch,
    may_search: bool,
) -> ClusterLegs {
    let LegScratch {
        search,
        local_region,
        step_of,
        best,
        chain,
        touch,
        touching_start,
        touching,
    } = s;
    for (i, &r) in regions.iter().enumerate() {
        local_region[r as usize] = i as u32;
    }
    // points: each portal touching the cluster once (from the cluster's
    // side), then designer points; per region, the points touching it.
    // About a point per portal of its regions (an interior one counted
    // from both sides, a wide one sampled more than once)
    let portals = regions.iter().map(|&r| t.portals_of(r).len()).sum();
    let mut points: Vec<LegPoint> = Vec::with_capacity(portals);
    touch.clear();
    for &r in regions {
        for &p in t.portals_of(r) {
            let [a, b] = t.portal_regions[p as usize];
            let other = if a == r { b } else { a };
            let interior = h.region_cluster[other as usize] == c;
            if interior && other < r {
                continue; // added from the other side already
            }
            for at in portal_samples(t.portal_ends[p as usize], wide_portal) {
                let i = points.len() as u32;
                points.push(LegPoint {
                    at,
                    portal: Some(p),
                    region: r,
                });
                touch.push((local_region[r as usize], i));
                if interior {
                    touch.push((local_region[other as usize], i));
                }
            }
        }
    }
    for &n in h.nodes_of(c) {
        let node = &h.nodes[n as usize];
        if let NavPointKind::Designer { .. } = node.kind {
            let i = points.len() as u32;
            points.push(LegPoint {
                at: node.at,
                portal: None,
                region: node.regions[0],
            });
            touch.push((local_region[node.regions[0] as usize], i));
        }
    }
    if let Some(legs) = kept.and_then(|k| k.legs(h, (c, regions), &points)) {
        return legs;
    }
    if !may_search {
        return ClusterLegs {
            points,
            unsearched: true,
            ..ClusterLegs::default()
        };
    }
    // the points by region, each region's in the order found
    bucketed_into(
        regions.len(),
        touch.iter().copied(),
        (touching_start, touching),
    );
    let nodes = h.nodes_of(c);
    let mut legs = ClusterLegs {
        cost: vec![f32::INFINITY; points.len() * nodes.len()],
        route: vec![NO_STEP; points.len() * nodes.len()],
        steps: Vec::new(),
        points: Vec::new(),
        kept_from: None,
        unsearched: false,
        bytes: 0,
    };
    for (k, &n) in nodes.iter().enumerate() {
        let node = &h.nodes[n as usize];
        let from = node.region_in(c);
        search.explore(t, (node.at, from), (&h.region_cluster, c), EXPLORE_BUDGET);
        // each point's cost: the least over the states of the regions it touches
        best.clear();
        best.resize(points.len(), (f32::INFINITY, u32::MAX));
        search.for_each_state(t, from, |state, region, reach| {
            // points the state's parent prices the same are left to it
            let by_parent = reach.priced_by_parent();
            let r = local_region[region as usize] as usize;
            let touching = &touching[touching_start[r] as usize..touching_start[r + 1] as usize];
            for &i in touching {
                if by_parent.is_some() && points[i as usize].portal == by_parent {
                    continue;
                }
                let cost = reach.cost_to(points[i as usize].at, best[i as usize].0);
                if cost < best[i as usize].0 {
                    best[i as usize] = (cost, state);
                }
            }
        });
        // the routes, as one tree of crossings from this nav node: a state's
        // step once its route ends on a point, numbered from 1 within the
        // cluster (0 is NO_STEP) in the order the points' routes reach them
        // from the nav node
        step_of.clear();
        step_of.resize(search.states() as usize, UNNUMBERED);
        for (i, &(cost, state)) in best.iter().enumerate() {
            if !cost.is_finite() {
                continue;
            }
            // up the search's tree to the first numbered state, then down
            chain.clear();
            let mut up = state;
            let mut step = loop {
                match step_of[up as usize] {
                    UNNUMBERED => {}
                    step => break step,
                }
                match search.made_from(up) {
                    Some((parent, x)) => {
                        chain.push((up, x));
                        up = parent;
                    }
                    None => break NO_STEP, // the start makes no crossing
                }
            };
            for &(down, x) in chain.iter().rev() {
                legs.steps.push([step, x]);
                step = legs.steps.len() as u32;
                step_of[down as usize] = step;
            }
            let at = i * nodes.len() + k;
            legs.cost[at] = cost;
            legs.route[at] = step;
        }
    }
    legs.points = points;
    legs
}

fn push_designer_corridor(
    h: &mut HierarchyData,
    ends: [u32; 2],
    regions: [u32; 2],
    cost: f32,
    crossings: &[u32],
) {
    h.designer_corridors.push(Corridor {
        ends,
        regions,
        cluster: u32::MAX,
        cost,
        first: h.designer_crossings.len() as u32,
        len: crossings.len() as u32,
    });
    h.designer_crossings.extend_from_slice(crossings);
}

/// Designer nav points that get cached corridors to each other (the first
/// ones in level order): each costs a flat search per other point at bake
/// time. Later points are still nav nodes of their clusters.
const MAX_DESIGNER_PAIRS_OF: usize = 128;

/// Corridors between every ordered pair of designer nav points, by the same
/// portal search a flat query runs, so a query between two of them can reuse
/// the corridor and get the flat query's path.
fn designer_corridors(t: &Tables, h: &mut HierarchyData) {
    let designers: Vec<u32> = (0..h.nodes.len() as u32)
        .filter(|&n| matches!(h.nodes[n as usize].kind, NavPointKind::Designer { .. }))
        .take(MAX_DESIGNER_PAIRS_OF)
        .collect();
    let mut search = PortalSearch::default();
    let (mut nodes, mut crossings) = (Vec::new(), Vec::new());
    // both directions: the search is not symmetric, and a query from b to a
    // must get exactly what the flat search from b to a gets
    for &a in &designers {
        for &b in designers.iter().filter(|&&b| b != a) {
            let (na, nb) = (h.nodes[a as usize], h.nodes[b as usize]);
            let (ra, rb) = (na.regions[0], nb.regions[0]);
            if t.region_component[ra as usize] != t.region_component[rb as usize] {
                continue;
            }
            if ra == rb {
                let cost = na.at.distance(nb.at) * t.region_cost[ra as usize];
                push_designer_corridor(h, [a, b], [ra, rb], cost, &[]);
                continue;
            }
            let between = Between {
                start: na.at,
                start_region: ra,
                goal: nb.at,
                goal_region: rb,
                excluded_areas: 0,
            };
            if let SearchOutcome::Found(goal) = search.run(t, &between, u32::MAX, false) {
                search.crossings(goal, &mut nodes, &mut crossings);
                let cost = search.cost(goal).unwrap_or(f32::INFINITY);
                push_designer_corridor(h, [a, b], [ra, rb], cost, &crossings);
            }
        }
    }
}

/// Landmarks of the L2 heuristic: more tighten it, each costs 4 bytes per nav node.
pub(crate) const LANDMARKS: u32 = 16;

/// Picks up to `count` landmarks farthest-first (each the nav node farthest
/// from those already chosen; a node in a component without one counts as
/// infinitely far, unless the component holds under 2% of the nodes) and
/// stores every node's distance to each.
fn landmarks(ht: &HierarchyTables, h: &mut HierarchyData, count: u32) {
    let mut build = LandmarkBuild::new(h, count);
    build.advance(h, ht, usize::MAX);
    (h.landmarks, h.landmark_dist) = build.into_rows();
}

/// The landmarks of [`landmarks`] picked a few at a time: each is one
/// search over the whole L2 graph, as a row of the all-pairs table is.
#[derive(Debug, Clone)]
pub(crate) struct LandmarkBuild {
    count: u32,
    done: u32,
    /// `dist[v * count + i]`: nav node `v`'s distance to landmark `i`.
    dist: Vec<f32>,
    /// Each node's distance to the closest landmark chosen so far.
    nearest: Vec<f32>,
    /// The next landmark.
    next: u32,
    /// Per node, whether its L2 component holds at least 2% of the nodes.
    large: Vec<bool>,
}

impl LandmarkBuild {
    /// Nothing picked yet: up to `count` landmarks of `h`.
    pub(crate) fn new(h: &HierarchyData, count: u32) -> LandmarkBuild {
        let n = h.nodes.len();
        let count = count.min(n as u32);
        // L2 components, so islands of a few nav nodes do not take the landmarks
        let mut uf = petgraph::unionfind::UnionFind::<u32>::new(n);
        for e in &h.corridors {
            uf.union(e.ends[0], e.ends[1]);
        }
        let component: Vec<u32> = (0..n as u32).map(|v| uf.find(v)).collect();
        let mut component_size = vec![0usize; n];
        for &c in &component {
            component_size[c as usize] += 1;
        }
        LandmarkBuild {
            count,
            done: 0,
            dist: vec![f32::INFINITY; n * count as usize],
            nearest: vec![f32::INFINITY; n],
            next: 0,
            large: component
                .iter()
                .map(|&c| component_size[c as usize] * 50 >= n)
                .collect(),
        }
    }

    /// Picks up to `steps` more landmarks; true when all are picked.
    pub(crate) fn advance(
        &mut self,
        h: &HierarchyData,
        ht: &HierarchyTables,
        steps: usize,
    ) -> bool {
        let (n, count) = (h.nodes.len(), self.count as usize);
        let mut ctx = SearchContext::new();
        for _ in 0..steps {
            if self.is_complete() {
                break;
            }
            let i = self.done as usize;
            let graph = NavGraph::whole(h, ht);
            // the heuristic reads landmark rows, which are not filled yet: none
            astar(
                &graph,
                &mut ctx,
                &[(self.next, 0.0, Via::leg(u32::MAX))],
                u32::MAX,
            );
            for v in 0..n {
                let d = ctx.cost(v as u32).unwrap_or(f32::INFINITY);
                self.dist[v * count + i] = d;
                self.nearest[v] = self.nearest[v].min(d);
            }
            // farthest from every chosen landmark (a node no landmark reaches
            // counts as infinitely far unless its L2 component is tiny);
            // lowest index on ties
            let mut best = (f32::NEG_INFINITY, 0u32);
            for (v, &d) in self.nearest.iter().enumerate() {
                let d = match d {
                    d if d.is_finite() => d,
                    _ if self.large[v] => f32::MAX,
                    _ => continue,
                };
                if d > best.0 {
                    best = (d, v as u32);
                }
            }
            self.next = best.1;
            self.done += 1;
        }
        self.is_complete()
    }

    /// Landmarks picked so far.
    pub(crate) fn rows_done(&self) -> usize {
        self.done as usize
    }

    /// Whether every landmark is picked.
    pub(crate) fn is_complete(&self) -> bool {
        self.done == self.count
    }

    /// How many landmarks there are, and the distances
    /// (`HierarchyData::landmark_dist`'s layout).
    pub(crate) fn into_rows(self) -> (u32, Vec<f32>) {
        debug_assert!(self.is_complete(), "landmarks taken before the last");
        (self.count, self.dist)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BakeConfig, Grid, Level, NavMesh};

    thread_local! {
        /// Clusters whose corridors a rebuild on this thread took from the
        /// hierarchy it replaced.
        pub(super) static REUSED_CLUSTERS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
        /// Blocks of tiles whose clusters a partition on this thread took
        /// from the hierarchy it replaced.
        pub(super) static REUSED_BLOCKS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// A portal's samples: the midpoint alone on a narrow portal; on a wide
    /// one both insets and inner samples at most `SAMPLE_PART_PER_WIDE`
    /// times `wide` apart, evenly spaced, the midpoint exactly `(l + r) / 2`
    /// whenever it is one; a huge portal gets `MAX_SAMPLE_PARTS` parts.
    #[test]
    fn wide_portals_are_sampled_at_bounded_gaps() {
        let wide = 4.0;
        let from = Vec2::new(3.0, -7.0);
        let lengths = [
            1.0f32, 4.0, 4.5, 31.0, 32.0, 33.0, 64.0, 65.0, 85.0, 255.0, 257.0, 1e30,
        ];
        let mut portals: Vec<[Vec2; 2]> = lengths
            .map(|d| [from, from + Vec2::new(0.6, 0.8) * d])
            .to_vec();
        // where `l + (r - l) / 2` is not `(l + r) / 2` in f32
        portals.push([
            Vec2::new(1700.5714, 3455.5715),
            Vec2::new(26680.666, 23206.0),
        ]);
        for [l, r] in portals {
            let dir = (r - l).normalize();
            let width = l.distance(r);
            let samples: Vec<Vec2> = portal_samples([l, r], wide).collect();
            if width <= wide {
                assert_eq!(samples, vec![(l + r) * 0.5], "width {width}");
                continue;
            }
            let parts = samples.len() - 1; // inner samples + 1
            let inner = &samples[..parts - 1];
            assert!(parts <= MAX_SAMPLE_PARTS as usize, "width {width}");
            let gap = width / parts as f32;
            assert!(
                gap <= SAMPLE_PART_PER_WIDE * wide * 1.0001 || parts == MAX_SAMPLE_PARTS as usize,
                "width {width}: {parts} parts"
            );
            assert_eq!(
                parts > 2,
                width > 2.0 * SAMPLE_PART_PER_WIDE * wide,
                "width {width}"
            );
            for (k, p) in inner.iter().enumerate() {
                let along = (*p - l).dot(dir);
                let expected = gap * (k + 1) as f32;
                assert!(
                    (along - expected).abs() <= 1e-4 * width,
                    "width {width}, sample {k}"
                );
                if 2 * (k + 1) == parts {
                    assert_eq!(*p, (l + r) * 0.5, "width {width}: the midpoint");
                }
            }
            let ends = &samples[parts - 1..];
            for (end, corner) in ends.iter().zip([l, r]) {
                let slack = 1e-6 * corner.length().max(1.0);
                assert!(
                    end.distance(corner) <= CORNER_INSET + slack,
                    "width {width}"
                );
            }
        }
    }

    /// A hierarchy's byte count, summed from its parts as they are built
    /// and counted without serde, is the size postcard gives the whole
    /// (with its stats as they were when counted), with and without
    /// landmarks and designer corridors.
    #[test]
    fn a_hierarchys_byte_count_is_its_stored_size() {
        let grid_level = crate::test_data::bundled_level("maps/den520d.map");
        // two designer points where the first scenario starts and ends
        let scen = crate::Scenario::load_file(crate::test_data::bundled("maps/den520d.map.scen"))
            .expect("scenarios");
        let mut designer = grid_level.clone();
        designer.nav_points = ["a", "b"]
            .into_iter()
            .zip([scen[0].start_point(), scen[0].goal_point()])
            .map(|(name, at)| crate::level::NavPoint {
                name: name.into(),
                at,
            })
            .collect();
        // small clusters on Aurora: more nav nodes than the table takes
        let aurora = crate::test_data::bundled_level("maps/Aurora.map");
        let searched = BakeConfig {
            cluster_size: 8,
            max_hierarchy_ratio: 1e9,
            ..BakeConfig::default()
        };
        let mut kinds = Vec::new();
        for (level, config) in [
            (&grid_level, BakeConfig::default()),
            (&designer, BakeConfig::default()),
            (&aurora, searched),
        ] {
            let mesh = NavMesh::bake(level, &config).expect("bakes");
            let h = mesh.data.hierarchy.as_ref().expect("a hierarchy");
            let mut whole = h.clone();
            whole.stats = HierarchyStats::default();
            assert_eq!(h.stats.bytes, measured_from_the_file(&whole));
            assert_eq!(whole.measured_bytes(), measured_from_the_file(&whole));
            kinds.push((h.landmarks > 0, !h.designer_corridors.is_empty()));
        }
        assert_eq!(
            kinds,
            [(false, false), (false, true), (true, false)],
            "tabled, with designer corridors, with landmarks"
        );
    }

    /// An attempt whose leg tables' least size is already over its byte
    /// limit stops before searching them, and one over it after its leg
    /// tables stops there: what it counted then is at most what the whole
    /// hierarchy counts, so it is dropped exactly when the whole one would
    /// be.
    #[test]
    fn an_attempt_over_its_limit_stops_after_its_leg_tables() {
        // den520d's hierarchy is tabled, so its bytes are all in by then;
        // Aurora's in clusters of 8 has landmarks, which come after
        let aurora = crate::test_data::bundled_level("maps/Aurora.map");
        let searched = BakeConfig {
            cluster_size: 8,
            max_hierarchy_ratio: 1e9,
            ..BakeConfig::default()
        };
        let meshes = [den520d(), NavMesh::bake(&aurora, &searched).expect("bakes")];
        for (mesh, landmarks) in meshes.iter().zip([false, true]) {
            let whole = mesh.data.hierarchy.as_ref().expect("a hierarchy");
            assert_eq!(whole.landmarks > 0, landmarks);
            let wide = crate::bake::DEFAULT_WIDE_PORTAL;
            let sizes = (whole.cluster_size, whole.stats.cluster_aim, wide);
            let (floor, tables) = build(mesh, &[], sizes, None, Some(0.0)).expect("builds");
            assert!(floor.unfinished && floor.leg_cost.is_empty() && tables.node_start.is_empty());
            assert!(floor.legs_missing.contains(&true));
            assert!(floor.stats.bytes > 0 && floor.stats.bytes <= whole.stats.bytes);
            let limit = Some(floor.stats.bytes as f64);
            let (first, tables) = build(mesh, &[], sizes, None, limit).expect("builds");
            assert!(first.unfinished && first.corridors.is_empty() && tables.node_start.is_empty());
            assert!(!first.leg_cost.is_empty() && first.legs_missing.is_empty());
            assert!(
                first.stats.bytes > floor.stats.bytes && first.stats.bytes <= whole.stats.bytes
            );
            // at the count so far it goes on, and ends over it when
            // landmarks come after: built whole, then dropped by the caller
            let limit = Some(first.stats.bytes as f64);
            let (at_limit, _) = build(mesh, &[], sizes, None, limit).expect("builds");
            assert!(!at_limit.unfinished && at_limit.stats.bytes == whole.stats.bytes);
            assert_eq!(at_limit.stats.bytes > first.stats.bytes, landmarks);
            assert!(at_limit.corridors == whole.corridors);
        }
    }

    /// What the byte bound measures, from what postcard writes: the
    /// hierarchy's bytes in the file, with each leg cost's code replaced by
    /// the four bytes of an `f32`.
    fn measured_from_the_file(h: &HierarchyData) -> u64 {
        stored_size(h) + 4 * h.leg_cost.len() as u64 - h.leg_cost_code_bytes()
    }

    /// The byte count agrees with postcard's at every varint length.
    #[test]
    fn measured_bytes_count_varints_as_postcard_writes_them() {
        let mesh = den520d();
        let mut h = mesh.data.hierarchy.clone().expect("a hierarchy");
        let edges = [
            0,
            127,
            128,
            (1 << 14) - 1,
            1 << 14,
            (1 << 21) - 1,
            1 << 21,
            (1 << 28) - 1,
            1 << 28,
            u32::MAX,
        ];
        for (k, &v) in edges.iter().enumerate() {
            h.leg_route[k] = v;
            h.leg_steps[k] = [v, edges[edges.len() - 1 - k]];
            h.region_cluster[k] = v;
            h.points[k].region = v;
            h.points[k].portal = (k % 3 != 0).then_some(edges[edges.len() - 1 - k]);
        }
        // a length of at least 128 takes two bytes
        h.landmark_dist = vec![1.0; 200];
        assert!(h.leg_route.len() > 1 << 14, "lengths of three bytes too");
        assert_eq!(h.measured_bytes(), measured_from_the_file(&h));
    }

    /// After runtime edits, the corridors a rebuild takes from the
    /// hierarchy it replaces (for clusters the edit left alone) are the
    /// ones walking the new leg tables gives, and so is the mesh's L2
    /// adjacency: what a load of the
    /// saved mesh derives (the corridors are not saved, so the byte
    /// comparisons with a fresh bake cannot see them).
    #[test]
    fn corridors_kept_through_an_edit_are_the_ones_the_walks_give() {
        use crate::bake::tiles::tests::{building, den520d_tiled};
        use crate::{Edit, TileCache};
        let (level, config) = den520d_tiled(64.0);
        let mut cache = TileCache::new(&level, &config).expect("bakes");
        let mut ids = Vec::new();
        for (k, at) in [(70.0, 60.0), (150.0, 180.0), (40.0, 200.0)]
            .into_iter()
            .enumerate()
        {
            REUSED_CLUSTERS.with(|n| n.set(0));
            let edit = match k {
                2 => Edit::Remove(ids[0]),
                _ => Edit::Add(building(at.0, at.1)),
            };
            ids.extend(cache.apply(&[edit]).expect("edit").into_iter().flatten());
            let reused = REUSED_CLUSTERS.with(std::cell::Cell::get);
            let mesh = cache.mesh();
            let h = mesh
                .data
                .hierarchy
                .as_ref()
                .expect("a hierarchy at tile 64");
            let clusters = h.cluster_start.len() - 1;
            assert!(
                reused > 0 && reused < clusters,
                "edit {k}: {reused} of {clusters} clusters' corridors reused"
            );
            let mut walked = h.clone();
            walked
                .derive_corridors(&mesh.tables.portal_regions)
                .expect("derives");
            assert!(
                walked.corridors == h.corridors,
                "edit {k}: corridors differ"
            );
            assert!(
                walked.crossings == h.crossings,
                "edit {k}: crossings differ"
            );
            // and the L2 adjacency the queries read is the one built from them
            let designers = mesh.data.nav_points.len();
            let built = HierarchyTables::build(&walked, &mesh.tables.portal_regions, designers);
            let ht = &mesh.hier;
            assert!(
                built.node_start == ht.node_start
                    && built.node_corridors == ht.node_corridors
                    && built.node_runs == ht.node_runs,
                "edit {k}: L2 adjacency differs"
            );
        }
    }

    /// The bundled den520d map, baked with the defaults (713 regions, so
    /// clusters aim for 32 of them; it has the all-pairs table).
    fn den520d() -> NavMesh {
        let level = crate::test_data::bundled_level("maps/den520d.map");
        NavMesh::bake(&level, &BakeConfig::default()).expect("bakes")
    }

    /// Meshes of fewer than 64 clusters' worth of regions try smaller
    /// clusters first, never below the floor nor above the configured size.
    #[test]
    fn small_meshes_try_smaller_clusters_first() {
        let sizes = |size, regions| cluster_sizes(size, regions).collect::<Vec<_>>();
        assert_eq!(sizes(64, 100), [32, 64, 16]);
        assert_eq!(sizes(64, 713), [32, 64, 16]);
        assert_eq!(sizes(64, 2_047), [32, 64, 16]);
        assert_eq!(sizes(64, 2_111), [32, 64, 16]);
        // regions / 64 rounded up to a power of two: one step, not one per 64 regions
        assert_eq!(sizes(64, 2_112), [64, 32, 16]);
        assert_eq!(sizes(64, 4_095), [64, 32, 16]);
        // no last resort on a large mesh, but half the size
        assert_eq!(sizes(64, 4_096), [64, 32]);
        assert_eq!(sizes(64, 1_000_000), [64, 32]);
        assert_eq!(sizes(32, 100), [32, 16]);
        // a last resort only below half the size tried first
        assert_eq!(sizes(20, 100), [20]);
        assert_eq!(sizes(16, 100), [16]);
        assert_eq!(sizes(3, 100), [3]);
        // sizes that are not powers of two
        assert_eq!(sizes(100, 4_000), [64, 100, 16]);
        assert_eq!(sizes(48, 2_112), [48, 32, 16]);
        // and no last resort from 4,096 regions, whatever the size; half
        // only after the configured size itself
        assert_eq!(sizes(1024, 20_000), [512, 1024]);
        assert_eq!(sizes(1024, 32_832), [1024, 512]);
        assert_eq!(sizes(512, 17_503), [512, 256]);
        assert_eq!(sizes(1024, usize::MAX), [1024, 512]);
        // never below the floor of a shrunk aim
        assert_eq!(sizes(40, 1_000_000), [40, 32]);
        assert_eq!(sizes(32, 1_000_000), [32]);
    }

    /// den520d's shrunk clusters keep its hierarchy within the default byte
    /// bound; under a bound the shrunk hierarchy breaks, the bake tries the
    /// configured size, and keeps it if that one fits, else none.
    #[test]
    fn a_shrunk_hierarchy_over_its_budget_falls_back_to_the_configured_size() {
        let mesh = den520d();
        let stats = mesh.hierarchy_stats().expect("hierarchy").clone();
        assert_eq!(stats.cluster_aim, SHRUNK_CLUSTER_FLOOR);
        let rest = {
            let mut data = mesh.data.clone();
            data.hierarchy = None;
            postcard::serialize_with_flavor(&data, postcard::ser_flavors::Size::default())
                .expect("sized") as f64
        };
        let sizes = (64, 64, crate::bake::DEFAULT_WIDE_PORTAL);
        let configured = build(&mesh, &[], sizes, None, None).expect("builds").0;
        assert!(
            stats.clusters > configured.stats.clusters,
            "{} clusters against {}",
            stats.clusters,
            configured.stats.clusters
        );
        let configured = configured.stats.bytes as f64;
        let (shrunk, configured) = (stats.bytes as f64 / rest, configured / rest);
        // here the configured clusters take fewer bytes (2.39 against 2.51
        // times the rest of the file), so each outcome has a bound
        assert!(configured < shrunk, "{configured} against {shrunk}");
        let level = crate::test_data::bundled_level("maps/den520d.map");
        assert_aims_under_bounds(
            &level,
            &[
                (shrunk * 1.001, Some(SHRUNK_CLUSTER_FLOOR)),
                ((configured + shrunk) / 2.0, Some(64)),
                // den520d's clusters of 16 take more bytes than those of 64
                (configured * 0.999, None),
            ],
        );
    }

    /// Bakes `level` under each byte bound (times the rest of the file) and
    /// checks the cluster aim of the hierarchy it keeps (`None`: none).
    fn assert_aims_under_bounds(level: &Level, cases: &[(f64, Option<u32>)]) {
        for &(bound, aim) in cases {
            let config = BakeConfig {
                max_hierarchy_ratio: bound as f32,
                ..BakeConfig::default()
            };
            let baked = NavMesh::bake(level, &config).expect("bakes");
            let got = baked.hierarchy_stats().map(|s| s.cluster_aim);
            assert_eq!(got, aim, "bound {bound}");
        }
    }

    /// The aims the default bake of `level` tries, in order, and the bytes
    /// of its hierarchy at a given aim over the bytes of the rest of its
    /// file (what the byte bound compares).
    fn aims_and_byte_ratios(level: &Level) -> (Vec<u32>, impl Fn(u32) -> f64) {
        let flat = BakeConfig {
            corridors: false,
            ..BakeConfig::default()
        };
        let mesh = NavMesh::bake(level, &flat).expect("bakes");
        let aims = cluster_sizes(crate::bake::DEFAULT_CLUSTER_SIZE, mesh.region_count()).collect();
        let rest =
            postcard::serialize_with_flavor(&mesh.data, postcard::ser_flavors::Size::default())
                .expect("sized") as f64;
        let ratio = move |aim| {
            let sizes = (
                crate::bake::DEFAULT_CLUSTER_SIZE,
                aim,
                crate::bake::DEFAULT_WIDE_PORTAL,
            );
            build(&mesh, &[], sizes, None, None)
                .expect("builds")
                .0
                .stats
                .bytes as f64
                / rest
        };
        (aims, ratio)
    }

    /// When the hierarchies at the shrunk and the configured aims both break
    /// the byte bound, the bake tries clusters of [`LAST_RESORT_CLUSTERS`]:
    /// on Caldera (2,097 regions, so a shrunk aim of 32) they take fewer
    /// bytes than either, so a bound between them keeps them, and a bound
    /// below them leaves the mesh without a hierarchy.
    #[test]
    fn hierarchies_over_the_bound_at_both_aims_try_the_last_resort() {
        let level = crate::test_data::bundled_level("maps/Caldera.map");
        let (sizes, ratio) = aims_and_byte_ratios(&level);
        assert_eq!(sizes, [32, 64, 16]);
        let (shrunk, configured, last) = (ratio(32), ratio(64), ratio(16));
        let fewest_above = shrunk.min(configured);
        assert!(
            last < fewest_above,
            "{last} against {shrunk} and {configured}"
        );
        assert_aims_under_bounds(
            &level,
            &[
                ((last + fewest_above) / 2.0, Some(16)),
                (last * 0.999, None),
            ],
        );
    }

    /// A mesh large enough to start at the configured size tries half of it
    /// when that breaks the byte bound (as 500 buildings on Aurora make it
    /// do): on Berlin_0_512 (4,574 regions, past the last resort) clusters
    /// of 32 take fewer bytes than clusters of 64, so a bound between them
    /// keeps them, and a bound below both leaves the mesh without a
    /// hierarchy.
    #[test]
    fn a_large_mesh_over_the_bound_tries_half_its_cluster_size() {
        let level = crate::test_data::bundled_level("maps/Berlin_0_512.map");
        let (sizes, ratio) = aims_and_byte_ratios(&level);
        assert_eq!(sizes, [64, 32]);
        let (configured, half) = (ratio(64), ratio(32));
        assert!(half < configured, "{half} against {configured}");
        assert_aims_under_bounds(
            &level,
            &[
                (configured * 1.001, Some(64)),
                ((half + configured) / 2.0, Some(32)),
                (half * 0.999, None),
            ],
        );
    }

    #[test]
    fn clusters_respect_their_size_and_stay_connected() {
        let text = "type octile\nheight 12\nwidth 24\nmap\n".to_string()
            + &[
                "........................",
                "..@@@@@@....@@@@@@@.....",
                "..@....@....@.....@.....",
                "..@....@....@.....@.....",
                "..@@.@@@....@@@.@@@.....",
                "........................",
                "....@@@@@@@@@@@@@@@.....",
                "........................",
                ".@@@@@@.....@@@@@@@@@@@.",
                ".@....@.....@..........@",
                ".@..........@..........@",
                ".@@@@@@.....@@@@@@@@@@@@",
            ]
            .join("\n");
        let grid = Grid::parse(&text, "t.map").expect("parses");
        let mesh = NavMesh::bake(&grid.to_level(), &BakeConfig::default()).expect("bakes");
        let t = &mesh.tables;
        for max in [2, 4, 8] {
            let (cluster, count) = partition(t, max);
            let mut sizes = vec![0u32; count as usize];
            for &c in &cluster {
                sizes[c as usize] += 1;
            }
            assert!(
                sizes.iter().all(|&s| (1..=2 * max).contains(&s)),
                "{sizes:?}"
            );
            // connected: union-find over portals inside clusters gives one set per cluster
            let mut uf = petgraph::unionfind::UnionFind::<u32>::new(cluster.len());
            for &[a, b] in &t.portal_regions {
                if cluster[a as usize] == cluster[b as usize] {
                    uf.union(a, b);
                }
            }
            let mut root_of = vec![u32::MAX; count as usize];
            for (r, &c) in cluster.iter().enumerate() {
                let root = uf.find(r as u32);
                if root_of[c as usize] == u32::MAX {
                    root_of[c as usize] = root;
                }
                assert_eq!(root_of[c as usize], root, "cluster {c} is in one piece");
            }
        }
    }

    /// The bake hands the mesh the L2 tables it built for its own
    /// searches: they must be the ones a load derives from the file,
    /// designer points included.
    #[test]
    fn the_bakes_l2_tables_are_the_ones_a_load_derives() {
        let level = crate::test_data::bundled_level("levels/rts_base.json");
        assert!(!level.nav_points.is_empty(), "a level with designer points");
        let baked = NavMesh::bake(&level, &BakeConfig::default()).expect("bakes");
        assert!(baked.data.hierarchy.is_some());
        let loaded = NavMesh::from_bytes(&baked.to_bytes().expect("saves")).expect("loads");
        let (a, b) = (&baked.hier, &loaded.hier);
        assert!(a.designer_node.iter().any(|&n| n != u32::MAX) && !a.node_corridors.is_empty());
        assert_eq!(a.node_start, b.node_start);
        assert_eq!(a.node_corridors, b.node_corridors);
        assert_eq!(a.region_point_start, b.region_point_start);
        assert_eq!(a.region_points, b.region_points);
        assert_eq!(a.designer_node, b.designer_node);
        assert_eq!(a.neighbour_start, b.neighbour_start);
        assert_eq!(a.cluster_neighbours, b.cluster_neighbours);
        assert_eq!(a.node_runs, b.node_runs);
    }

    /// A bake's nav nodes list their corridors in at most three runs of one
    /// cluster each, which the L2 search takes or skips whole.
    #[test]
    fn every_nav_nodes_corridors_come_in_runs_of_one_cluster() {
        let level = crate::test_data::bundled_level("levels/rts_base.json");
        for mesh in [
            den520d(),
            NavMesh::bake(&level, &BakeConfig::default()).expect("bakes"),
        ] {
            let ht = &mesh.hier;
            let mut split = 0;
            for n in 0..ht.node_start.len() as u32 - 1 {
                let runs = ht.corridor_runs(n).expect("three runs at most");
                assert_eq!(runs.concat(), ht.corridors_at(n), "node {n}");
                for run in runs {
                    assert!(run.iter().all(|e| e.cluster == run[0].cluster), "node {n}");
                }
                split += usize::from(!runs[1].is_empty());
            }
            assert!(split > 0, "some node has corridors in two clusters");
        }
    }

    /// The clusters' neighbour lists against the mesh's portals (not the
    /// nav nodes they are built from).
    #[test]
    fn cluster_neighbours_are_the_clusters_a_portal_joins() {
        let mesh = den520d();
        let h = mesh.data.hierarchy.as_ref().expect("hierarchy");
        let t = &mesh.tables;
        let clusters = h.cluster_start.len() - 1;
        // from the mesh's portals, not the nav nodes the lists are built from
        let mut joined = vec![vec![false; clusters]; clusters];
        for &[a, b] in &t.portal_regions {
            let (ca, cb) = (h.region_cluster[a as usize], h.region_cluster[b as usize]);
            joined[ca as usize][cb as usize] = ca != cb;
            joined[cb as usize][ca as usize] = ca != cb;
        }
        let pairs = (0..clusters as u32).flat_map(|a| (0..clusters as u32).map(move |b| (a, b)));
        let mut some = 0;
        for (a, b) in pairs {
            let expected = joined[a as usize][b as usize];
            assert_eq!(mesh.hier.neighbours(a, b), expected, "clusters {a} and {b}");
            some += usize::from(expected);
        }
        assert!(
            some > clusters,
            "{some} neighbouring pairs of {clusters} clusters"
        );
        assert!(
            !mesh.hier.neighbours(clusters as u32, 0),
            "a cluster out of range"
        );
    }

    /// The landmark table (the generic A* run to exhaustion over L2) agrees
    /// with petgraph's Dijkstra over the same graph, `NavMesh::nav_graph`.
    /// (den520d has the all-pairs table, so its bake leaves landmarks out:
    /// they are computed here.)
    #[test]
    fn landmark_distances_match_petgraph_dijkstra() {
        let mesh = den520d();
        let mut h = mesh.data.hierarchy.clone().expect("hierarchy");
        assert_eq!(h.landmarks, 0, "a tabled hierarchy has no landmarks");
        let ht = HierarchyTables::build(&h, &mesh.tables.portal_regions, 0);
        landmarks(&ht, &mut h, LANDMARKS);
        assert!(h.landmarks > 0);
        let g = mesh.nav_graph();
        for i in 0..h.landmarks as usize {
            // the landmark is the node at distance 0 from itself
            let l = (0..h.nodes.len())
                .find(|&n| h.landmark_row(n as u32)[i] == 0.0)
                .expect("landmark node");
            let oracle =
                petgraph::algo::dijkstra(&g, petgraph::graph::NodeIndex::new(l), None, |e| {
                    *e.weight()
                });
            for n in 0..h.nodes.len() {
                let ours = h.landmark_row(n as u32)[i];
                match oracle.get(&petgraph::graph::NodeIndex::new(n)) {
                    Some(&d) => assert!((ours - d).abs() <= 1e-3 * d.max(1.0), "{ours} vs {d}"),
                    None => assert!(ours.is_infinite()),
                }
            }
        }
    }

    /// A table whose routes loop (each entry arriving by a corridor that
    /// ends at its node, so the load check passes) makes the walk give up
    /// rather than hang a query.
    #[test]
    fn a_crafted_cycle_in_the_table_passes_the_check_but_not_the_walk() {
        let mesh = den520d();
        let mut h = mesh.data.hierarchy.clone().expect("hierarchy");
        // a corridor between b and x, neither of them node a = 0: in a's
        // row each is said to be reached from the other, so the walk from b
        // towards a goes round between them
        let (c, e) = h
            .corridors
            .iter()
            .enumerate()
            .find(|(_, e)| e.ends[0] != e.ends[1] && !e.ends.contains(&0))
            .expect("a corridor away from node 0");
        let [b, x] = e.ends;
        let place = |node: u32| {
            let k = mesh
                .hier
                .corridors_at(node)
                .iter()
                .position(|e| e.corridor == c as u32);
            k.expect("the corridor is in its ends' lists") as u16 + 1
        };
        h.l2_table.via[b as usize] = place(b);
        h.l2_table.via[x as usize] = place(x);
        let t = &mesh.tables;
        assert_eq!(h.check(&t.portal_regions, mesh.region_count()), Ok(()));
        let mut route = Vec::new();
        assert!(
            !h.tabled_route(&mesh.hier, b, 0, &mut route),
            "the walk stops"
        );
    }

    /// Deriving the corridors stops with an error once the walks pass their
    /// cap (a crafted file's leg tables cannot make a load slow), and at
    /// the bake's budget gives the corridors the bake made.
    #[test]
    fn derived_corridors_stop_at_their_cap() {
        let mesh = den520d();
        let mut h = mesh.data.hierarchy.clone().expect("hierarchy");
        let pr = &mesh.tables.portal_regions;
        let (corridors, crossings) = (h.corridors.clone(), h.crossings.clone());
        let walked = crossings.len() as u64; // den520d has no designer points
        assert!(walked > 100);
        assert!(h.derive_cluster_corridors(pr, walked - 1).is_err());
        assert!(h.derive_cluster_corridors(pr, walked).is_ok());
        assert_eq!((h.corridors, h.crossings), (corridors, crossings));
    }

    /// The all-pairs table agrees with petgraph's Dijkstra from every nav
    /// node, and the route it encodes costs what it says.
    #[test]
    fn all_pairs_table_matches_petgraph_dijkstra() {
        let mesh = den520d();
        let h = mesh.data.hierarchy.as_ref().expect("hierarchy");
        let n = h.nodes.len();
        assert!(h.has_table(), "a small graph gets its table");
        let g = mesh.nav_graph();
        let mut route = Vec::new();
        let mut routed = 0;
        for a in 0..n {
            let oracle =
                petgraph::algo::dijkstra(&g, petgraph::graph::NodeIndex::new(a), None, |e| {
                    *e.weight()
                });
            for b in 0..n {
                let ours = h.l2_distance(a as u32, b as u32);
                let Some(&d) = oracle.get(&petgraph::graph::NodeIndex::new(b)) else {
                    assert!(ours.is_infinite());
                    continue;
                };
                assert!(
                    (ours - d).abs() <= 1e-3 * d.max(1.0),
                    "{a} -> {b}: {ours} vs {d}"
                );
                assert!(h.tabled_route(&mesh.hier, a as u32, b as u32, &mut route));
                let cost: f32 = route
                    .iter()
                    .map(|&(_, c)| h.corridors[c as usize].cost)
                    .sum();
                assert!((cost - ours).abs() <= 1e-3 * ours.max(1.0));
                routed += usize::from(route.len() > 1);
            }
        }
        assert!(routed > n, "routes of several corridors were checked");
    }

    /// An edit defers the all-pairs table; computed afterwards in rows of
    /// any split, it is the fresh bake's table entry for entry.
    #[test]
    fn a_refreshed_table_is_the_fresh_bakes() {
        use crate::bake::tiles::tests::{building as square, den520d_tiled};
        use crate::{Edit, TileCache};
        let (level, config) = den520d_tiled(64.0);
        let mut cache = TileCache::new(&level, &config).expect("bakes");
        let edits = [
            Edit::Add(square(70.0, 60.0)),
            Edit::Add(square(200.0, 150.0)),
        ];
        cache.apply(&edits).expect("edits");
        let table = |mesh: &NavMesh| mesh.data.hierarchy.as_ref().unwrap().l2_table.clone();
        assert!(
            table(cache.mesh()).via.is_empty(),
            "the edit left it pending"
        );
        let fresh = NavMesh::bake(&cache.level_with_obstacles(), &config).expect("bakes");
        assert!(!table(&fresh).via.is_empty());
        for rows in [1, 7, 0, 30] {
            cache.refresh_table(rows);
        }
        while !cache.refresh_table(13) {}
        assert_eq!(table(cache.mesh()), table(&fresh));
        // into_mesh finishes a pending table
        cache
            .apply(&[Edit::Add(square(120.0, 100.0))])
            .expect("edit");
        assert!(cache.table_pending().is_some());
        let fresh = NavMesh::bake(&cache.level_with_obstacles(), &config).expect("bakes");
        assert_eq!(table(&cache.into_mesh()), table(&fresh));
    }

    /// While an edit's table is pending, the first rows' worth of
    /// `refresh_table` picks the landmarks: the bake's pick on the same
    /// hierarchy, used by the L2 search (paths as long as the fresh
    /// bake's), never saved (the bytes are the fresh bake's), and dropped
    /// when the table is in.
    #[test]
    fn landmarks_serve_while_the_table_is_pending_and_are_not_saved() {
        use crate::bake::tiles::tests::{building as square, den520d_tiled};
        use crate::{Edit, NavQuery, QueryFilter, TileCache};
        let (level, config) = den520d_tiled(64.0);
        let mut cache = TileCache::new(&level, &config).expect("bakes");
        cache
            .apply(&[
                Edit::Add(square(70.0, 60.0)),
                Edit::Add(square(200.0, 150.0)),
            ])
            .expect("edits");
        let (left, rows) = cache.table_pending().expect("pending");
        assert_eq!(left, rows);
        assert!(!cache.refresh_table(LANDMARKS as usize));
        let left = rows - LANDMARKS as usize;
        assert_eq!(
            cache.table_pending(),
            Some((left, rows)),
            "picks count as rows"
        );
        let h = cache.mesh().data.hierarchy.as_ref().unwrap();
        assert_eq!(h.landmarks, 0);
        assert_eq!(h.landmark_count(), LANDMARKS);
        let mut picked = h.clone();
        landmarks(&cache.mesh().hier, &mut picked, LANDMARKS);
        assert_eq!(
            h.pending_landmarks,
            (picked.landmarks, picked.landmark_dist)
        );
        let fresh = NavMesh::bake(&cache.level_with_obstacles(), &config).expect("bakes");
        assert_eq!(cache.mesh().to_bytes().unwrap(), fresh.to_bytes().unwrap());
        let (mut q, filter) = (NavQuery::new(), QueryFilter::default());
        let scen = crate::test_data::bundled("maps/den520d.map.scen");
        let problems = crate::Scenario::load_file(scen).expect("bundled scenarios");
        let mut compared = 0;
        for s in problems.iter().step_by(4) {
            let (a, b) = (s.start_point(), s.goal_point());
            let ours = q.find_path(cache.mesh(), a, b, &filter);
            let theirs = q.find_path(&fresh, a, b, &filter);
            if let (Ok(x), Ok(y)) = (ours, theirs) {
                assert!(
                    (x.length() - y.length()).abs() <= 1e-3 * y.length(),
                    "{a} -> {b}"
                );
                compared += 1;
            }
        }
        assert!(compared > 150, "{compared} paths compared");
        while !cache.refresh_table(64) {}
        let h = cache.mesh().data.hierarchy.as_ref().unwrap();
        assert_eq!(h.landmark_count(), 0, "the table replaces them");
    }

    /// On a map of several blocks of tiles, an edit partitions again only
    /// the blocks it changed and keeps the others' clusters, and what it
    /// builds is a fresh tiled bake's, byte for byte.
    #[test]
    fn an_edit_keeps_the_clusters_of_the_blocks_it_left_alone() {
        use crate::bake::tiles::tests::building;
        use crate::TileCache;
        let level = crate::test_data::bundled_level("maps/BigGameHunters.map");
        let config = BakeConfig {
            tile_size: Some(64.0),
            ..BakeConfig::default()
        };
        let scen =
            crate::Scenario::load_file(crate::test_data::bundled("maps/BigGameHunters.map.scen"))
                .expect("scenarios");
        let mut cache = TileCache::new(&level, &config).expect("bakes");
        let mesh = cache.mesh();
        let tiling = mesh.data.tiling.as_ref().unwrap();
        let count = mesh.region_count() as u32;
        let mut blocks: Vec<u32> = (0..count)
            .map(|r| block_of(tiling)(&mesh.tables, r))
            .collect();
        blocks.sort_unstable();
        blocks.dedup();
        assert!(blocks.len() >= 4, "{} blocks", blocks.len());
        let same_as_fresh = |cache: &TileCache| {
            let fresh = TileCache::new(&cache.level_with_obstacles(), &config).expect("bakes");
            let edited = cache.clone().into_mesh();
            assert!(edited.hierarchy_stats().is_some());
            edited.to_bytes().unwrap() == fresh.into_mesh().to_bytes().unwrap()
        };
        let at = scen[0].start_point();
        REUSED_BLOCKS.with(|n| n.set(0));
        let id = cache
            .add_obstacle(&building(at.x - 3.0, at.y - 2.0))
            .expect("edit");
        let reused = REUSED_BLOCKS.with(std::cell::Cell::get);
        assert!(reused >= 1 && reused < blocks.len(), "{reused} blocks kept");
        assert!(same_as_fresh(&cache));
        cache.remove_obstacle(id).expect("edit");
        assert!(same_as_fresh(&cache));
    }

    /// What a tiled mesh keeps aside after edits against what a fresh bake
    /// keeps: the same attempts (aims, partitions, nav nodes, whether
    /// finished), and the same leg tables for every cluster that both
    /// searched or copied. An edit may leave a cluster unsearched where the
    /// fresh bake, with nothing to copy, searched it, or the other way
    /// round; then only the attempt's lower bound of its bytes differs.
    fn agree_where_both_have_tables(edited: &[HierarchyData], fresh: &[HierarchyData]) {
        assert_eq!(edited.len(), fresh.len());
        for (a, b) in edited.iter().zip(fresh) {
            let aim = a.stats.cluster_aim;
            assert_eq!(aim, b.stats.cluster_aim);
            assert_eq!(a.unfinished, b.unfinished, "aim {aim}");
            assert_eq!(a.region_cluster, b.region_cluster, "aim {aim}");
            assert_eq!(a.cluster_start, b.cluster_start, "aim {aim}");
            assert_eq!(a.cluster_nodes, b.cluster_nodes, "aim {aim}");
            assert!(a.nodes == b.nodes, "aim {aim}");
            if a.legs_missing.is_empty() && b.legs_missing.is_empty() {
                let bytes = |h: &HierarchyData| postcard::to_allocvec(h).unwrap();
                assert_eq!(bytes(a), bytes(b), "aim {aim}");
                continue;
            }
            // what an attempt stopped unsearched counted is a lower bound
            // of what the same attempt counts searched
            if b.legs_missing.is_empty() {
                assert!(a.stats.bytes <= b.stats.bytes, "aim {aim}");
            }
            if a.legs_missing.is_empty() {
                assert!(b.stats.bytes <= a.stats.bytes, "aim {aim}");
            }
            for c in 0..a.cluster_start.len() as u32 - 1 {
                if a.legs_missing_in(c) || b.legs_missing_in(c) {
                    continue;
                }
                let legs = |h: &HierarchyData| {
                    let c = c as usize;
                    let entries = h.leg_start[c] as usize..h.leg_start[c + 1] as usize;
                    let steps = h.step_start[c] as usize..h.step_start[c + 1] as usize;
                    (
                        h.points_of(c as u32).to_vec(),
                        h.leg_cost[entries.clone()].to_vec(),
                        h.leg_route[entries].to_vec(),
                        h.leg_steps[steps].to_vec(),
                    )
                };
                assert!(legs(a) == legs(b), "aim {aim}, cluster {c}");
            }
        }
    }

    /// Which attempts a tiled mesh keeps aside, by aim: whether some of
    /// their clusters were left unsearched, and how many.
    fn kept_aside(cache: &crate::TileCache) -> Vec<(u32, usize)> {
        let unkept = &cache.mesh().unkept;
        let missing = |h: &HierarchyData| h.legs_missing.iter().filter(|&&m| m).count();
        unkept
            .iter()
            .map(|h| (h.stats.cluster_aim, missing(h)))
            .collect()
    }

    /// Under a bound that two aims' leg tables break by their least size
    /// (those attempts stop before searching them, on a tiled mesh too) and
    /// the other only once searched, a tiled mesh keeps attempts of both
    /// kinds aside. An edit copies the tables of the clusters it does not
    /// touch and counts the others at their least size: that is already
    /// over the bound for the aims the bake searched and dropped, so they
    /// stop unsearched in the touched clusters alone. Through a run of
    /// edits, each mesh is what a fresh tiled bake makes, byte for byte,
    /// and what it keeps aside agrees with a fresh bake's wherever both
    /// have tables.
    #[test]
    fn attempts_stopped_before_their_leg_tables_serve_edits_as_fresh_bakes() {
        use crate::bake::tiles::tests::{building, den520d_tiled};
        use crate::{Edit, TileCache};
        let (level, mut config) = den520d_tiled(32.0);
        config.max_hierarchy_ratio = 2.5;
        let mut cache = TileCache::new(&level, &config).expect("bakes");
        let clusters = |cache: &TileCache, aim: u32| {
            let unkept = &cache.mesh().unkept;
            let h = unkept.iter().find(|h| h.stats.cluster_aim == aim).unwrap();
            h.stats.clusters as usize
        };
        let (whole_64, whole_16) = (clusters(&cache, 64), clusters(&cache, 16));
        assert_eq!(
            kept_aside(&cache),
            [(32, 0), (64, whole_64), (16, whole_16)]
        );
        // the mesh's file and what it keeps aside, against a fresh bake's
        let as_fresh = |cache: &TileCache, what: &str| {
            let fresh = TileCache::new(&cache.level_with_obstacles(), &config).expect("bakes");
            let file = |mesh: &NavMesh| mesh.to_bytes().unwrap();
            assert_eq!(file(cache.mesh()), file(fresh.mesh()), "{what}");
            agree_where_both_have_tables(&cache.mesh().unkept, &fresh.mesh().unkept);
        };
        let mut ids = Vec::new();
        for (x, y) in [(70.0, 60.0), (150.0, 30.0), (31.0, 95.0), (200.0, 200.0)] {
            ids.push(cache.add_obstacle(&building(x, y)).expect("edit"));
            as_fresh(&cache, &format!("add at {x} {y}"));
        }
        // aim 32 stopped before searching the clusters the edits touched,
        // having copied the rest
        let [(32, touched), (64, missing), (16, _)] = kept_aside(&cache)[..] else {
            panic!("{:?}", kept_aside(&cache));
        };
        assert!(
            touched >= 1 && touched < clusters(&cache, 32) / 2,
            "{touched}"
        );
        assert_eq!(missing, whole_64);
        cache
            .apply(&[Edit::Remove(ids[1]), Edit::Remove(ids[2])])
            .expect("edit");
        as_fresh(&cache, "two removed");
        // a block over a quarter of the map takes aim 64's least size under
        // the bound: that attempt searches its leg tables, with none kept
        // aside at its aim to take from; without the block, it stops again
        let block = [(0.0, 0.0), (128.0, 0.0), (128.0, 128.0), (0.0, 128.0)];
        let block = block.map(|(x, y)| Vec2::new(x, y)).to_vec();
        let id = cache.add_obstacle(&block).expect("edit");
        assert!(
            kept_aside(&cache).contains(&(64, 0)),
            "{:?}",
            kept_aside(&cache)
        );
        as_fresh(&cache, "the block");
        cache.remove_obstacle(id).expect("edit");
        assert!(kept_aside(&cache)[1].1 > 0, "{:?}", kept_aside(&cache));
        as_fresh(&cache, "the block removed");
    }

    /// A tiled mesh whose hierarchy is over its byte bound keeps it aside;
    /// the next edit takes the leg tables of untouched clusters from it,
    /// and what it builds is what a fresh tiled bake builds, byte for byte.
    #[test]
    fn an_unkept_hierarchy_serves_the_next_edit_as_a_fresh_bake() {
        use crate::bake::tiles::tests::{building, den520d_tiled};
        use crate::{Edit, TileCache};
        let (level, config) = den520d_tiled(32.0);
        let mut cache = TileCache::new(&level, &config).expect("bakes");
        assert!(
            cache.mesh().hierarchy_stats().is_none(),
            "over its bound at tile 32"
        );
        assert!(!cache.mesh().unkept.is_empty());
        cache
            .apply(&[Edit::Add(building(70.0, 60.0))])
            .expect("edit");
        let fresh = TileCache::new(&cache.level_with_obstacles(), &config).expect("bakes");
        agree_where_both_have_tables(&cache.mesh().unkept, &fresh.mesh().unkept);
        assert!(
            cache.into_mesh().unkept.is_empty(),
            "not carried out of the cache"
        );
    }
}
