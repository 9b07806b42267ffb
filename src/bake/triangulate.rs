//! Constrained Delaunay triangulation (spade) of the resolved outline, keeping
//! the walkable triangles and tagging each with its area.

use std::collections::VecDeque;

use crate::fxmap::{FxHashMap, FxHashSet};

use glam::{DVec2, Vec2};
use spade::handles::FixedVertexHandle;
use spade::{ConstrainedDelaunayTriangulation, Point2, Triangulation as _};

use super::noding::{self, Point, Segment, WALL};
use super::outline::Outline;
use crate::error::BakeError;

/// Walkable triangles of a constrained Delaunay triangulation, counter-clockwise.
///
/// This is what the bake merges into regions; it is public so that benchmarks
/// can hand the very same triangulation to other navigation libraries.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TriangleSoup {
    /// Vertex positions, world units.
    pub vertices: Vec<Vec2>,
    /// Counter-clockwise vertex index triples.
    pub triangles: Vec<[u32; 3]>,
}

/// Triangulation with adjacency, in f64 for the merge's convexity tests.
pub(crate) struct Triangulated {
    pub points: Vec<DVec2>,
    pub tris: Vec<[u32; 3]>,
    /// Area kind of each triangle (0 = plain ground, `1 + i` = costed area `i` of the outline).
    pub tri_area: Vec<u16>,
    /// Across edge k (from `tris[t][k]` to `tris[t][(k+1)%3]`): the walkable neighbour.
    pub neighbours: Vec<[Option<u32>; 3]>,
    /// Constraint edges spade had to drop because they crossed others.
    pub dropped: u32,
    /// Area inside the walls, as triangulated (after noding, which can bend
    /// a wall by a few grid steps).
    pub walkable_area: f64,
}

type Cdt = ConstrainedDelaunayTriangulation<Point2<f64>>;

/// Distinct vertices of sets of edges, numbered in sorted order of their
/// coordinates.
struct VertexTable {
    points: Vec<DVec2>,
}

impl VertexTable {
    /// Numbers the ends of `groups` of edges; returns the table and, per
    /// group, its deduplicated undirected edges as pairs of vertex numbers.
    fn build(groups: &[Vec<[DVec2; 2]>]) -> (VertexTable, Vec<Vec<[usize; 2]>>) {
        let all: Vec<DVec2> = groups.iter().flatten().flatten().copied().collect();
        let key = |p: DVec2| (p.x.to_bits() ^ (1 << 63), p.y.to_bits() ^ (1 << 63));
        let mut order: Vec<u32> = (0..all.len() as u32).collect();
        order.sort_unstable_by_key(|&i| key(all[i as usize]));
        let mut id = vec![0u32; all.len()];
        let mut points: Vec<DVec2> = Vec::with_capacity(all.len());
        for &i in &order {
            let p = all[i as usize];
            if points.last().is_none_or(|&q| q != p) {
                points.push(p);
            }
            id[i as usize] = points.len() as u32 - 1;
        }
        let mut ends = id.chunks_exact(2);
        let edges = groups
            .iter()
            .map(|group| {
                let mut out: Vec<[usize; 2]> = ends
                    .by_ref()
                    .take(group.len())
                    .filter(|e| e[0] != e[1])
                    .map(|e| [e[0].min(e[1]) as usize, e[0].max(e[1]) as usize])
                    .collect();
                out.sort_unstable();
                out.dedup();
                out
            })
            .collect();
        (VertexTable { points }, edges)
    }
}

/// The edges of closed contours.
fn contour_edges<'a>(contours: impl IntoIterator<Item = &'a Vec<DVec2>>) -> Vec<[DVec2; 2]> {
    contours
        .into_iter()
        .flat_map(|c| (0..c.len()).map(move |i| [c[i], c[(i + 1) % c.len()]]))
        .collect()
}

/// The outline's walls and, per area slot, its edges, noded ([`noding`]) so
/// that none crosses another (should the noding meet its work or round
/// bound first, spade drops what still crosses, and
/// [`Triangulated::dropped`] counts it).
fn noded_edges(outline: &Outline) -> NodedEdges {
    let scale = outline.scale;
    let to_grid = |p: DVec2| [(p.x * scale).round() as i64, (p.y * scale).round() as i64];
    let from_grid = |p: Point| DVec2::new(p[0] as f64 / scale, p[1] as f64 / scale);
    let mut segments: Vec<Segment> = contour_edges(&outline.walkable)
        .into_iter()
        .map(|[a, b]| Segment {
            ends: [to_grid(a), to_grid(b)],
            tag: WALL,
        })
        .collect();
    let first_area = segments.len();
    for (slot, (_, contours)) in outline.areas.iter().enumerate() {
        segments.extend(contour_edges(contours).into_iter().map(|[a, b]| Segment {
            ends: [to_grid(a), to_grid(b)],
            tag: slot as u32,
        }));
    }
    noding::node(&mut segments, first_area);
    // Bending can lay two walls on one segment: a hole's wall on the
    // outline's, in opposite directions, with unwalkable space on both
    // sides (outside the level, inside the hole), so no wall there. A
    // segment is a wall where the directions over it do not cancel, once.
    let mut net: FxHashMap<[Point; 2], i32> = FxHashMap::default();
    let mut areas = vec![Vec::new(); outline.areas.len()];
    for s in segments.into_iter().filter(|s| s.ends[0] != s.ends[1]) {
        let [a, b] = s.ends;
        if s.tag == WALL {
            *net.entry([a.min(b), a.max(b)]).or_default() += if a < b { 1 } else { -1 };
        } else {
            areas[s.tag as usize].push(s.ends.map(from_grid));
        }
    }
    let mut walls: Vec<[DVec2; 2]> = net
        .into_iter()
        .filter(|&(_, n)| n != 0)
        .map(|([a, b], n)| if n > 0 { [a, b] } else { [b, a] }.map(from_grid))
        .collect();
    // in a fixed order, whatever the map's
    walls.sort_unstable_by(|x, y| {
        let key = |e: &[DVec2; 2]| [e[0].x, e[0].y, e[1].x, e[1].y];
        key(x).partial_cmp(&key(y)).expect("grid points are finite")
    });
    (walls, areas)
}

