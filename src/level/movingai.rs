//! Moving AI benchmark grids (`.map`) and scenarios (`.map.scen`).
//!
//! Cell (x, y) covers `[x, x+1] x [y, y+1]`, row 0 is the first map row, and
//! `.`, `G`, `S` are free. Free cells that touch only at a corner are not
//! connected: the tracer turns left at such pinch points so the two cells end
//! up in contours that merely share a vertex.

use glam::Vec2;

use super::Level;
use crate::error::LevelError;

/// Largest width or height accepted, cells.
pub const MAX_GRID_SIDE: usize = 1 << 15;

/// A Moving AI grid map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grid {
    width: usize,
    height: usize,
    free: Vec<bool>,
}

/// One problem of a `.scen` file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scenario {
    /// Difficulty bucket.
    pub bucket: u32,
    /// Start cell.
    pub start: (u32, u32),
    /// Goal cell.
    pub goal: (u32, u32),
    /// Optimal 8-connected length without corner cutting.
    pub optimal: f64,
    /// Half a unit of the optimum's last printed digit, at least 1e-3: how
    /// closely a length can be compared with it.
    pub tolerance: f64,
}

impl Scenario {
    /// Start cell centre, world units.
    #[must_use]
    pub fn start_point(&self) -> Vec2 {
        Vec2::new(self.start.0 as f32 + 0.5, self.start.1 as f32 + 0.5)
    }

    /// Goal cell centre, world units.
    #[must_use]
    pub fn goal_point(&self) -> Vec2 {
        Vec2::new(self.goal.0 as f32 + 0.5, self.goal.1 as f32 + 0.5)
    }

    /// Reads every problem of a `.scen` file.
    ///
    /// # Errors
    /// [`LevelError::Map`] with the line of the first malformed problem.
    pub fn load_file(path: impl AsRef<std::path::Path>) -> Result<Vec<Scenario>, LevelError> {
        let (source_name, text) = super::read_text(path.as_ref())?;
        Scenario::parse(&text, &source_name)
    }

    /// Parses the text of a `.scen` file; `source_name` is used in errors.
    ///
    /// # Errors
    /// As [`Scenario::load_file`].
    pub fn parse(text: &str, source_name: &str) -> Result<Vec<Scenario>, LevelError> {
        let err = |line: usize, reason: String| LevelError::Map {
            source_name: source_name.to_string(),
            line,
            reason,
        };
        let mut out = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim_end_matches('\r');
            if line.trim().is_empty() || (i == 0 && line.starts_with("version")) {
                continue;
            }
            // the benchmark sets separate columns by tabs or by spaces
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.len() < 9 {
                return Err(err(
                    i + 1,
                    format!("expected 9 columns, found {}", cols.len()),
                ));
            }
            let num = |k: usize, what: &str| -> Result<u32, LevelError> {
                cols[k]
                    .trim()
                    .parse::<u32>()
                    .map_err(|_| err(i + 1, format!("{what} {:?} is not a whole number", cols[k])))
            };
            let optimal: f64 = cols[8].trim().parse().map_err(|_| {
                err(
                    i + 1,
                    format!("optimal length {:?} is not a number", cols[8]),
                )
            })?;
            if !optimal.is_finite() || optimal < 0.0 {
                return Err(err(
                    i + 1,
                    format!("optimal length {optimal} is out of range"),
                ));
            }
            let decimals = cols[8].trim().split_once('.').map_or(0, |(_, f)| f.len());
            let tolerance = (0.5 * 10f64.powi(-(decimals as i32))).max(1e-3);
            out.push(Scenario {
                tolerance,
                bucket: num(0, "bucket")?,
                start: (num(4, "start x")?, num(5, "start y")?),
                goal: (num(6, "goal x")?, num(7, "goal y")?),
                optimal,
            });
        }
        Ok(out)
    }
}

impl Grid {
    /// Reads a `.map` file.
    ///
    /// # Errors
    /// [`LevelError::Map`] naming the line of a malformed header or row.
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Grid, LevelError> {
        let (source_name, text) = super::read_text(path.as_ref())?;
        Grid::parse(&text, &source_name)
    }

