//! Structured changes to baked files, for the `baked_fields` fuzz target:
//! a file is decoded, a few of its fields are changed as a hostile or
//! corrupted file might change them (a corner moved, an index pointed
//! elsewhere, a list cut short, a table entry made NaN), and it is encoded
//! again with a valid header and checksum, so that every change reaches
//! the checks of [`crate::NavMesh::from_bytes`] instead of the checksum.
//! Built only with the `fuzzing` feature; not part of the API.

use glam::Vec2;
use slotmap::{Key, KeyData};

use super::encode;
use crate::mesh::keys::Keyed;
use crate::mesh::MeshData;

/// The baked file's checksum of `bytes` (FNV-1a, 64 bit), for targets that
/// write a header of their own.
#[must_use]
pub fn checksum(bytes: &[u8]) -> u64 {
    super::fnv1a64(bytes)
}

/// Bytes one change takes from the script: what to change, where, and to
/// what.
pub const CHANGE_BYTES: usize = 9;

/// `file` (a baked file) with the changes `script` names applied, encoded
/// with a valid header and checksum; `None` when `file` does not decode.
/// Each [`CHANGE_BYTES`] of `script` is one change: a field (byte 0), an
/// element of it (bytes 1..5, modulo its length) and a value (bytes 5..9).
#[must_use]
pub fn mutate_baked(file: &[u8], script: &[u8]) -> Option<Vec<u8>> {
    let body = file.get(super::HEADER_LEN..)?;
    let mut data: MeshData = postcard::from_bytes(body).ok()?;
    for change in script.chunks_exact(CHANGE_BYTES) {
        let field = change[0];
        let at = u32::from_le_bytes(change[1..5].try_into().expect("4 bytes")) as usize;
        let value = u32::from_le_bytes(change[5..9].try_into().expect("4 bytes"));
        apply(&mut data, field, at, value);
    }
    encode(&data).ok()
}

/// A float a hostile file might hold instead of `old`: one of the
/// troublesome values, or `old` nudged by a few steps of 1/16.
fn float(old: f32, value: u32) -> f32 {
    const ODD: [f32; 10] = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        f32::MIN_POSITIVE,
        1e9,
    ];
    if value & 0x8000_0000 == 0 {
        ODD[value as usize % ODD.len()]
    } else {
        old + f32::from(value as u16 as i16) / 16.0
    }
}

/// An index a hostile file might hold instead of `old`: one off either
/// way, or any value.
fn index(old: u32, value: u32) -> u32 {
    match value >> 30 {
        0 => old.wrapping_add(1),
        1 => old.wrapping_sub(1),
        _ => value & 0x3fff_ffff,
    }
}

fn point(old: Vec2, value: u32) -> Vec2 {
    if value & 1 == 0 {
        Vec2::new(float(old.x, value), old.y)
    } else {
        Vec2::new(old.x, float(old.y, value))
    }
}

/// The key of another slot: any stored key, or one never stored (version
/// 3: a fresh bake's keys are all at version 1).
fn some_key<K: Key, V>(map: &Keyed<K, V>, value: u32) -> K {
    map.keys()
        .nth(value as usize % (map.len() + 1))
        .unwrap_or_else(|| K::from(KeyData::from_ffi(u64::from(value) | 3 << 32)))
}

/// Changes element `at` (modulo its length) of vector `v` with `f`, or
/// removes it when `value`'s low byte is 0xff.
fn change<T>(v: &mut Vec<T>, at: usize, value: u32, f: impl FnOnce(&mut T)) {
    if v.is_empty() {
        return;
    }
    let at = at % v.len();
    if value & 0xff == 0xff {
        v.remove(at);
    } else {
        f(&mut v[at]);
    }
}

