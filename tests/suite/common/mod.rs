//! Shared helpers: data paths found through CARGO_MANIFEST_DIR.
#![allow(dead_code)]

use std::path::PathBuf;

/// The bundled Moving AI maps, `data/maps` in the repository.
pub fn movingai_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/maps")
}

/// The bundled data folder.
pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data")
}

/// Bytes of the file `config` bakes `level` into without a hierarchy: the
/// "rest of the file" the hierarchy's byte bound is a multiple of.
pub fn rest_of_file(level: &portalnav::Level, config: &portalnav::BakeConfig) -> usize {
    let flat = portalnav::BakeConfig {
        corridors: false,
        ..config.clone()
    };
    let mesh = portalnav::NavMesh::bake(level, &flat).unwrap();
    mesh.to_bytes().unwrap().len()
}

/// Names (without extension) of every bundled Moving AI map.
pub fn bundled_maps() -> Vec<String> {
    map_names(&movingai_dir())
}

/// Names (without extension) of the Moving AI maps in `dir`, sorted.
pub fn map_names(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| {
            let p = e.ok()?.path();
            if p.extension()? == "map" {
                Some(p.file_stem()?.to_string_lossy().into_owned())
            } else {
                None
            }
        })
        .collect();
    names.sort();
    names
}

/// An independent reading of a Moving AI map for checking paths: free cells
/// only, parsed here rather than by the library.
pub struct CheckGrid {
    pub width: i64,
    pub height: i64,
    free: Vec<bool>,
}

impl CheckGrid {
    pub fn load(path: &std::path::Path) -> CheckGrid {
        let text = std::fs::read_to_string(path).unwrap();
        let lines: Vec<&str> = text.lines().map(|l| l.trim_end_matches('\r')).collect();
        let num = |key: &str| -> i64 {
            let line = lines.iter().find(|l| l.starts_with(key)).unwrap();
            line[key.len()..].trim().parse().unwrap()
        };
        let (width, height) = (num("width"), num("height"));
        let start = lines.iter().position(|l| *l == "map").unwrap() + 1;
        let mut free = Vec::new();
        for row in &lines[start..start + height as usize] {
            free.extend(row.bytes().map(|c| matches!(c, b'.' | b'G' | b'S')));
        }
        CheckGrid {
            width,
            height,
            free,
        }
    }

    pub fn from_mask(width: i64, height: i64, free: Vec<bool>) -> CheckGrid {
        CheckGrid {
            width,
            height,
            free,
        }
    }

    /// The distance from segment `p`-`q` to the nearest blocked cell (or
    /// cell outside the map), or `reach` if none is nearer.
    pub fn clearance(&self, p: glam::Vec2, q: glam::Vec2, reach: f64) -> f64 {
        let (p, q) = (p.as_dvec2(), q.as_dvec2());
        let lo = p.min(q) - glam::DVec2::splat(reach);
        let hi = p.max(q) + glam::DVec2::splat(reach);
        let mut best = reach;
        for y in lo.y.floor() as i64..=hi.y.floor() as i64 {
            for x in lo.x.floor() as i64..=hi.x.floor() as i64 {
                if !self.free(x, y) {
                    let cell = [
                        glam::dvec2(x as f64, y as f64),
                        glam::dvec2(x as f64 + 1.0, y as f64 + 1.0),
                    ];
                    best = best.min(segment_to_box(p, q, cell));
                }
            }
        }
        best
    }

    pub fn free(&self, x: i64, y: i64) -> bool {
        x >= 0
            && y >= 0
            && x < self.width
            && y < self.height
            && self.free[(y * self.width + x) as usize]
    }