    /// Parses the text of a `.map` file; `source_name` is used in errors.
    ///
    /// # Errors
    /// As [`Grid::from_file`].
    pub fn parse(text: &str, source_name: &str) -> Result<Grid, LevelError> {
        let err = |line: usize, reason: String| LevelError::Map {
            source_name: source_name.to_string(),
            line,
            reason,
        };
        let mut lines = text.lines().map(|l| l.trim_end_matches('\r')).enumerate();
        let mut width = None;
        let mut height = None;
        loop {
            let Some((i, line)) = lines.next() else {
                return Err(err(0, "file ends before the `map` line".to_string()));
            };
            let mut words = line.split_whitespace();
            match words.next() {
                Some("type") => {}
                Some(key @ ("height" | "width")) => {
                    let value = words
                        .next()
                        .and_then(|w| w.parse::<usize>().ok())
                        .filter(|&v| v > 0 && v <= MAX_GRID_SIDE)
                        .ok_or_else(|| {
                            err(
                                i + 1,
                                format!("{key} must be a whole number from 1 to {MAX_GRID_SIDE}"),
                            )
                        })?;
                    if key == "height" {
                        height = Some(value);
                    } else {
                        width = Some(value);
                    }
                }
                Some("map") => break,
                Some(other) => return Err(err(i + 1, format!("unexpected header line {other:?}"))),
                None => {}
            }
        }
        let width = width.ok_or_else(|| err(0, "no `width` line in the header".to_string()))?;
        let height = height.ok_or_else(|| err(0, "no `height` line in the header".to_string()))?;
        let mut free = Vec::with_capacity(width * height);
        for y in 0..height {
            let Some((i, row)) = lines.next() else {
                return Err(err(
                    0,
                    format!("truncated: expected {height} rows, found {y}"),
                ));
            };
            if row.len() != width {
                return Err(err(
                    i + 1,
                    format!("row {y} has {} cells, expected {width}", row.len()),
                ));
            }
            for (x, c) in row.bytes().enumerate() {
                free.push(match c {
                    b'.' | b'G' | b'S' => true,
                    b'@' | b'O' | b'T' | b'W' => false,
                    _ => {
                        return Err(err(
                            i + 1,
                            format!("column {}: unknown terrain {:?}", x + 1, c as char),
                        ))
                    }
                });
            }
        }
        if !free.iter().any(|&f| f) {
            return Err(LevelError::Empty {
                source_name: source_name.to_string(),
            });
        }
        Ok(Grid {
            width,
            height,
            free,
        })
    }

    /// Builds a grid from a row-major `free` mask (`y * width + x`).
    ///
    /// # Panics
    /// When `free.len() != width * height`.
    #[must_use]
    pub fn from_mask(width: usize, height: usize, free: Vec<bool>) -> Grid {
        assert_eq!(
            free.len(),
            width * height,
            "mask size must be width * height"
        );
        Grid {
            width,
            height,
            free,
        }
    }

    /// Width in cells.
    #[must_use]
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height in cells.
    #[must_use]
    pub fn height(&self) -> usize {
        self.height
    }

    /// The row-major free mask.
    #[must_use]
    pub fn mask(&self) -> &[bool] {
        &self.free
    }

    /// True when cell (x, y) exists and is free.
    #[must_use]
    pub fn is_free(&self, x: i64, y: i64) -> bool {
        x >= 0
            && y >= 0
            && (x as usize) < self.width
            && (y as usize) < self.height
            && self.free[y as usize * self.width + x as usize]
    }