fn apply(data: &mut MeshData, field: u8, at: usize, value: u32) {
    let region = data.regions.keys().nth(at % data.regions.len().max(1));
    let portal = data.portals.keys().nth(at % data.portals.len().max(1));
    match field % 24 {
        0 => {
            if let Some(r) = region.and_then(|k| data.regions.get_mut(k)) {
                let k = (value >> 8) as usize;
                let n = r.vertices.len();
                if value & 0xff == 0xff && n > 0 {
                    // a corner dropped, and its edge's portal slot with it
                    r.vertices.remove(k % n);
                    if !r.portals.is_empty() {
                        r.portals.remove(k % r.portals.len());
                    }
                } else if n > 0 {
                    r.vertices[k % n] = point(r.vertices[k % n], value);
                }
            }
        }
        1 => {
            let other = some_key(&data.portals, value);
            if let Some(r) = region.and_then(|k| data.regions.get_mut(k)) {
                let n = r.portals.len().max(1);
                if let Some(slot) = r.portals.get_mut((value >> 8) as usize % n) {
                    *slot = (value & 1 == 0).then_some(other);
                }
            }
        }
        2 => {
            if let Some(r) = region.and_then(|k| data.regions.get_mut(k)) {
                match value % 3 {
                    0 => r.index = index(r.index, value),
                    1 => r.component = index(r.component, value),
                    _ => r.area = value as u16,
                }
            }
        }
        3 => {
            if let Some(k) = region {
                data.regions.remove(k);
            }
        }
        4 => {
            if let Some(p) = portal.and_then(|k| data.portals.get_mut(k)) {
                if value & 2 == 0 {
                    p.left = point(p.left, value);
                } else {
                    p.right = point(p.right, value);
                }
            }
        }
        5 => {
            let other = some_key(&data.regions, value);
            if let Some(p) = portal.and_then(|k| data.portals.get_mut(k)) {
                match value % 3 {
                    0 => p.regions[0] = other,
                    1 => p.regions.swap(0, 1),
                    _ => p.index = index(p.index, value),
                }
            }
        }
        6 => {
            if let Some(k) = portal {
                data.portals.remove(k);
            }
        }
        7 => match value % 4 {
            0 => data.stats.walkable_area = float(data.stats.walkable_area as f32, value).into(),
            1 => data.snap_scale = float(data.snap_scale as f32, value).into(),
            2 => data.agent_radius = float(data.agent_radius, value),
            _ => data.max_radius = float(data.max_radius, value),
        },
        8 => change(&mut data.areas, at, value, |a| {
            a.cost = float(a.cost, value)
        }),
        9 => change(&mut data.nav_points, at, value, |p| {
            p.at = point(p.at, value)
        }),
        10 => {
            if let Some(t) = data.tiling.as_mut() {
                match value % 3 {
                    0 => t.size = float(t.size as f32, value).into(),
                    1 => t.count[0] = index(t.count[0], value),
                    _ => t.first[1] = i64::from(index(t.first[1] as u32, value) as i32),
                }
            }
        }
        f => {
            let Some(h) = data.hierarchy.as_mut() else {
                return;
            };
            match f {
                11 => change(&mut h.nodes, at, value, |n| match value % 4 {
                    0 => n.at = point(n.at, value),
                    1 => n.clusters[0] = index(n.clusters[0], value),
                    2 => n.regions[1] = index(n.regions[1], value),
                    _ => n.regions.swap(0, 1),
                }),
                12 => change(&mut h.region_cluster, at, value, |c| *c = index(*c, value)),
                13 => change(&mut h.cluster_start, at, value, |c| *c = index(*c, value)),
                14 => change(&mut h.cluster_nodes, at, value, |c| *c = index(*c, value)),
                15 => change(&mut h.leg_cost, at, value, |c| *c = float(*c, value)),
                16 => change(&mut h.leg_route, at, value, |c| *c = index(*c, value)),
                17 => change(&mut h.leg_steps, at, value, |s| {
                    s[(value >> 8) as usize & 1] = index(s[(value >> 8) as usize & 1], value);
                }),
                18 => change(&mut h.step_start, at, value, |c| *c = index(*c, value)),
                19 => change(&mut h.points, at, value, |p| match value % 3 {
                    0 => p.at = point(p.at, value),
                    1 => p.region = index(p.region, value),
                    _ => p.portal = p.portal.map(|q| index(q, value)),
                }),
                20 => change(&mut h.point_start, at, value, |c| *c = index(*c, value)),
                21 => change(&mut h.leg_start, at, value, |c| *c = index(*c, value)),
                22 => change(&mut h.landmark_dist, at, value, |c| *c = float(*c, value)),
                _ => match value % 3 {
                    0 => h.landmarks = index(h.landmarks, value),
                    1 => h.cluster_size = index(h.cluster_size, value),
                    _ => h.stats.cluster_aim = index(h.stats.cluster_aim, value),
                },
            }
        }
    }
}

