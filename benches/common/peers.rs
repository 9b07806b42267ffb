//! Peer implementations the benchmarks compare `portalnav` against.
//!
//! * [Polyanya](https://docs.rs/polyanya/0.18) — optimal any-angle search on a navigation
//!   mesh: [`polyanya_from_triangles`], [`polyanya_prepare`], [`polyanya_polygon_count`] and
//!   [`polyanya_path_length`].
//! * Grid A* from the `pathfinding` crate on an 8-connected octile grid without corner
//!   cutting (the Moving AI benchmark rules): [`GridPeer`].
//!
//! This file deliberately uses no `portalnav` type: it takes plain slices and returns plain
//! numbers, so the peers cannot share code with the crate under test. Its only dependencies
//! are `polyanya` 0.18, `pathfinding` 4, `glam` 0.33 (the version polyanya uses) and `std`.
//!
//! Include it from a bench with `#[path = "common/peers.rs"] mod peers;`.

#![allow(dead_code)] // Each bench uses only some of the peers.

use std::cmp::Ordering;
use std::collections::HashMap;

use glam::Vec2;
use pathfinding::prelude::astar;
use polyanya::{Mesh, Polygon, Vertex};

// ---------------------------------------------------------------------------------------------
// Polyanya
// ---------------------------------------------------------------------------------------------

/// Marker polyanya uses, in a vertex's polygon list, for a gap with no walkable polygon.
const OUTSIDE: u32 = u32::MAX;

/// Builds a polyanya [`Mesh`] from a triangle mesh of the walkable area.
///
/// * `vertices`: the vertex positions.
/// * `triangles`: the walkable triangles only, as indices into `vertices`, each in
///   counter-clockwise order, forming a conforming triangulation (two triangles meet along a
///   whole shared edge, at a single shared vertex, or not at all), e.g. a constrained Delaunay
///   triangulation of the walkable area. Holes, several disconnected islands and "pinch"
///   vertices (two walkable areas touching only at one vertex) are all supported. Vertices no
///   triangle uses are allowed.
///
/// Each triangle becomes one polyanya [`Polygon`], with the same index and vertex order. Its
/// `is_one_way` flag is set when it has at most one neighbour across its edges: a dead end,
/// which polyanya only enters when the goal is inside it.
///
/// Each vertex gets the polygon list polyanya expects: the triangles around it in
/// counter-clockwise order, with one `u32::MAX` in every angular gap not covered by walkable
/// triangles (the outside of the mesh, a hole, or the space between the two sides of a pinch
/// vertex). A vertex surrounded by triangles has no `u32::MAX`, so polyanya does not treat it
/// as a corner; a vertex no triangle uses gets `[u32::MAX]` and is never reached by a search.
/// This is the same list `polyanya::Trimesh` produces, computed from shared edges instead of
/// angle sorting, so it stays correct at pinch vertices.
///
/// The search settings (`search_delta`, `search_steps`) keep polyanya's defaults. None is
/// needed for boundary points: the first point-location step is an exact point-in-polygon
/// test that accepts points on edges and vertices (a point on a shared edge lands in both
/// polygons, and polyanya merges such readings). Query points at cell centres are at least
/// 0.5 away from any non-walkable cell, out of reach of the default 0.1 fallback radius, so a
/// point outside the mesh still gets no path.
///
/// This function does not merge polygons. Note that `polyanya::Mesh::new` itself builds the
/// point-location tree and the island table (unless polyanya's `no-default-baking` feature is
/// enabled); [`polyanya_prepare`] merges and then bakes again.
///
/// # Panics
///
/// If `triangles` is empty, if an index is out of range, or if the triangles are not a
/// conforming, consistently counter-clockwise triangulation (two triangles using the same
/// directed edge, or the triangles around a vertex not forming fans).
pub fn polyanya_from_triangles(vertices: &[Vec2], triangles: &[[u32; 3]]) -> Mesh {
    assert!(
        !triangles.is_empty(),
        "polyanya cannot build a mesh without triangles"
    );
    let vertex_count = vertices.len();

    // Every directed edge `a -> b` of every triangle, mapped to that triangle. The triangle on
    // the other side of that edge, if any, is the one owning `b -> a`.
    let mut edges = EdgeOwners(HashMap::with_capacity(triangles.len() * 3));
    // Triangles using each vertex, in no particular order.
    let mut incident: Vec<Vec<u32>> = vec![Vec::new(); vertex_count];
    for (index, triangle) in triangles.iter().enumerate() {
        let index = u32::try_from(index).expect("too many triangles for polyanya");
        for corner in 0..3 {
            let from = triangle[corner];
            let to = triangle[(corner + 1) % 3];
            assert!(
                (from as usize) < vertex_count,
                "triangle {index} uses vertex {from}, which is out of range"
            );
            let previous = edges.0.insert((from, to), index);
            assert!(
                previous.is_none(),
                "triangles {previous:?} and {index} both use the directed edge {from} -> {to}: \
                 they overlap, or one of them is not counter-clockwise"
            );
            incident[from as usize].push(index);
        }
    }

    let polygons: Vec<Polygon> = triangles
        .iter()
        .map(|triangle| {
            let neighbours = (0..3)
                .filter(|&corner| {
                    edges
                        .owner(triangle[(corner + 1) % 3], triangle[corner])
                        .is_some()
                })
                .count();
            Polygon::new(triangle.to_vec(), neighbours <= 1)
        })
        .collect();

    let mut fans = Vec::new();
    let polyanya_vertices: Vec<Vertex> = (0..vertex_count)
        .map(|index| {
            let around = &incident[index];
            let list = if around.is_empty() {
                vec![OUTSIDE]
            } else {
                let fan = Fan {
                    vertex: index as u32,
                    positions: vertices,
                    triangles,
                    edges: &edges,
                };
                fan.polygons_around(around, &mut fans)
            };
            Vertex::new(vertices[index], list)
        })
        .collect();

    Mesh::new(polyanya_vertices, polygons).expect("polyanya rejected the mesh")
}

