//! SVG pictures of a mesh: regions lightly coloured by cluster of the
//! nav-point hierarchy (by component without one), portals, walls, nav points
//! (designer points orange, cluster-boundary points purple) and paths. Used by the command line and the docs.

use std::fmt::Write as _;

use glam::Vec2;

use crate::mesh::NavMesh;

/// Renders `mesh` with optional `paths` (each a waypoint list) as an SVG document.
///
/// The picture keeps the level's frame: x to the right, y downwards (as in
/// Moving AI maps and image coordinates).
#[must_use]
pub fn svg(mesh: &NavMesh, paths: &[&[Vec2]]) -> String {
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
    for (key, r) in mesh.regions() {
        // a light hue per cluster (or component), darker for costly areas
        let group = mesh.region_cluster(key).unwrap_or(r.component());
        let hue = (group.wrapping_mul(137)) % 360;
        let cost = mesh.areas().get(r.area() as usize).map_or(1.0, |a| a.cost);
        let light = if cost > 1.0 {
            78
        } else if cost < 1.0 {
            94
        } else {
            88
        };
        let _ = write!(s, r#"<polygon fill="hsl({hue},45%,{light}%)" points=""#);
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
    for (_, p) in mesh.portals() {
        let _ = writeln!(
            s,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}"/>"#,
            p.left().x,
            p.left().y,
            p.right().x,
            p.right().y
        );
    }
    let _ = writeln!(s, "</g>");
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
