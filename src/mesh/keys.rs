//! Region and portal keys that go stale when a runtime edit replaces the
//! mesh.
//!
//! Every bake, load or edit builds its mesh's slot maps afresh, in dense
//! order, so two meshes of one lineage would hand out the same keys for
//! different regions. A mesh therefore carries a **key generation**: 0 for a
//! bake or a load, one more than the mesh it replaced for an edit. The keys
//! it hands out are its slot maps' own keys with the version moved up by two
//! per generation ([`shifted`]; versions of occupied slots stay odd), and
//! every key it stores (a region's portals, a portal's regions) is handed
//! out so too. A key of another generation names, in this mesh, a version
//! its slot does not have, so it is stale here: `NavMesh::region` and
//! `NavMesh::portal` answer `None`. The baked file stores the slot maps'
//! own keys ([`Region`]'s and [`Portal`]'s `Serialize`), so an edited mesh
//! saves the bytes of a fresh bake and loads at generation 0.
//!
//! Versions wrap after 2^31 generations, when old keys could name a region
//! again. Keys do not outlive a save and load: a loaded mesh is at
//! generation 0, as the bake it saves the bytes of, whatever edits made it.

use serde::{Deserialize, Serialize};
use slotmap::{Key, KeyData, SlotMap};

/// `key` as a mesh `generation` edits on hands it out (see the module).
#[inline]
pub(crate) fn shifted<K: Key>(key: K, generation: u32) -> K {
    // the version is the high half: adding there wraps it alone
    let by = u64::from(generation.wrapping_mul(2)) << 32;
    K::from(KeyData::from_ffi(key.data().as_ffi().wrapping_add(by)))
}

/// The slot map key behind `key` handed out at `generation` (the inverse
/// of [`shifted`]).
#[inline]
pub(crate) fn unshifted<K: Key>(key: K, generation: u32) -> K {
    shifted(key, generation.wrapping_neg())
}

/// A slot map whose keys are handed out at a key generation (see the
/// module): every key going in or out is shifted, and the map's own keys
/// stay those of its slots. Stored in the baked file as the slot map alone.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct Keyed<K: Key, V> {
    map: SlotMap<K, V>,
    #[serde(skip)]
    generation: u32,
}

impl<K: Key, V> Default for Keyed<K, V> {
    fn default() -> Self {
        Keyed {
            map: SlotMap::with_key(),
            generation: 0,
        }
    }
}

impl<K: Key, V> From<SlotMap<K, V>> for Keyed<K, V> {
    /// The map at generation 0: its keys handed out as they are.
    fn from(map: SlotMap<K, V>) -> Self {
        Keyed { map, generation: 0 }
    }
}

impl<K: Key, V> Keyed<K, V> {
    /// The key generation its keys are handed out at.
    pub(crate) fn generation(&self) -> u32 {
        self.generation
    }

    /// `map` with its keys handed out at `generation` (the keys its values
    /// store are theirs to hand out so).
    pub(crate) fn at_generation(map: SlotMap<K, V>, generation: u32) -> Self {
        Keyed { map, generation }
    }

    pub(crate) fn get(&self, key: K) -> Option<&V> {
        self.map.get(unshifted(key, self.generation))
    }

    #[cfg(feature = "fuzzing")]
    pub(crate) fn get_mut(&mut self, key: K) -> Option<&mut V> {
        self.map.get_mut(unshifted(key, self.generation))
    }

    #[cfg(test)]
    pub(crate) fn insert(&mut self, value: V) -> K {
        shifted(self.map.insert(value), self.generation)
    }

    #[cfg(feature = "fuzzing")]
    pub(crate) fn remove(&mut self, key: K) -> Option<V> {
        self.map.remove(unshifted(key, self.generation))
    }

    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Keys and values in slot order (a mesh's dense order).
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = (K, &V)> + '_ {
        let generation = self.generation;
        self.map
            .iter()
            .map(move |(k, v)| (shifted(k, generation), v))
    }

    pub(crate) fn keys(&self) -> impl ExactSizeIterator<Item = K> + '_ {
        self.iter().map(|(k, _)| k)
    }

    pub(crate) fn values(&self) -> impl ExactSizeIterator<Item = &V> + '_ {
        self.map.values()
    }

    #[cfg(test)]
    pub(crate) fn values_mut(&mut self) -> impl ExactSizeIterator<Item = &mut V> + '_ {
        self.map.values_mut()
    }

    /// Empties the map, handing out its values.
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = V> + '_ {
        self.map.drain().map(|(_, v)| v)
    }
}

impl<K: Key, V> std::ops::Index<K> for Keyed<K, V> {
    type Output = V;

    fn index(&self, key: K) -> &V {
        &self.map[unshifted(key, self.generation)]
    }
}

impl<K: Key, V> std::ops::IndexMut<K> for Keyed<K, V> {
    fn index_mut(&mut self, key: K) -> &mut V {
        &mut self.map[unshifted(key, self.generation)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RegionId;

    #[test]
    fn keys_of_other_generations_are_stale_and_shifts_undo() {
        let mut slots = SlotMap::with_key();
        let first: RegionId = slots.insert(7);
        let keys: Vec<RegionId> = (0..5).map(|i| slots.insert(i)).collect();
        let map = Keyed::from(slots.clone());
        assert_eq!(map.get(first), Some(&7));
        for g in [1, 2, 3, 1000, u32::MAX / 2] {
            let map = Keyed::at_generation(slots.clone(), g);
            assert_eq!(map.get(first), None, "generation {g}");
            assert!(keys.iter().all(|&k| map.get(k).is_none()));
            let now: Vec<RegionId> = map.keys().collect();
            assert_eq!(map.get(now[0]), Some(&7));
            assert_eq!(
                now[1..],
                keys.iter().map(|&k| shifted(k, g)).collect::<Vec<_>>()[..]
            );
            assert!(now.iter().all(|&k| unshifted(k, g) != k));
            assert_eq!(unshifted(shifted(first, g), g), first);
            // the next generation's map: this one's keys are stale there
            let next = Keyed::at_generation(slots.clone(), g.wrapping_add(1));
            assert!(now.iter().all(|&k| next.get(k).is_none()));
            assert!(next.keys().all(|k| map.get(k).is_none()));
        }
        assert_eq!(map.get(keys[2]), Some(&2));
    }
}
