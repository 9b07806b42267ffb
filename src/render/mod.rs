//! SVG pictures of a mesh: regions lightly coloured by cluster of the
//! nav-point hierarchy (by component without one), portals, walls, nav points
//! (designer points orange, cluster-boundary points purple) and paths. Used by the command line and the docs.
//! [`svg_by_radius`] colours regions and portals by the largest agent
//! radius that passes them instead ([`passing_radii`]).

use std::fmt::Write as _;

use glam::Vec2;

use crate::error::RadiusError;
use crate::mesh::{NavMesh, PortalId, RegionId};

/// Points along a portal at which [`passing_radii`] asks whether a unit
/// fits (the ends excluded).
const PORTAL_SAMPLES: u32 = 64;

/// The largest radius that passes each region and each portal of a mesh,
/// of a list of radii ([`passing_radii`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PassingRadii {
    /// The radii asked about, ascending.
    pub radii: Vec<f32>,
    /// Per region: the index in `radii` of the largest radius whose
    /// walkable space enters it, `None` when only the mesh's own radius does.
    pub regions: Vec<(RegionId, Option<usize>)>,
    /// Per portal: the index in `radii` of the largest radius whose walkable
    /// space crosses it, `None` when only the mesh's own radius does.
    pub portals: Vec<(PortalId, Option<usize>)>,
}

/// For each region and portal of `mesh`, the largest of `radii` (each
/// served by [`NavMesh::for_radius`]) for which a unit fits there: the
/// walkable space of the mesh for that radius crosses the portal, or enters
/// the region. This is local: a portal that a wide unit passes may still
/// lie on no path it can take, if something narrower blocks the way on.
///
/// A portal is tested at 64 points evenly along it (each
/// located in the mesh for the radius), so where a radius is within a hair
/// of the widest point of a portal the answer can be the next smaller
/// radius. A region passes a radius if one of its portals does, or if the
/// middle of a region of the mesh for that radius lies in it. The radii
/// are sorted; each costs the mesh for that radius (derived once, then
/// kept by the mesh).
///
/// # Errors
/// As [`NavMesh::for_radius`], for the first radius it refuses, except
/// that a radius whose mesh has no walkable space left passes nothing.
pub fn passing_radii(mesh: &NavMesh, radii: &[f32]) -> Result<PassingRadii, RadiusError> {
    let mut radii = radii.to_vec();
    radii.sort_by(f32::total_cmp);
    radii.dedup();
    // in dense order, the order of `mesh.regions()` and `mesh.portals()`
    let t = &mesh.tables;
    let mut region_best: Vec<Option<usize>> = vec![None; t.region_keys.len()];
    let mut portal_best: Vec<Option<usize>> = vec![None; t.portal_ends.len()];
    for (k, &r) in radii.iter().enumerate() {
        let sized = match mesh.for_radius(r) {
            Ok(sized) => sized,
            Err(RadiusError::Bake {
                error: crate::BakeError::NothingWalkable { .. },
                ..
            }) => continue, // nothing walkable at r: it passes nowhere
            Err(e) => return Err(e),
        };
        for (i, &[a, b]) in t.portal_ends.iter().enumerate() {
            let passes = (1..=PORTAL_SAMPLES).any(|j| {
                let f = j as f32 / (PORTAL_SAMPLES + 1) as f32;
                sized.locate(a.lerp(b, f)).is_some()
            });
            if passes {
                portal_best[i] = Some(k);
                for side in t.portal_regions[i] {
                    region_best[side as usize] = Some(k);
                }
            }
        }
        for (_, region) in sized.regions() {
            let v = region.vertices();
            let middle = v.iter().copied().sum::<Vec2>() / v.len().max(1) as f32;
            if let Some(d) = mesh.locator.locate(t, middle) {
                region_best[d as usize] = Some(k);
            }
        }
    }
    Ok(PassingRadii {
        radii,
        regions: t.region_keys.iter().copied().zip(region_best).collect(),
        portals: mesh.portals().map(|(id, _)| id).zip(portal_best).collect(),
    })
}

/// Renders `mesh` with optional `paths` (each a waypoint list) as an SVG document.
///
/// The picture keeps the level's frame: x to the right, y downwards (as in
/// Moving AI maps and image coordinates).
#[must_use]
pub fn svg(mesh: &NavMesh, paths: &[&[Vec2]]) -> String {
    draw(mesh, paths, None)
}

/// Renders `mesh` as [`svg`] does, with regions and portals coloured by the
/// largest of `radii` that passes them ([`passing_radii`]): red where only
/// the mesh's own radius does, through yellow to green for the largest of
/// `radii`; a legend names the radii.
///
/// # Errors
/// As [`passing_radii`].
pub fn svg_by_radius(
    mesh: &NavMesh,
    radii: &[f32],
    paths: &[&[Vec2]],
) -> Result<String, RadiusError> {
    let passing = passing_radii(mesh, radii)?;
    Ok(draw(mesh, paths, Some(&passing)))
}

/// The hue for the largest passing radius `k` of `n` (`None`: none).
fn radius_hue(k: Option<usize>, n: usize) -> usize {
    k.map_or(0, |k| 20 + 100 * (k + 1) / n.max(1))
}