/// The noded walls, and per area slot its noded edges.
type NodedEdges = (Vec<[DVec2; 2]>, Vec<Vec<[DVec2; 2]>>);

pub(crate) fn triangulate(outline: &Outline) -> Result<Triangulated, BakeError> {
    // walls, then every area's edges (noded against the walls and each other)
    let (walls, area_sides, walkable_area) = if outline.areas.is_empty() {
        let walls = contour_edges(&outline.walkable);
        (walls, Vec::new(), outline.walkable_area())
    } else {
        let (walls, areas) = noded_edges(outline);
        // the walls keep their contours' direction through the splits
        let twice: f64 = walls.iter().map(|[a, b]| a.perp_dot(*b)).sum();
        (walls, areas, 0.5 * twice)
    };
    let (table, mut edges) =
        VertexTable::build(&[walls, area_sides.iter().flatten().copied().collect()]);
    // each area's edges by rows of its box, so a triangle tests only the
    // areas whose box holds it, and only the edges level with it
    let area_tests: Vec<AreaTest> = area_sides.iter().map(|e| AreaTest::new(e)).collect();
    let area_edges = edges.pop().expect("two groups");
    let boundary_edges = edges.pop().expect("two groups");

    let vertices: Vec<Point2<f64>> = table.points.iter().map(|p| Point2::new(p.x, p.y)).collect();
    let mut dropped = 0u32;
    let mut cdt =
        Cdt::try_bulk_load_cdt(vertices, boundary_edges, |_| dropped += 1).map_err(|e| {
            BakeError::Triangulation {
                reason: "spade rejected the outline".to_string(),
                cause: Some(Box::new(e)),
            }
        })?;
    if cdt.num_vertices() != table.points.len() {
        return Err(BakeError::Triangulation {
            reason: format!(
                "spade merged vertices ({} of {})",
                cdt.num_vertices(),
                table.points.len()
            ),
            cause: None,
        });
    }
    // every constraint so far is a wall: remember them before areas add more
    let has_areas = !area_edges.is_empty();
    let walls: FxHashSet<(u32, u32)> = if !has_areas {
        FxHashSet::default() // every constraint is a wall: no need to remember them
    } else {
        cdt.undirected_edges()
            .filter(|e| e.is_constraint_edge())
            .map(|e| {
                let [a, b] = e.vertices().map(|v| v.fix().index() as u32);
                (a.min(b), a.max(b))
            })
            .collect()
    };
    for [a, b] in area_edges {
        let before = cdt.num_constraints();
        let added = cdt.try_add_constraint(
            FixedVertexHandle::from_index(a),
            FixedVertexHandle::from_index(b),
        );
        if added.is_empty()
            && cdt.num_constraints() == before
            && !cdt.exists_constraint(
                FixedVertexHandle::from_index(a),
                FixedVertexHandle::from_index(b),
            )
        {
            dropped += 1;
        }
    }

    // faces, and walkability by parity of walls crossed from the outside
    let face_count = cdt.num_inner_faces();
    let mut tris = Vec::with_capacity(face_count);
    let mut adj: Vec<[Option<u32>; 3]> = Vec::with_capacity(face_count);
    let mut wall: Vec<[bool; 3]> = Vec::with_capacity(face_count);
    for face in cdt.inner_faces() {
        let edges = face.adjacent_edges();
        let mut t = [0u32; 3];
        let mut n = [None; 3];
        let mut w = [false; 3];
        for (k, e) in edges.iter().enumerate() {
            let a = e.from().fix().index() as u32;
            let b = e.to().fix().index() as u32;
            t[k] = a;
            n[k] = e.rev().face().as_inner().map(|f| f.fix().index() as u32);
            w[k] = if has_areas {
                walls.contains(&(a.min(b), a.max(b)))
            } else {
                e.is_constraint_edge()
            };
        }
        tris.push(t);
        adj.push(n);
        wall.push(w);
    }
    // spade's inner face indices start at 1 (0 is the outer face)
    let first = cdt
        .inner_faces()
        .next()
        .map_or(1, |f| f.fix().index() as u32);
    for n in &mut adj {
        for x in n.iter_mut() {
            *x = x.map(|f| f - first);
        }
    }
    let mut inside: Vec<Option<bool>> = vec![None; tris.len()];
    let mut queue = VecDeque::new();
    for t in 0..tris.len() {
        for k in 0..3 {
            if adj[t][k].is_none() && inside[t].is_none() {
                inside[t] = Some(wall[t][k]);
                queue.push_back(t as u32);
            }
        }
    }
    while let Some(t) = queue.pop_front() {
        let here = inside[t as usize].expect("queued faces are classified");
        for k in 0..3 {
            if let Some(o) = adj[t as usize][k] {
                if inside[o as usize].is_none() {
                    inside[o as usize] = Some(here ^ wall[t as usize][k]);
                    queue.push_back(o);
                }
            }
        }
    }

    // keep walkable triangles, renumbered
    let mut new_index = vec![u32::MAX; tris.len()];
    let mut kept = Vec::new();
    for t in 0..tris.len() {
        if inside[t] == Some(true) {
            new_index[t] = kept.len() as u32;
            kept.push(t);
        }
    }
    let points = table.points;
    let mut out_tris = Vec::with_capacity(kept.len());
    let mut neighbours = Vec::with_capacity(kept.len());
    let mut tri_area = Vec::with_capacity(kept.len());
    for &t in &kept {
        out_tris.push(tris[t]);
        let mut n = [None; 3];
        for k in 0..3 {
            n[k] = adj[t][k].and_then(|o| {
                let i = new_index[o as usize];
                (i != u32::MAX && !wall[t][k]).then_some(i)
            });
        }
        neighbours.push(n);
        let [a, b, c] = tris[t].map(|i| points[i as usize]);
        let centroid = (a + b + c) / 3.0;
        let mut kind = 0u16;
        for (slot, test) in area_tests.iter().enumerate() {
            if test.contains(centroid) {
                kind = (slot + 1) as u16;
            }
        }
        tri_area.push(kind);
    }
    Ok(Triangulated {
        points,
        tris: out_tris,
        tri_area,
        neighbours,
        dropped,
        walkable_area,
    })
}