/// What the `booleans` fuzz target compares: walkable polygons less
/// obstacles, read from `data`, resolved by the crate's sweeps
/// (`bake::uncrossed`, which cut crossing edges and run whether or not the
/// edges are crowded here) and by the boolean crate. `None` when `data`
/// names no walkable polygon.
///
/// `data` is read a polygon at a time: a byte whose low two bits give 3 to
/// 6 corners and whose bit 2 makes it an obstacle, then two bytes per
/// corner (x and y, 0 to 255, in quarter units, so corners lie on the grid
/// and crossings mostly between its points).
#[must_use]
pub fn booleans_both_ways(data: &[u8]) -> Option<BooleansBothWays> {
    use crate::bake::outline::{Contours, Grid};
    use i_overlay::core::fill_rule::FillRule;
    use i_overlay::core::overlay_rule::OverlayRule;

    let (mut subject, mut clip): (Contours, Contours) = (Vec::new(), Vec::new());
    let mut rest = data;
    while let Some((&head, tail)) = rest.split_first() {
        let corners = 3 + usize::from(head & 3);
        let Some(points) = tail.get(..2 * corners) else {
            break;
        };
        rest = &tail[2 * corners..];
        let polygon: Vec<[f64; 2]> = points
            .chunks_exact(2)
            .map(|p| [f64::from(p[0]) / 4.0, f64::from(p[1]) / 4.0])
            .collect();
        if head & 4 == 0 {
            subject.push(polygon);
        } else {
            // the caller's obstacles are counter-clockwise
            let twice: f64 = (0..polygon.len())
                .map(|k| {
                    let (a, b) = (polygon[k], polygon[(k + 1) % polygon.len()]);
                    a[0] * b[1] - a[1] * b[0]
                })
                .sum();
            let mut polygon = polygon;
            if twice < 0.0 {
                polygon.reverse();
            }
            clip.push(polygon);
        }
    }
    if subject.is_empty() {
        return None;
    }
    let grid = Grid::new(64.0);
    let area = |shapes: &crate::bake::outline::Shapes| -> f64 {
        shapes
            .iter()
            .flatten()
            .map(|c| {
                (0..c.len())
                    .map(|k| {
                        let (a, b) = (c[k], c[(k + 1) % c.len()]);
                        a[0] * b[1] - a[1] * b[0]
                    })
                    .sum::<f64>()
                    / 2.0
            })
            .sum()
    };
    let sweeps = crate::bake::uncrossed::subtract(grid, &subject, &clip);
    let booleans = if clip.is_empty() {
        grid.overlay(&subject, &[], OverlayRule::Subject, FillRule::Positive)
    } else {
        grid.overlay(&subject, &clip, OverlayRule::Difference, FillRule::Positive)
    };
    let crossing = sweeps.as_ref().is_some_and(|shapes| {
        let edges: Vec<(glam::DVec2, glam::DVec2)> = shapes
            .iter()
            .flatten()
            .flat_map(|c| {
                (0..c.len()).map(move |k| {
                    let (a, b) = (c[k], c[(k + 1) % c.len()]);
                    (glam::DVec2::new(a[0], a[1]), glam::DVec2::new(b[0], b[1]))
                })
            })
            .collect();
        edges.iter().enumerate().any(|(i, &(a0, a1))| {
            edges[i + 1..]
                .iter()
                .any(|&(b0, b1)| crate::geometry::segments_cross(a0, a1, b0, b1))
        })
    });
    Some(BooleansBothWays {
        sweeps_area: sweeps.as_ref().map(area),
        booleans_area: area(&booleans),
        sweeps_edges_cross: crossing,
    })
}

/// [`booleans_both_ways`]' answer.
#[derive(Debug, Clone, Copy)]
pub struct BooleansBothWays {
    /// The area the sweeps leave, unless they gave the input up.
    pub sweeps_area: Option<f64>,
    /// The area the boolean crate leaves.
    pub booleans_area: f64,
    /// Whether two edges of the sweeps' answer cross or touch other than
    /// at shared ends.
    pub sweeps_edges_cross: bool,
}