fn draw(mesh: &NavMesh, paths: &[&[Vec2]], passing: Option<&PassingRadii>) -> String {
    let b = mesh.bounds();
    let (min, size) = if b.is_empty() {
        (Vec2::ZERO, Vec2::ONE)
    } else {
        (b.min, b.size().max(Vec2::splat(1.0)))
    };
    let pad = size.max_element() * 0.02;
    let scale = 1000.0 / size.max_element();
    let stroke = 0.6 / scale;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="{} {} {} {}" width="{}" height="{}">"#,
        min.x - pad,
        min.y - pad,
        size.x + 2.0 * pad,
        size.y + 2.0 * pad,
        ((size.x + 2.0 * pad) * scale).round(),
        ((size.y + 2.0 * pad) * scale).round()
    );
    let _ = writeln!(
        s,
        r##"<rect x="{}" y="{}" width="{}" height="{}" fill="#555"/>"##,
        min.x - pad,
        min.y - pad,
        size.x + 2.0 * pad,
        size.y + 2.0 * pad
    );
    let _ = writeln!(
        s,
        r##"<g stroke="#8a8a8a" stroke-width="{stroke}" stroke-linejoin="round">"##
    );
    // `passing` lists regions and portals in the mesh's own order
    let classes = passing.map_or(0, |p| p.radii.len());
    for (i, (key, r)) in mesh.regions().enumerate() {
        // a light hue per cluster (or component), or per largest passing
        // radius; darker for costly areas
        let group = mesh.region_cluster(key).unwrap_or(r.component());
        let hue = match passing {
            Some(p) => radius_hue(p.regions[i].1, classes) as u32,
            None => (group.wrapping_mul(137)) % 360,
        };
        let cost = mesh.areas().get(r.area() as usize).map_or(1.0, |a| a.cost);
        let light = if cost > 1.0 {
            78
        } else if cost < 1.0 {
            94
        } else {
            88
        };
        // sizes are told by hue alone: stronger colours than clusters
        let (saturation, light) = if passing.is_some() {
            (70, light - 16)
        } else {
            (45, light)
        };
        let _ = write!(
            s,
            r#"<polygon fill="hsl({hue},{saturation}%,{light}%)" points=""#
        );
        for v in r.vertices() {
            let _ = write!(s, "{},{} ", v.x, v.y);
        }
        let _ = writeln!(s, r#""/>"#);
    }
    let _ = writeln!(s, "</g>");
    let _ = writeln!(
        s,
        r##"<g stroke="#3b7dd8" stroke-width="{}" opacity="0.7">"##,
        stroke * 0.8
    );
    for (i, (_, p)) in mesh.portals().enumerate() {
        let colour = match passing.map(|passing| passing.portals[i].1) {
            Some(k) => format!(
                r#" stroke="hsl({},85%,38%)" stroke-width="{}""#,
                radius_hue(k, classes),
                stroke * 2.5
            ),
            None => String::new(),
        };
        let _ = writeln!(
            s,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}"{colour}/>"#,
            p.left().x,
            p.left().y,
            p.right().x,
            p.right().y
        );
    }
    let _ = writeln!(s, "</g>");
    if let Some(p) = passing {
        // the legend: one swatch per class, the mesh's own radius first
        let line = 18.0 / scale;
        let classes: Vec<(usize, String)> = std::iter::once((
            radius_hue(None, p.radii.len()),
            format!("radius {} only", mesh.agent_radius()),
        ))
        .chain(p.radii.iter().enumerate().map(|(k, r)| {
            (
                radius_hue(Some(k), p.radii.len()),
                format!("up to radius {r}"),
            )
        }))
        .collect();
        for (i, (hue, label)) in classes.iter().enumerate() {
            let y = min.y + line * (i as f32 + 1.0);
            let _ = writeln!(
                s,
                r#"<rect x="{}" y="{}" width="{}" height="{}" fill="hsl({hue},85%,38%)"/><text x="{}" y="{}" font-size="{}" fill="white">{}</text>"#,
                min.x,
                y - line * 0.7,
                line * 0.7,
                line * 0.7,
                min.x + line,
                y,
                line * 0.8,
                escape(label)
            );
        }
    }
    for n in mesh.nav_nodes() {
        if let crate::mesh::NavPointKind::Boundary { .. } = n.kind {
            let _ = writeln!(
                s,
                r##"<circle cx="{}" cy="{}" r="{}" fill="#7b3fbf"/>"##,
                n.at.x,
                n.at.y,
                3.0 / scale
            );
        }
    }
    for n in mesh.nav_points() {
        let _ = writeln!(
            s,
            r##"<circle cx="{}" cy="{}" r="{}" fill="#e8a317"><title>{}</title></circle>"##,
            n.at.x,
            n.at.y,
            6.0 / scale,
            escape(&n.name)
        );
    }
    for path in paths {
        let _ = write!(
            s,
            r##"<polyline fill="none" stroke="#d62728" stroke-width="{}" points=""##,
            3.0 / scale
        );
        for p in path.iter() {
            let _ = write!(s, "{},{} ", p.x, p.y);
        }
        let _ = writeln!(s, r#""/>"#);
        if let (Some(a), Some(z)) = (path.first(), path.last()) {
            let _ = writeln!(
                s,
                r##"<circle cx="{}" cy="{}" r="{}" fill="#2ca02c"/>"##,
                a.x,
                a.y,
                5.0 / scale
            );
            let _ = writeln!(
                s,
                r##"<circle cx="{}" cy="{}" r="{}" fill="#d62728"/>"##,
                z.x,
                z.y,
                5.0 / scale
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