/// Crossing-number point-in-polygon over the edges of one area's closed
/// contours, with the edges listed by horizontal rows of their box: a point
/// tests only the edges of its row (a noded area can have thousands of
/// edges, and every triangle in its box is tested).
struct AreaTest<'a> {
    edges: &'a [[DVec2; 2]],
    lo: DVec2,
    hi: DVec2,
    row_height: f64,
    /// Per row, the start of its run in `in_row`.
    row_start: Vec<u32>,
    in_row: Vec<u32>,
}

impl<'a> AreaTest<'a> {
    fn new(edges: &'a [[DVec2; 2]]) -> AreaTest<'a> {
        let (lo, hi) = edges.iter().flatten().fold(
            (DVec2::splat(f64::INFINITY), DVec2::splat(f64::NEG_INFINITY)),
            |(lo, hi), &p| (lo.min(p), hi.max(p)),
        );
        // about four edges a row
        let rows = (edges.len() / 4).max(1);
        let row_height = ((hi.y - lo.y) / rows as f64).max(f64::MIN_POSITIVE);
        let mut test = AreaTest {
            edges,
            lo,
            hi,
            row_height,
            row_start: vec![0; rows + 1],
            in_row: Vec::new(),
        };
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        for (i, [a, b]) in edges.iter().enumerate() {
            let (r0, r1) = (test.row(a.y.min(b.y)), test.row(a.y.max(b.y)));
            pairs.extend((r0..=r1).map(|r| (r as u32, i as u32)));
        }
        pairs.sort_unstable();
        for &(r, _) in &pairs {
            test.row_start[r as usize + 1] += 1;
        }
        for r in 0..rows {
            test.row_start[r + 1] += test.row_start[r];
        }
        test.in_row = pairs.into_iter().map(|(_, i)| i).collect();
        test
    }

    fn row(&self, y: f64) -> usize {
        let rows = self.row_start.len() - 1;
        (((y - self.lo.y) / self.row_height) as usize).min(rows - 1)
    }

    fn contains(&self, p: DVec2) -> bool {
        if !(p.cmpge(self.lo).all() && p.cmple(self.hi).all()) {
            return false;
        }
        let r = self.row(p.y);
        let run = &self.in_row[self.row_start[r] as usize..self.row_start[r + 1] as usize];
        let mut inside = false;
        for &i in run {
            let [a, b] = self.edges[i as usize];
            if (a.y > p.y) != (b.y > p.y) {
                let x = a.x + (p.y - a.y) / (b.y - a.y) * (b.x - a.x);
                if p.x < x {
                    inside = !inside;
                }
            }
        }
        inside
    }
}

impl Triangulated {
    pub(crate) fn soup(&self) -> TriangleSoup {
        TriangleSoup {
            vertices: self.points.iter().map(|p| p.as_vec2()).collect(),
            triangles: self.tris.clone(),
        }
    }
}
