//! The baked file: a fixed header around a postcard body.
//!
//! ```text
//! offset size  field
//! 0      8     magic "PNAVMESH"
//! 8      4     format version, little endian
//! 12     8     body length in bytes, little endian
//! 20     8     FNV-1a 64 checksum of the body, little endian
//! 28     n     body: postcard encoding of the mesh data
//! ```
//! Loading checks magic, version, length and checksum before decoding, then
//! validates the decoded mesh (what deriving its tables relies on first), so
//! a corrupted file is an error, never a panic.

#[cfg(feature = "fuzzing")]
pub mod fuzzing;

use std::path::Path;

use crate::error::FileError;
use crate::mesh::{MeshData, NavMesh};

const MAGIC: &[u8; 8] = b"PNAVMESH";
/// Version of the baked file format this build writes and reads (10: leg
/// costs are stored as codes against the straight line, a varint where
/// version 9 wrote an `f32`).
pub const FORMAT_VERSION: u32 = 10;
const HEADER_LEN: usize = 28;

/// FNV-1a, 64 bit: a small, dependency-free checksum that catches flipped bytes.
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The header and postcard body of `data`.
fn encode(data: &MeshData) -> Result<Vec<u8>, FileError> {
    let body = postcard::to_allocvec(data).map_err(|e| FileError::Encode(Box::new(e)))?;
    Ok(framed(&body))
}

/// `body` behind a header: magic, version, length and checksum.
fn framed(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&fnv1a64(body).to_le_bytes());
    out.extend_from_slice(body);
    out
}