/// Directed edge `(from, to)` to the index of the triangle that has it.
struct EdgeOwners(HashMap<(u32, u32), u32>);

impl EdgeOwners {
    /// The triangle having the directed edge `from -> to`, if any.
    fn owner(&self, from: u32, to: u32) -> Option<u32> {
        self.0.get(&(from, to)).copied()
    }
}

/// What is needed to walk the triangles around one vertex.
struct Fan<'a> {
    vertex: u32,
    positions: &'a [Vec2],
    triangles: &'a [[u32; 3]],
    edges: &'a EdgeOwners,
}

impl Fan<'_> {
    /// The two other vertices of `triangle`, counter-clockwise after `self.vertex`: the
    /// triangle covers the angle from the direction of the first to the direction of the
    /// second, counter-clockwise around `self.vertex`.
    fn others(&self, triangle: u32) -> (u32, u32) {
        let t = self.triangles[triangle as usize];
        let at = t
            .iter()
            .position(|&v| v == self.vertex)
            .expect("a triangle is listed around a vertex it does not use");
        (t[(at + 1) % 3], t[(at + 2) % 3])
    }

    /// The triangle following `triangle` counter-clockwise around the vertex: the one across
    /// its edge `prev -> vertex`, i.e. owning `vertex -> prev`.
    fn ccw_next(&self, triangle: u32) -> Option<u32> {
        self.edges.owner(self.vertex, self.others(triangle).1)
    }

    /// The triangle preceding `triangle` counter-clockwise around the vertex: the one across
    /// its edge `vertex -> next`, i.e. owning `next -> vertex`.
    fn ccw_previous(&self, triangle: u32) -> Option<u32> {
        self.edges.owner(self.others(triangle).0, self.vertex)
    }

    /// The polygon list of the vertex in the format polyanya wants: the triangles of `around`
    /// (all the triangles using the vertex) in counter-clockwise order, with `u32::MAX` after
    /// each maximal run of triangles sharing edges, unless that run closes on itself.
    ///
    /// `fans` is scratch space, reused across vertices.
    fn polygons_around(&self, around: &[u32], fans: &mut Vec<Vec<u32>>) -> Vec<u32> {
        let vertex = self.vertex;
        // Split the triangles into fans: maximal runs of triangles sharing edges around the
        // vertex, each starting at a triangle with nothing before it.
        fans.clear();
        for &first in around {
            if self.ccw_previous(first).is_some() {
                continue;
            }
            let mut fan = vec![first];
            let mut current = first;
            while let Some(next) = self.ccw_next(current) {
                assert!(
                    fan.len() < around.len(),
                    "the triangles around vertex {vertex} loop without closing: invalid mesh"
                );
                fan.push(next);
                current = next;
            }
            fans.push(fan);
        }

        if fans.is_empty() {
            // No gap anywhere: the vertex is inside the mesh and its triangles form one cycle.
            let first = around[0];
            let mut cycle = vec![first];
            let mut current = first;
            loop {
                let next = self
                    .ccw_next(current)
                    .expect("without any gap, every triangle has a successor");
                if next == first {
                    break;
                }
                assert!(
                    cycle.len() < around.len(),
                    "the triangles around vertex {vertex} do not form one cycle: invalid mesh"
                );
                cycle.push(next);
                current = next;
            }
            assert_eq!(
                cycle.len(),
                around.len(),
                "vertex {vertex} is surrounded by more than one cycle of triangles: invalid mesh"
            );
            return cycle;
        }

        assert_eq!(
            fans.iter().map(Vec::len).sum::<usize>(),
            around.len(),
            "the triangles around vertex {vertex} do not split into fans: invalid mesh"
        );
        // Fans do not overlap, so sorting them by the direction in which their first edge
        // leaves the vertex puts them in counter-clockwise order.
        let centre = self.positions[vertex as usize];
        let start_direction = |fan: &Vec<u32>| {
            let (first_edge_end, _) = self.others(fan[0]);
            self.positions[first_edge_end as usize] - centre
        };
        fans.sort_by(|a, b| counter_clockwise(start_direction(a), start_direction(b)));

        let mut polygons = Vec::with_capacity(around.len() + fans.len());
        for fan in fans.iter() {
            polygons.extend_from_slice(fan);
            polygons.push(OUTSIDE);
        }
        polygons
    }
}

