//! validate() after bake on every shared Moving AI map.

use portalnav::{BakeConfig, Level, NavMesh};

use crate::common::{movingai_dir, shared_maps};

#[test]
fn every_shared_map_bakes_and_validates() {
    let maps = shared_maps();
    assert!(maps.len() >= 8, "expected the shared maps, found {maps:?}");
    for name in maps {
        let level = Level::from_movingai_file(movingai_dir().join(format!("{name}.map"))).unwrap();
        let free_area = level.walkable_contour_area();
        let mesh = NavMesh::bake(&level, &BakeConfig::default()).unwrap();
        mesh.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        let s = mesh.stats();
        eprintln!(
            "{name}: {} triangles, {} regions, {} portals, {} components, {:.1} ms",
            s.triangles, s.regions, s.portals, s.components, s.bake_ms
        );
        assert!(
            (s.walkable_area - free_area).abs() < 1e-6 * free_area,
            "{name}: area {} vs {free_area}",
            s.walkable_area
        );
    }
}
