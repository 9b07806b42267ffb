use portalnav::*;
fn main() {
    let a: Vec<f32> = std::env::args().skip(2).map(|s| s.parse().unwrap()).collect();
    let level = Level::from_file(std::env::args().nth(1).unwrap()).unwrap();
    let mesh = NavMesh::bake(&level, &BakeConfig::default()).unwrap();
    let mut q = NavQuery::new();
    let p = q.find_path(&mesh, glam::vec2(a[0], a[1]), glam::vec2(a[2], a[3]), &QueryFilter::default()).unwrap();
    println!("len {} wps {:?}", p.length(), p.waypoints());
    for (i, r) in p.corridor().iter().enumerate() {
        let reg = mesh.region(*r).unwrap();
        println!("{i}: region {} {:?}", reg.index(), reg.vertices());
    }
}