    /// Why the segment leaves free space, if it does: it enters a blocked
    /// cell's interior, or passes through a grid corner between two free cells
    /// that touch only there.
    pub fn segment_problem(&self, p: glam::Vec2, q: glam::Vec2) -> Option<String> {
        const EPS: f64 = 1e-4;
        let (p, q) = (p.as_dvec2(), q.as_dvec2());
        let d = q - p;
        let mut ts = vec![0.0, 1.0];
        for axis in 0..2 {
            let (a, b) = if axis == 0 { (p.x, q.x) } else { (p.y, q.y) };
            if (b - a).abs() < 1e-12 {
                continue;
            }
            let (lo, hi) = (a.min(b).ceil() as i64, a.max(b).floor() as i64);
            for k in lo..=hi {
                let t = (k as f64 - a) / (b - a);
                if t > 0.0 && t < 1.0 {
                    ts.push(t);
                }
            }
        }
        ts.sort_by(f64::total_cmp);
        for w in ts.windows(2) {
            if w[1] - w[0] < 1e-9 {
                continue;
            }
            let m = p + d * ((w[0] + w[1]) * 0.5);
            let on_x = (m.x - m.x.round()).abs() < EPS;
            let on_y = (m.y - m.y.round()).abs() < EPS;
            let ok = match (on_x, on_y) {
                (false, false) => self.free(m.x.floor() as i64, m.y.floor() as i64),
                (true, false) => {
                    let (x, y) = (m.x.round() as i64, m.y.floor() as i64);
                    self.free(x - 1, y) || self.free(x, y)
                }
                (false, true) => {
                    let (x, y) = (m.x.floor() as i64, m.y.round() as i64);
                    self.free(x, y - 1) || self.free(x, y)
                }
                (true, true) => true,
            };
            if !ok {
                return Some(format!(
                    "enters a blocked cell near ({:.3}, {:.3})",
                    m.x, m.y
                ));
            }
        }
        // crossings of grid corners: the cells just before and after must not
        // be a diagonal pair whose other two cells are both blocked
        for &t in &ts[1..ts.len() - 1] {
            let c = p + d * t;
            if (c.x - c.x.round()).abs() < EPS
                && (c.y - c.y.round()).abs() < EPS
                && d.x != 0.0
                && d.y != 0.0
            {
                let (x, y) = (c.x.round() as i64, c.y.round() as i64);
                let before = (
                    if d.x > 0.0 { x - 1 } else { x },
                    if d.y > 0.0 { y - 1 } else { y },
                );
                let after = (
                    if d.x > 0.0 { x } else { x - 1 },
                    if d.y > 0.0 { y } else { y - 1 },
                );
                let side1 = (after.0, before.1);
                let side2 = (before.0, after.1);
                if !self.free(side1.0, side1.1) && !self.free(side2.0, side2.1) {
                    return Some(format!(
                        "squeezes between blocked cells at corner ({x}, {y})"
                    ));
                }
            }
        }
        None
    }
}

/// The 8-connected optimum without corner cutting between two free cells,
/// by grid A* (the pathfinding crate), or `None` when they are not connected.
/// Not in fuzz targets, which include this file without that crate.
#[cfg(not(fuzzing))]
pub fn octile_optimum(
    free: impl Fn(i64, i64) -> bool,
    a: (i64, i64),
    b: (i64, i64),
) -> Option<f64> {
    pathfinding::prelude::astar(
        &a,
        |&(x, y)| {
            let mut next = Vec::with_capacity(8);
            for (dx, dy) in [
                (1, 0),
                (-1, 0),
                (0, 1),
                (0, -1),
                (1, 1),
                (1, -1),
                (-1, 1),
                (-1, -1),
            ] {
                let (nx, ny) = (x + dx, y + dy);
                let diagonal = dx != 0 && dy != 0;
                if free(nx, ny) && (!diagonal || (free(x + dx, y) && free(x, y + dy))) {
                    let cost = if diagonal { 1_414_214u64 } else { 1_000_000 };
                    next.push(((nx, ny), cost));
                }
            }
            next
        },
        |&(x, y)| {
            let (dx, dy) = ((x - b.0).unsigned_abs(), (y - b.1).unsigned_abs());
            dx.max(dy) * 1_000_000 - dx.min(dy) * (1_000_000 - 414_213)
        },
        |&p| p == b,
    )
    .map(|(_, cost)| cost as f64 / 1e6)
}

/// Xorshift64: a reproducible stream of numbers for tests that draw at
/// random (the state must not start at 0).
pub struct Xorshift(pub u64);

