use portalnav::*;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let map = &a[1];
    let (sx, sy, gx, gy): (f32, f32, f32, f32) = (a[2].parse().unwrap(), a[3].parse().unwrap(), a[4].parse().unwrap(), a[5].parse().unwrap());
    let level = Level::from_movingai_file(map).unwrap();
    let mesh = NavMesh::bake(&level, &BakeConfig::default()).unwrap();
    let (s, g) = (glam::vec2(sx + 0.5, sy + 0.5), glam::vec2(gx + 0.5, gy + 0.5));
    let mut q = NavQuery::new();
    let ph = q.find_path(&mesh, s, g, &QueryFilter::default()).unwrap();
    q.set_use_hierarchy(false);
    let pf = q.find_path(&mesh, s, g, &QueryFilter::default()).unwrap();
    println!("hier {} {:?} {:?}\nflat {} {:?}", ph.length(), ph.level(), ph.waypoints(), pf.length(), pf.waypoints());
    println!("clusters s {:?} g {:?}", mesh.region_cluster(mesh.locate(s).unwrap()), mesh.region_cluster(mesh.locate(g).unwrap()));
    std::fs::write("/tmp/probe.svg", render::svg(&mesh, &[ph.waypoints(), pf.waypoints()])).unwrap();
}
