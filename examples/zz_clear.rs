use glam::{DVec2, Vec2};
use portalnav::{BakeConfig, Level, NavMesh};
fn seg(a: DVec2, b: DVec2, c: DVec2, d: DVec2) -> f64 {
    let o = |p: DVec2, q: DVec2, r: DVec2| (q - p).perp_dot(r - p);
    if o(a, b, c) * o(a, b, d) < 0.0 && o(c, d, a) * o(c, d, b) < 0.0 {
        return 0.0;
    }
    let ts = |p: DVec2, s: DVec2, e: DVec2| {
        let t = ((p - s).dot(e - s) / (e - s).length_squared().max(1e-300)).clamp(0.0, 1.0);
        p.distance(s + (e - s) * t)
    };
    ts(a, c, d)
        .min(ts(b, c, d))
        .min(ts(c, a, b))
        .min(ts(d, a, b))
}
fn main() {
    let v = |x: f32, y: f32| Vec2::new(x, y);
    let mut level = Level::from_json_str(r#"{"walkable": [[[0,0],[1,0],[1,1]]]}"#).unwrap();
    level.walkable = vec![vec![
        v(1040000.0, 1040000.0),
        v(1040008.44, 1040000.0),
        v(1040009.94, 1040007.1),
    ]];
    level.obstacles = vec![vec![
        v(1040000.0, 1040000.0),
        v(1040006.2, 1040000.0),
        v(1040008.06, 1040008.3),
    ]];
    level.areas = vec![portalnav::Area {
        kind: "a".into(),
        cost: None,
        polygon: vec![
            v(1040004.3, 1040003.4),
            v(1040006.06, 1040003.94),
            v(1040008.25, 1040004.8),
        ],
    }];
    let walls: Vec<[DVec2; 2]> = level
        .obstacles
        .iter()
        .chain(level.areas.iter().map(|a| &a.polygon))
        .chain(&level.walkable)
        .flat_map(|p| (0..p.len()).map(move |i| [p[i].as_dvec2(), p[(i + 1) % p.len()].as_dvec2()]))
        .collect();
    let r = 0.25;
    let base = NavMesh::bake(
        &level,
        &BakeConfig {
            max_radius: Some(r),
            ..BakeConfig::default()
        },
    )
    .unwrap();
    let fresh = NavMesh::bake(
        &level,
        &BakeConfig {
            agent_radius: r,
            max_radius: Some(r),
            ..BakeConfig::default()
        },
    );
    let derived = base.for_radius(r).unwrap();
    for (name, mesh) in [("derived", &*derived), ("fresh", fresh.as_ref().unwrap())] {
        for (_, reg) in mesh.regions() {
            let vs = reg.vertices();
            println!("{name} region {:?}", vs);
            for i in 0..vs.len() {
                let (p, q) = (vs[i].as_dvec2(), vs[(i + 1) % vs.len()].as_dvec2());
                for w in &walls {
                    let g = seg(p, q, w[0], w[1]);
                    if g < r as f64 - 1e-3 {
                        println!("  {name}: edge {p} {q} {g} from wall {:?}", w);
                    }
                }
            }
        }
    }
}