impl Xorshift {
    /// The next number of the stream.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// The next number below `n` (above 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// A `w` x `h` grid with about 30% of its cells blocked, drawn by xorshift
/// from `seed`.
pub fn random_grid(w: usize, h: usize, seed: u64) -> portalnav::Grid {
    let mut rng = Xorshift(seed | 1);
    let free: Vec<bool> = (0..w * h).map(|_| rng.below(100) >= 30).collect();
    portalnav::Grid::from_mask(w, h, free)
}

/// Distance between segment `p`-`q` and the box `[lo, hi]`: 0 if they meet,
/// else the least over the segment's ends to the box and the box's corners
/// to the segment (for disjoint convex sets it is attained at one of them).
pub fn segment_to_box(p: glam::DVec2, q: glam::DVec2, [lo, hi]: [glam::DVec2; 2]) -> f64 {
    // Liang-Barsky: does the segment enter the box?
    let d = q - p;
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    let mut meets = true;
    for (delta, from, min, max) in [(d.x, p.x, lo.x, hi.x), (d.y, p.y, lo.y, hi.y)] {
        if delta == 0.0 {
            if from < min || from > max {
                meets = false;
            }
            continue;
        }
        let (a, b) = ((min - from) / delta, (max - from) / delta);
        let (a, b) = (a.min(b), a.max(b));
        t0 = t0.max(a);
        t1 = t1.min(b);
    }
    if meets && t0 <= t1 {
        return 0.0;
    }
    let to_box = |v: glam::DVec2| (v.clamp(lo, hi) - v).length();
    let to_segment = |c: glam::DVec2| {
        let t = if d == glam::DVec2::ZERO {
            0.0
        } else {
            ((c - p).dot(d) / d.length_squared()).clamp(0.0, 1.0)
        };
        (p + d * t - c).length()
    };
    let corners = [lo, glam::dvec2(hi.x, lo.y), hi, glam::dvec2(lo.x, hi.y)];
    corners
        .iter()
        .map(|&c| to_segment(c))
        .chain([to_box(p), to_box(q)])
        .fold(f64::INFINITY, f64::min)
}

/// The step of the grid a whole bake of `level` snaps to: a power of two
/// with the level's largest coordinate under 2^23 steps (as the bake
/// chooses it).
pub fn grid_step(level: &portalnav::Level) -> f64 {
    let extent = (level.walkable.iter().chain(&level.obstacles))
        .chain(level.areas.iter().map(|a| &a.polygon))
        .flatten()
        .map(|v| f64::from(v.x.abs().max(v.y.abs())))
        .fold(1.0, f64::max);
    2f64.powi(extent.log2().floor() as i32 - 22)
}

/// A JSON level's walls, as the independent path oracle reads them: its
/// walkable outlines first (`walls[..walkable]`), then its obstacles and
/// impassable areas.
pub struct LevelWalls {
    pub walls: Vec<Vec<glam::Vec2>>,
    pub walkable: usize,
}

impl LevelWalls {
    pub fn new(level: &portalnav::Level) -> LevelWalls {
        let mut walls = level.walkable.clone();
        walls.extend(level.obstacles.iter().cloned());
        let blocked = level.areas.iter().filter(|a| a.cost.is_none());
        walls.extend(blocked.map(|a| a.polygon.clone()));
        LevelWalls {
            walls,
            walkable: level.walkable.len(),
        }
    }

    /// Whether `p` is on walkable ground: inside a walkable outline and
    /// inside no obstacle (each polygon read even-odd), or within `near` of
    /// one of the walls (the bake snaps corners to a fine grid).
    pub fn walkable(&self, p: glam::DVec2, near: f64) -> bool {
        let inside = |poly: &[glam::Vec2]| inside_even_odd(poly, p);
        let open = self.walls[..self.walkable].iter().any(|w| inside(w))
            && !self.walls[self.walkable..].iter().any(|w| inside(w));
        open || self
            .edges()
            .any(|(a, b)| point_segment_distance(a, b, p) < near)
    }

    fn edges(&self) -> impl Iterator<Item = (glam::DVec2, glam::DVec2)> + '_ {
        self.walls.iter().flat_map(|w| {
            (0..w.len()).map(move |k| (w[k].as_dvec2(), w[(k + 1) % w.len()].as_dvec2()))
        })
    }

    /// Where the path through `waypoints` leaves walkable ground by more
    /// than `near`, if it does: each leg is cut where it crosses a wall, and
    /// the middle of every piece must be walkable.
    pub fn path_problem(&self, waypoints: &[glam::Vec2], near: f64) -> Option<String> {
        for leg in waypoints.windows(2) {
            let (p, q) = (leg[0].as_dvec2(), leg[1].as_dvec2());
            let d = q - p;
            let mut ts = vec![0.0, 1.0];
            for (a, b) in self.edges() {
                if let Some((t, s)) = segment_crossing(p, d, a, b) {
                    if t > 0.0 && t < 1.0 && (0.0..=1.0).contains(&s) {
                        ts.push(t);
                    }
                }
            }
            ts.sort_by(f64::total_cmp);
            for w in ts.windows(2) {
                let m = p + d * (0.5 * (w[0] + w[1]));
                if !self.walkable(m, near) {
                    return Some(format!("the leg {p} -> {q} leaves walkable ground at {m}"));
                }
            }
        }
        None
    }
}