/// Writes `bytes` to `path` through a temporary file in the same folder,
/// flushed to disk and then renamed over `path`: a reader (or a crash) sees
/// either the old file or the new one, never a half-written one.
///
/// # Errors
/// [`FileError::Io`] when the temporary file cannot be written or renamed;
/// the temporary file is removed and `path` is left as it was.
pub fn write_atomically(path: impl AsRef<Path>, bytes: &[u8]) -> Result<(), FileError> {
    use std::io::Write as _;
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let path = path.as_ref();
    let io_error = |error| FileError::Io {
        path: path.to_path_buf(),
        error,
    };
    let name = path.file_name().ok_or_else(|| {
        io_error(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a file name",
        ))
    })?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(name);
    temp_name.push(format!(
        ".{}.{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let temp = path.with_file_name(temp_name);
    let written = std::fs::File::create(&temp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    let renamed = written.and_then(|()| std::fs::rename(&temp, path));
    renamed.map_err(|error| {
        let _ = std::fs::remove_file(&temp);
        io_error(error)
    })
}

impl NavMesh {
    /// The baked file as bytes (see the module docs for the layout).
    ///
    /// # Errors
    /// [`FileError::Encode`] if the mesh cannot be encoded (does not happen
    /// for meshes made by the bake).
    pub fn to_bytes(&self) -> Result<Vec<u8>, FileError> {
        encode(&self.data)
    }

    /// Reads a mesh from the bytes of a baked file.
    ///
    /// # Errors
    /// [`FileError::BadMagic`], [`FileError::UnsupportedVersion`],
    /// [`FileError::Truncated`], [`FileError::Checksum`],
    /// [`FileError::Decode`] (the body does not decode) or
    /// [`FileError::Invalid`] (the mesh fails [`NavMesh::validate`]).
    pub fn from_bytes(bytes: &[u8]) -> Result<NavMesh, FileError> {
        if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
            return Err(FileError::BadMagic);
        }
        if bytes.len() < HEADER_LEN {
            return Err(FileError::Truncated {
                expected: HEADER_LEN as u64,
                found: bytes.len() as u64,
            });
        }
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
        if version != FORMAT_VERSION {
            return Err(FileError::UnsupportedVersion {
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        // a length near u64::MAX must not wrap round to the file's size
        let expected = word(12).saturating_add(HEADER_LEN as u64);
        if bytes.len() as u64 != expected {
            return Err(FileError::Truncated {
                expected,
                found: bytes.len() as u64,
            });
        }
        let body = &bytes[HEADER_LEN..];
        let (stored, found) = (word(20), fnv1a64(body));
        if stored != found {
            return Err(FileError::Checksum {
                expected: stored,
                found,
            });
        }
        let mut data: MeshData =
            postcard::from_bytes(body).map_err(|e| FileError::Decode(Box::new(e)))?;
        data.check_before_tables()?;
        let mut hierarchy = None;
        if let Some(mut h) = data.hierarchy.take() {
            // its corridors and tables are derived before validate() runs:
            // check the stored parts first
            let ends = |k| {
                data.regions
                    .get(k)
                    .map_or(u32::MAX, |r: &crate::mesh::Region| r.index)
            };
            let portal_regions: Vec<[u32; 2]> = data
                .portals
                .values()
                .map(|p| [ends(p.regions[0]), ends(p.regions[1])])
                .collect();
            let tables = h
                .check_and_derive(&portal_regions, data.regions.len(), data.nav_points.len())
                .map_err(crate::ValidationError::from)?;
            hierarchy = Some((h, tables));
        }
        let mut mesh = NavMesh::from_data(data);
        // the L2 tables the check derived, not derived again
        if let Some((h, tables)) = hierarchy {
            mesh.set_hierarchy_with(h, tables);
        }
        mesh.validate()?;
        Ok(mesh)
    }

    /// Writes the baked file atomically (see [`write_atomically`]): an
    /// interrupted or failed save leaves the previous file as it was.
    ///
    /// # Errors
    /// [`FileError::Io`] when the file cannot be written.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), FileError> {
        write_atomically(path, &self.to_bytes()?)
    }

    /// Loads a baked file written by [`NavMesh::save`].
    ///
    /// # Errors
    /// [`FileError::Io`] when the file cannot be read, otherwise as [`NavMesh::from_bytes`].
    pub fn load(path: impl AsRef<Path>) -> Result<NavMesh, FileError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|error| FileError::Io {
            path: path.to_path_buf(),
            error,
        })?;
        NavMesh::from_bytes(&bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::encode;
    use crate::{BakeConfig, FileError, Grid, NavMesh, ValidationError};

    /// A change to a baked hierarchy, named for the failure message.
    type Breakage = (&'static str, fn(&mut crate::mesh::hierarchy::HierarchyData));

    /// Each breakage, applied to `mesh`'s data and written with a valid
    /// header, makes loading fail with a hierarchy error.
    fn assert_each_refused(mesh: &NavMesh, breakages: &[Breakage]) {
        for (what, break_it) in breakages {
            let mut data = mesh.data.clone();
            break_it(data.hierarchy.as_mut().unwrap());
            let bytes = encode(&data).unwrap();
            assert!(
                matches!(
                    NavMesh::from_bytes(&bytes),
                    Err(FileError::Invalid(ValidationError::Hierarchy(_)))
                ),
                "{what}"
            );
        }
    }

    /// A hierarchy that is well-formed postcard with a valid checksum but
    /// points outside the mesh is an error on load, not a panic in a query.
    #[test]
    fn a_hierarchy_pointing_outside_the_mesh_is_rejected() {
        let text = "type octile\nheight 6\nwidth 12\nmap\n............\n.@@@@..@@@@.\n............\n.@@..@@@..@.\n............\n.....@@.....";
        let grid = Grid::parse(text, "t.map").expect("parses");
        let config = BakeConfig {
            cluster_size: 2,
            ..BakeConfig::default()
        };
        let mesh = NavMesh::bake(&grid.to_level(), &config).expect("bakes");
        let h = mesh.data.hierarchy.as_ref().expect("hierarchy");
        assert!(!h.corridors.is_empty() && !h.nodes.is_empty());
        let good = encode(&mesh.data).unwrap();
        assert!(NavMesh::from_bytes(&good).is_ok());
        let breakages: [Breakage; 17] = [
            // the corridors are derived from the leg tables: a nav node
            // that stands on none of its cluster's points cannot have them
            ("nav node off its point", |h| h.nodes[0].at.x += 0.25),
            ("cluster of a region", |h| h.region_cluster[0] = 9999),
            ("cluster offsets", |h| h.cluster_start[1] = 9999),
            ("leg route", |h| h.leg_route[0] = 999_999),
            ("leg step after its child", |h| {
                let last = h.leg_steps.len() as u32 - 1;
                h.leg_steps[0][0] = last;
            }),
            ("leg step crossing", |h| h.leg_steps[0][1] = 999_999),
            ("route step offsets", |h| h.step_start[1] = 9999),
            ("leg table length", |h| {
                h.leg_cost.pop();
            }),
            // regression (hostile-input campaign): the check sliced the
            // table of routes by `leg_cost`'s length and panicked
            ("leg routes one shorter than leg_cost", |h| {
                h.leg_route.pop();
            }),
            ("landmarks", |h| h.landmarks += 1),
            ("landmark count", |h| {
                h.landmarks = u32::MAX;
                h.landmark_dist.clear();
            }),
            ("node side", |h| h.nodes[0].regions.swap(0, 1)),
            // a query's refinement budget grows with the aim
            // (`refine_budget`): a huge one would overflow it
            ("cluster aim", |h| h.stats.cluster_aim = u32::MAX),
            ("cluster aim above the size", |h| {
                h.stats.cluster_aim = h.cluster_size + 1;
            }),
            ("cluster aim below 2", |h| h.stats.cluster_aim = 1),
            ("cluster size", |h| h.cluster_size = 0),
            ("cluster size above the largest", |h| h.cluster_size = 2048),
        ];
        // a portal index out of range would send the derived tables out of bounds
        let mut data = mesh.data.clone();
        if let Some(p) = data.portals.values_mut().next() {
            p.index = 7_000;
        }
        let bytes = encode(&data).unwrap();
        assert!(matches!(
            NavMesh::from_bytes(&bytes),
            Err(FileError::Invalid(ValidationError::Portal { index: 0, .. }))
        ));
        assert_each_refused(&mesh, &breakages);
    }

    /// The all-pairs table is not in the file: loading computes the bake's
    /// table again, and refuses a file that claims a table for more nav
    /// nodes than a table may have.
    #[test]
    fn the_all_pairs_table_is_computed_on_load() {
        let maps = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/maps");
        let grid = Grid::from_file(maps.join("den520d.map")).expect("bundled map");
        let mesh = NavMesh::bake(&grid.to_level(), &BakeConfig::default()).expect("bakes");
        let baked = mesh.data.hierarchy.as_ref().expect("a hierarchy");
        assert!(baked.has_table());
        let bytes = mesh.to_bytes().expect("encodes");
        let mut without = mesh.data.clone();
        without.hierarchy.as_mut().unwrap().l2_table = Default::default();
        assert_eq!(encode(&without).expect("encodes"), bytes, "not stored");
        let loaded = NavMesh::from_bytes(&bytes).expect("loads");
        let table = &loaded
            .data
            .hierarchy
            .as_ref()
            .expect("a hierarchy")
            .l2_table;
        assert_eq!(table, &baked.l2_table);
        // Aurora in clusters of 16 regions: more nav nodes than a table may have
        let grid = Grid::from_file(maps.join("Aurora.map")).expect("bundled map");
        let small = BakeConfig {
            cluster_size: 16,
            ..BakeConfig::default()
        };
        let mesh = NavMesh::bake(&grid.to_level(), &small).expect("bakes");
        assert!(mesh.nav_nodes().len() > crate::mesh::hierarchy::MAX_TABLE_NODES);
        assert_each_refused(
            &mesh,
            &[("a table for too many nav nodes", |h| {
                h.stats.all_pairs_table = true;
            })],
        );
        // BigGameHunters in clusters of 4 regions: 1,025 nav nodes, whose
        // table (6.3 MB) would be 22 times what the hierarchy stores, so a
        // file naming as many nodes in fewer bytes gets no table either
        let grid = Grid::from_file(maps.join("BigGameHunters.map")).expect("bundled map");
        let tiny = BakeConfig {
            cluster_size: 4,
            ..BakeConfig::default()
        };
        let mesh = NavMesh::bake(&grid.to_level(), &tiny).expect("bakes");
        let h = mesh.data.hierarchy.as_ref().expect("a hierarchy");
        let n = h.nodes.len() as u64;
        assert!(n <= crate::mesh::hierarchy::MAX_TABLE_NODES as u64);
        let stored = h.table_allowance();
        let per_byte = crate::mesh::hierarchy::TABLE_BYTES_PER_STORED_BYTE;
        assert!(6 * n * n > per_byte * stored, "{n} nodes, {stored} bytes");
        assert!(!h.has_table() && !h.stats.all_pairs_table);
        assert_each_refused(
            &mesh,
            &[("a table over its bytes", |h| {
                h.stats.all_pairs_table = true;
            })],
        );
        let loaded = NavMesh::from_bytes(&mesh.to_bytes().expect("encodes")).expect("loads");
        assert!(!loaded.data.hierarchy.as_ref().expect("kept").has_table());
    }

    /// Designer corridors are stored (the flat search made them): broken,
    /// the file is refused; intact, a loaded mesh has every corridor its
    /// bake had, the derived ones included.
    #[test]
    fn designer_corridors_are_checked_and_derived_ones_come_back() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/levels/rts_base.json");
        let level = crate::Level::from_file(path).expect("bundled level");
        let mesh = NavMesh::bake(&level, &BakeConfig::default()).expect("bakes");
        let h = mesh.data.hierarchy.as_ref().expect("hierarchy");
        assert!(h.designer_corridors.len() > 2 && !h.designer_crossings.is_empty());
        let loaded = NavMesh::from_bytes(&encode(&mesh.data).unwrap()).expect("loads");
        let back = loaded.data.hierarchy.as_ref().expect("hierarchy");
        assert_eq!(back.corridors, h.corridors);
        assert_eq!(back.crossings, h.crossings);
        let breakages: [Breakage; 4] = [
            ("designer corridor end", |h| {
                h.designer_corridors[0].ends[1] = 9999
            }),
            ("designer corridor span", |h| {
                h.designer_corridors[0].len += 1_000_000
            }),
            ("designer crossing", |h| h.designer_crossings[0] = 999_999),
            ("designer corridors out of place", |h| {
                h.designer_corridors[1].first += 1
            }),
        ];
        assert_each_refused(&mesh, &breakages);
    }

    /// Regression (hostile-input campaign): 65,537 copies of one triangle,
    /// with a valid header and checksum, overflowed the point locator's
    /// count of a cell's regions while loading, before validation ran. They
    /// are now refused as regions on top of each other (the file claiming
    /// the area they cover, so that the cheaper area check passes).
    #[test]
    fn many_copies_of_one_region_are_refused_on_load() {
        let level =
            crate::Level::from_json_str(r#"{"walkable": [[[0,0],[10,0],[0,10]]]}"#).unwrap();
        let config = BakeConfig {
            corridors: false,
            ..BakeConfig::default()
        };
        let mesh = NavMesh::bake(&level, &config).unwrap();
        assert_eq!(mesh.region_count(), 1);
        let mut data = mesh.data.clone();
        let region = data.regions.values().next().unwrap().clone();
        for index in 1..65_537 {
            let mut copy = region.clone();
            copy.index = index;
            data.regions.insert(copy);
        }
        // the area the copies cover, so that only their overlap is wrong
        data.stats.walkable_area *= 65_537.0;
        let bytes = encode(&data).unwrap();
        let error = NavMesh::from_bytes(&bytes).expect_err("stacked regions");
        assert!(
            matches!(&error, FileError::Invalid(ValidationError::Region { reason, .. })
                if reason.contains("overlaps")),
            "{error:?}"
        );
    }

    /// An L-shaped room baked without a hierarchy: a few regions and
    /// portals, for files broken by hand.
    fn l_shaped_mesh() -> NavMesh {
        let level = crate::Level::from_json_str(
            r#"{"walkable": [[[0,0],[20,0],[20,10],[10,10],[10,20],[0,20]]]}"#,
        )
        .unwrap();
        let config = BakeConfig {
            corridors: false,
            ..BakeConfig::default()
        };
        NavMesh::bake(&level, &config).unwrap()
    }

    /// Regression (hostile-input campaign): a portal listed by only one of
    /// its two regions underflowed a count while the tables were derived
    /// (a panic in debug builds, a wrap in release). It is refused.
    #[test]
    fn a_portal_listed_on_one_side_only_is_refused_on_load() {
        let mesh = l_shaped_mesh();
        assert!(mesh.portal_count() >= 1);
        let mut data = mesh.data.clone();
        let region = data
            .regions
            .values_mut()
            .find(|r| r.portals.iter().any(Option::is_some))
            .unwrap();
        let slot = region.portals.iter().position(Option::is_some).unwrap();
        region.portals[slot] = None;
        let bytes = encode(&data).unwrap();
        let error = NavMesh::from_bytes(&bytes).expect_err("a one-sided portal");
        assert!(matches!(&error, FileError::Invalid(_)), "{error}");
    }

    /// Regression (CI's fuzzing of `baked_body`, session 33): a region
    /// with no vertices has an empty box, whose cells the point locator
    /// counted by subtracting the first from the last (an overflow: a panic
    /// in debug builds, a wrap in release), before validation ran. The
    /// fuzzer's input is committed (its hierarchy's leg costs re-encoded for
    /// format 10, the rest byte for byte); it and a region emptied by hand
    /// are refused for that region.
    #[test]
    fn a_region_without_vertices_is_refused_on_load() {
        let body: &[u8] = include_bytes!(
            "../../fuzz/regressions/baked_body/crash-0c73b6715945e7b6fc64f5e675f86dc021be2f20"
        );
        let error = NavMesh::from_bytes(&super::framed(body)).expect_err("the fuzzer's file");
        assert!(
            matches!(&error, FileError::Invalid(ValidationError::Region { reason, .. })
                if reason.contains("vertices")),
            "{error:?}"
        );

        let mut data = l_shaped_mesh().data;
        let region = data.regions.values_mut().last().unwrap();
        region.vertices.clear();
        region.portals.clear();
        let bytes = encode(&data).unwrap();
        let error = NavMesh::from_bytes(&bytes).expect_err("a region without vertices");
        assert!(
            matches!(&error, FileError::Invalid(ValidationError::Region { reason, .. })
                if reason.contains("vertices")),
            "{error:?}"
        );
    }

    /// Regression (hostile-input campaign): a header length of u64::MAX
    /// overflowed when the header size was added to it.
    #[test]
    fn a_huge_header_length_is_a_truncated_file() {
        let mut bytes = b"PNAVMESH".to_vec();
        bytes.extend_from_slice(&crate::FORMAT_VERSION.to_le_bytes());
        bytes.extend_from_slice(&u64::MAX.to_le_bytes());
        bytes.extend_from_slice(&0u64.to_le_bytes());
        assert!(matches!(
            NavMesh::from_bytes(&bytes),
            Err(FileError::Truncated {
                expected: u64::MAX,
                ..
            })
        ));
    }
}