    /// Traces the free cells into oriented contours: outer boundaries
    /// counter-clockwise, holes clockwise, collinear runs merged.
    #[must_use]
    pub fn contours(&self) -> Vec<Vec<Vec2>> {
        let (w, h) = (self.width, self.height);
        let vw = w + 1;
        // outgoing boundary directions per grid vertex: bit d for direction d
        // (0 = +x, 1 = +y, 2 = -x, 3 = -y); free space lies to the left.
        let mut out = vec![0u8; vw * (h + 1)];
        let vid = |x: usize, y: usize| y * vw + x;
        for y in 0..h {
            for x in 0..w {
                if !self.free[y * w + x] {
                    continue;
                }
                let (xi, yi) = (x as i64, y as i64);
                if !self.is_free(xi, yi - 1) {
                    out[vid(x, y)] |= 1 << 0;
                }
                if !self.is_free(xi + 1, yi) {
                    out[vid(x + 1, y)] |= 1 << 1;
                }
                if !self.is_free(xi, yi + 1) {
                    out[vid(x + 1, y + 1)] |= 1 << 2;
                }
                if !self.is_free(xi - 1, yi) {
                    out[vid(x, y + 1)] |= 1 << 3;
                }
            }
        }
        // the pairing of incoming and outgoing edges depends on the original
        // options only: prefer the left turn (keeps corner-touching cells apart)
        let orig = out.clone();
        const STEP: [(i64, i64); 4] = [(1, 0), (0, 1), (-1, 0), (0, -1)];
        let mut contours = Vec::new();
        for start in 0..out.len() {
            while out[start] != 0 {
                let first_dir = out[start].trailing_zeros() as usize;
                let (mut x, mut y) = ((start % vw) as i64, (start / vw) as i64);
                let mut dir = first_dir;
                let mut contour = Vec::new();
                loop {
                    let v = vid(x as usize, y as usize);
                    out[v] &= !(1 << dir);
                    x += STEP[dir].0;
                    y += STEP[dir].1;
                    let here = vid(x as usize, y as usize);
                    let options = orig[here];
                    let left = (dir + 1) % 4;
                    let next = if options & (1 << left) != 0 {
                        left
                    } else if options & (1 << dir) != 0 {
                        dir
                    } else {
                        (dir + 3) % 4
                    };
                    debug_assert!(
                        options & (1 << next) != 0,
                        "boundary edges form closed loops"
                    );
                    if next != dir {
                        contour.push(Vec2::new(x as f32, y as f32));
                    }
                    if here == start && next == first_dir {
                        break;
                    }
                    dir = next;
                }
                contours.push(contour);
            }
        }
        contours
    }

    /// The level whose walkable space is exactly the free cells.
    #[must_use]
    pub fn to_level(&self) -> Level {
        Level {
            name: "grid".to_string(),
            walkable: self.contours(),
            walkable_is_resolved: true,
            ..Level::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::signed_area;

    fn grid(rows: &[&str]) -> Grid {
        let text = format!(
            "type octile\nheight {}\nwidth {}\nmap\n{}\n",
            rows.len(),
            rows[0].len(),
            rows.join("\n")
        );
        Grid::parse(&text, "test.map").unwrap()
    }

    #[test]
    fn square_with_hole_traces_to_two_contours() {
        // ...
        // .@.
        // ...
        let g = grid(&["...", ".@.", "..."]);
        let c = g.contours();
        assert_eq!(c.len(), 2);
        let areas: Vec<f64> = c.iter().map(|c| signed_area(c)).collect();
        assert!(areas.contains(&9.0) && areas.contains(&-1.0), "{areas:?}");
        assert!(
            c.iter().all(|c| c.len() == 4),
            "collinear runs merged: {c:?}"
        );
    }

    #[test]
    fn corner_touching_cells_stay_separate() {
        // .@
        // @.
        let g = grid(&[".@", "@."]);
        let c = g.contours();
        assert_eq!(c.len(), 2, "{c:?}");
        assert!(c.iter().all(|c| signed_area(c) == 1.0));
    }

    #[test]
    fn pocket_inside_obstacle_is_kept() {
        let g = grid(&[".....", ".@@@.", ".@.@.", ".@@@.", "....."]);
        let total: f64 = g.contours().iter().map(|c| signed_area(c)).sum();
        assert_eq!(total, 17.0);
    }

    #[test]
    fn malformed_maps_name_the_line() {
        let cases = [
            ("type octile\nheight 2\nwidth 2\nmap\n..\n", "truncated"),
            (
                "type octile\nheight 1\nwidth 3\nmap\n..\n",
                ":5: row 0 has 2 cells",
            ),
            ("type octile\nheight x\nwidth 3\nmap\n...\n", ":2: height"),
            ("type octile\nheight 1\nwidth 3\nmap\n.?.\n", "column 2"),
            ("type octile\nheight 1\nwidth 1\nmap\n@\n", "no walkable"),
            ("", "before the `map` line"),
        ];
        for (text, needle) in cases {
            let e = Grid::parse(text, "m.map").unwrap_err().to_string();
            assert!(e.contains(needle), "{text:?}: {e}");
        }
    }

    #[test]
    fn scenario_lines_parse() {
        let s =
            Scenario::parse("version 1\n0\tm.map\t4\t4\t0\t1\t2\t3\t2.82842712\n", "s").unwrap();
        assert_eq!(s[0].start, (0, 1));
        assert_eq!(s[0].goal_point(), Vec2::new(2.5, 3.5));
        assert!(Scenario::parse("version 1\n0\tm.map\t4\n", "s").is_err());
    }
}