/// Orders two non-zero directions by their angle counter-clockwise from `+X`, in `[0, 2π)`,
/// without trigonometry: the half-plane first, then the sign of the cross product (computed
/// in `f64`, exact for `f32` inputs).
fn counter_clockwise(a: Vec2, b: Vec2) -> Ordering {
    let lower_half = |d: Vec2| d.y < 0.0 || (d.y == 0.0 && d.x < 0.0);
    lower_half(a).cmp(&lower_half(b)).then_with(|| {
        let cross = f64::from(a.x) * f64::from(b.y) - f64::from(a.y) * f64::from(b.x);
        // `b` counter-clockwise of `a` (positive cross product) puts `a` first.
        0.0_f64.partial_cmp(&cross).unwrap_or(Ordering::Equal)
    })
}

/// Prepares a mesh for searching the way polyanya recommends: `Mesh::merge_polygons` (merges
/// neighbouring polygons while they stay convex; this also unbakes the mesh) and then
/// `Mesh::bake` (rebuilds the point-location tree and the island table).
pub fn polyanya_prepare(mesh: &mut Mesh) {
    mesh.merge_polygons();
    mesh.bake();
}

/// Number of polygons of the mesh, over all its layers (a mesh built by
/// [`polyanya_from_triangles`] has exactly one).
pub fn polyanya_polygon_count(mesh: &Mesh) -> usize {
    mesh.layers.iter().map(|layer| layer.polygons.len()).sum()
}

/// Length of the shortest any-angle path polyanya finds from `from` to `to` (`Mesh::path`),
/// or `None` if either point is outside the mesh or there is no path. Both points may lie on
/// polygon edges or vertices.
pub fn polyanya_path_length(mesh: &Mesh, from: Vec2, to: Vec2) -> Option<f32> {
    mesh.path(from, to).map(|path| path.length)
}

// ---------------------------------------------------------------------------------------------
// Grid A*
// ---------------------------------------------------------------------------------------------

/// Fixed-point scale of the A* costs: a straight move costs `STRAIGHT` = 1.0.
const STRAIGHT: u64 = 1_000_000_000;
/// A diagonal move, √2 · 10⁹ rounded to the nearest integer (1 414 213 562.373…).
const DIAGONAL: u64 = 1_414_213_562;