/// Distance from `p` to the segment `a`-`b`.
pub fn point_segment_distance(a: glam::DVec2, b: glam::DVec2, p: glam::DVec2) -> f64 {
    let e = b - a;
    let len2 = e.length_squared();
    let s = if len2 > 0.0 {
        ((p - a).dot(e) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (a + e * s).distance(p)
}

/// Whether `p` is inside `polygon`, read even-odd (either winding).
pub fn inside_even_odd(polygon: &[glam::Vec2], p: glam::DVec2) -> bool {
    let mut odd = false;
    for k in 0..polygon.len() {
        let (a, b) = (
            polygon[k].as_dvec2(),
            polygon[(k + 1) % polygon.len()].as_dvec2(),
        );
        if (a.y > p.y) != (b.y > p.y) && p.x < a.x + (p.y - a.y) / (b.y - a.y) * (b.x - a.x) {
            odd = !odd;
        }
    }
    odd
}

/// The walls of `mesh`: each region's edges that no portal crosses, from
/// one corner to the next.
pub fn mesh_walls(mesh: &portalnav::NavMesh) -> impl Iterator<Item = [glam::Vec2; 2]> + '_ {
    mesh.regions().flat_map(|(_, r)| {
        let v = r.vertices();
        (r.edge_portals().iter().enumerate())
            .filter(|(_, p)| p.is_none())
            .map(move |(i, _)| [v[i], v[(i + 1) % v.len()]])
    })
}

/// Why a region of `mesh` carries another area kind than `level` gives it,
/// if one does: at each region's centre and at points 0.9 of the way to its
/// corners, the kind must be the last costed area holding the point, or
/// plain ground (0). Points within 8 snapping steps of an area's outline or
/// of a wall of the mesh are skipped: the noding bends both by up to a step
/// where they cross.
pub fn area_kind_problem(level: &portalnav::Level, mesh: &portalnav::NavMesh) -> Option<String> {
    use glam::DVec2;
    let step = grid_step(level);
    let costed: Vec<&Vec<glam::Vec2>> = level
        .areas
        .iter()
        .filter(|a| a.cost.is_some())
        .map(|a| &a.polygon)
        .collect();
    let walls: Vec<[DVec2; 2]> = mesh_walls(mesh)
        .map(|[a, b]| [a.as_dvec2(), b.as_dvec2()])
        .collect();
    let near_outline = |p: DVec2| {
        costed.iter().any(|poly| {
            (0..poly.len()).any(|i| {
                point_segment_distance(poly[i].as_dvec2(), poly[(i + 1) % poly.len()].as_dvec2(), p)
                    < 8.0 * step
            })
        }) || walls
            .iter()
            .any(|&[a, b]| point_segment_distance(a, b, p) < 8.0 * step)
    };
    for (_, region) in mesh.regions() {
        let v: Vec<DVec2> = region.vertices().iter().map(|v| v.as_dvec2()).collect();
        let centre = v.iter().copied().sum::<DVec2>() / v.len() as f64;
        for p in std::iter::once(centre).chain(v.iter().map(|&c| centre + (c - centre) * 0.9)) {
            if near_outline(p) {
                continue;
            }
            let expected = costed
                .iter()
                .rposition(|poly| inside_even_odd(poly, p))
                .map_or(0, |k| k + 1);
            if usize::from(region.area()) != expected {
                return Some(format!(
                    "a region around {p} has kind {}, the level gives {expected} there",
                    region.area()
                ));
            }
        }
    }
    None
}

/// Where the line `p + t d` meets the line through `a`-`b`, as `(t, s)`
/// with the meeting point at `a + s (b - a)`; `None` when they are parallel.
pub fn segment_crossing(
    p: glam::DVec2,
    d: glam::DVec2,
    a: glam::DVec2,
    b: glam::DVec2,
) -> Option<(f64, f64)> {
    let e = b - a;
    let denom = d.perp_dot(e);
    (denom != 0.0).then(|| ((a - p).perp_dot(e) / denom, (a - p).perp_dot(d) / denom))
}
