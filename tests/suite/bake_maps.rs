//! validate() after bake on every bundled Moving AI map.

use portalnav::{BakeConfig, Level, NavMesh};

use crate::common::{bundled_maps, movingai_dir};

#[test]
fn every_bundled_map_bakes_and_validates() {
    let maps = bundled_maps();
    assert!(maps.len() >= 8, "expected the bundled maps, found {maps:?}");
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