/// Grid A* peer: `pathfinding::prelude::astar` on an 8-connected grid, the Moving AI
/// "octile" rules.
///
/// Moves go to the 8 neighbouring cells; a straight move costs 1, a diagonal one √2, and a
/// diagonal move is allowed only when both orthogonally adjacent cells it passes between are
/// free (no corner cutting). The heuristic is the octile distance, which is consistent.
///
/// `pathfinding`'s `astar` needs an `Ord` cost, so costs are fixed-point `u64` in units of
/// 10⁻⁹: straight = 1 000 000 000, diagonal = 1 414 213 562. The diagonal cost is off by less
/// than 3.8·10⁻¹⁰ per move, so a length is within 3.8·10⁻¹⁰ × (number of diagonal moves) of the
/// exact optimum: under 10⁻⁶ for any path shorter than 2 600 moves, far below the 10⁻³
/// tolerance used against the Moving AI optima. `u64` holds paths of up to ~10¹⁰ moves.
#[derive(Debug, Clone)]
pub struct GridPeer {
    width: usize,
    height: usize,
    free: Vec<bool>,
}

impl GridPeer {
    /// A grid of `width` × `height` cells; `free[y * width + x]` tells whether cell `(x, y)` is
    /// walkable (row-major).
    ///
    /// # Panics
    ///
    /// If `free.len() != width * height`.
    pub fn new(width: usize, height: usize, free: Vec<bool>) -> Self {
        assert_eq!(
            free.len(),
            width * height,
            "the grid needs exactly one walkability flag per cell"
        );
        Self {
            width,
            height,
            free,
        }
    }

    /// Whether cell `(x, y)` is inside the grid and walkable.
    fn is_free(&self, x: usize, y: usize) -> bool {
        x < self.width && y < self.height && self.free[y * self.width + x]
    }

    /// Length of the shortest 8-connected path without corner cutting from cell `start` to
    /// cell `goal`, both given as `(x, y)`; `None` if either cell is outside the grid or
    /// blocked, or if the goal cannot be reached. `start == goal` (on a free cell) gives 0.
    pub fn astar_length(&self, start: (usize, usize), goal: (usize, usize)) -> Option<f64> {
        if !self.is_free(start.0, start.1) || !self.is_free(goal.0, goal.1) {
            return None;
        }
        let width = self.width;
        let goal_index = goal.1 * width + goal.0;
        let (_, cost) = astar(
            &(start.1 * width + start.0),
            |&index| self.successors(index),
            |&index| {
                let (x, y) = (index % width, index / width);
                octile(x.abs_diff(goal.0) as u64, y.abs_diff(goal.1) as u64)
            },
            |&index| index == goal_index,
        )?;
        Some(cost as f64 / STRAIGHT as f64)
    }

    /// The free neighbours of cell `index` with the cost of moving there, without allocating.
    fn successors(&self, index: usize) -> impl Iterator<Item = (usize, u64)> {
        let width = self.width;
        let (x, y) = (index % width, index / width);
        // Neighbour `(x + dx, y + dy)`, if inside the grid and free. Wrapping turns `x - 1`
        // at `x == 0` into `usize::MAX`, which `is_free` rejects.
        let open = |dx: isize, dy: isize| {
            let nx = x.wrapping_add_signed(dx);
            let ny = y.wrapping_add_signed(dy);
            self.is_free(nx, ny)
        };
        let west = open(-1, 0);
        let east = open(1, 0);
        let north = open(0, -1);
        let south = open(0, 1);
        let step = |ok: bool, dx: isize, dy: isize, cost: u64| {
            ok.then(|| {
                let target = index
                    .wrapping_add_signed(dy * width as isize)
                    .wrapping_add_signed(dx);
                (target, cost)
            })
        };
        [
            step(west, -1, 0, STRAIGHT),
            step(east, 1, 0, STRAIGHT),
            step(north, 0, -1, STRAIGHT),
            step(south, 0, 1, STRAIGHT),
            step(north && west && open(-1, -1), -1, -1, DIAGONAL),
            step(north && east && open(1, -1), 1, -1, DIAGONAL),
            step(south && west && open(-1, 1), -1, 1, DIAGONAL),
            step(south && east && open(1, 1), 1, 1, DIAGONAL),
        ]
        .into_iter()
        .flatten()
    }
}

/// Octile distance, in the fixed-point units of the costs, for offsets `dx` and `dy` cells: the
/// exact cost of the best path on an empty grid, so the heuristic is consistent.
fn octile(dx: u64, dy: u64) -> u64 {
    let (long, short) = if dx > dy { (dx, dy) } else { (dy, dx) };
    (long - short) * STRAIGHT + short * DIAGONAL
}
