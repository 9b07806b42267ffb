//! Where the benches put buildings: free squares of a grid map, drawn from a
//! fixed seed so every run (and every bench) places the same ones.
//!
//! Include it from a bench with `#[path = "common/buildings.rs"] mod buildings;`.

use glam::{vec2, Vec2};
use portalnav::Grid;

/// `count` places for a `size` x `size` building on free cells of `grid`,
/// as the square's corners counter-clockwise; places may overlap.
pub fn places(grid: &Grid, size: usize, count: usize) -> Vec<[Vec2; 4]> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let x = (state % (grid.width() - size) as u64) as usize;
        let y = ((state >> 32) % (grid.height() - size) as u64) as usize;
        let free =
            (y..y + size).all(|cy| (x..x + size).all(|cx| grid.is_free(cx as i64, cy as i64)));
        if free {
            let (fx, fy, s) = (x as f32, y as f32, size as f32);
            out.push([
                vec2(fx, fy),
                vec2(fx + s, fy),
                vec2(fx + s, fy + s),
                vec2(fx, fy + s),
            ]);
        }
    }
    out
}
