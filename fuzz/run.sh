#!/usr/bin/env bash
# A fuzzing campaign: seeds every target's corpus from the repository's data/,
# then runs each target for SECONDS (default 60) and fails on the first crash.
#   bash fuzz/run.sh [SECONDS] [TARGET...]
# Needs cargo-fuzz (`cargo install cargo-fuzz`) and a nightly toolchain; with
# FUZZ_TOOLCHAIN=stable it builds with the default toolchain (RUSTC_BOOTSTRAP=1, no
# sanitizer: panics, timeouts and memory limits are still caught, memory
# errors in unsafe code are not, and this crate has none of its own).
# A crash leaves its input in fuzz/artifacts/TARGET/; commit it to
# fuzz/regressions/TARGET/ (it seeds the corpus from then on) and turn it into
# a named regression test before fixing it.
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(level_json movingai_map scenario baked_bytes baked_body baked_fields grid_queries edit_sequences booleans)
fi
data=../data
# nightly through rustup, or the default toolchain with RUSTC_BOOTSTRAP
if [ "${FUZZ_TOOLCHAIN:-nightly}" = nightly ]; then
  fuzz=(cargo +nightly fuzz run)
else
  export RUSTC_BOOTSTRAP=1
  fuzz=(cargo fuzz run --sanitizer none)
fi

seed() { mkdir -p "corpus/$1"; cp "$2" "corpus/$1/$(basename "$2")"; }
for f in "$data"/levels/*.json; do seed level_json "$f"; done
# outlines that touch and overlap without crossing (resolved without the
# boolean crate): walls along the boundary, at its corner, side by side
printf '%s' '{"walkable":[[[0,0],[40,0],[40,30],[0,30]]],"obstacles":[[[0,0],[10,0],[10,4],[0,4]],[[10,0],[20,0],[15,6]],[[40,30],[30,30],[35,20]],[[20,10],[28,10],[28,18],[20,18]],[[28,12],[34,12],[34,16],[28,16]],[[5,20],[12,20],[12,20.5],[5,20.5]]],"areas":[{"kind":"mud","cost":2.0,"polygon":[[20,20],[28,20],[28,26],[20,26]]}]}' \
  > corpus/level_json/touching.json
# outlines that cross one another and the boundary (cut where they cross,
# then resolved without the boolean crate)
printf '%s' '{"walkable":[[[0,0],[40,0],[40,30],[0,30]]],"obstacles":[[[-5,10],[45,12],[45,13],[-5,11]],[[10,-5],[11,-5],[14,35],[13,35]],[[20,5],[30,25],[29,26],[19,6]],[[35,-2],[42,5],[38,6]]],"areas":[{"kind":"mud","cost":2.0,"polygon":[[5,5],[25,20],[20,25],[3,8]]}]}' \
  > corpus/level_json/crossing.json
seed movingai_map "$data/maps/arena.map"
printf 'type octile\nheight 3\nwidth 4\nmap\n..@.\n.@..\n....\n' > corpus/movingai_map/pinch.map
head -c 4000 "$data/maps/den520d.map.scen" > corpus_scen.tmp
mkdir -p corpus/scenario corpus/baked_bytes corpus/baked_body corpus/baked_fields
# baked_fields: each seed with one change to each kind of field
for seed in 0 1 2 3; do
  for field in $(seq 0 23); do
    printf "\\x$(printf %02x $seed)\\x$(printf %02x $field)\\x03\\x00\\x00\\x00\\x05\\x00\\x00\\x80" \
      > "corpus/baked_fields/s${seed}f${field}"
  done
done
mv corpus_scen.tmp corpus/scenario/den520d_head.scen
seed scenario "$data/maps/arena.map.scen"
# baked files of the bundled levels and of a small map, whole and as bodies
target_dir=${CARGO_TARGET_DIR:-../target}
case "$target_dir" in /*) ;; *) target_dir="$(cd .. && pwd)/${target_dir#../}" ;; esac
bin="$target_dir/release/portalnav"
(cd .. && cargo build --release --quiet)
for f in "$data"/levels/*.json "$data/maps/arena.map"; do
  name=$(basename "$f")
  if ! "$bin" bake "$f" -o "corpus/baked_bytes/$name.nav" >/dev/null 2>"corpus/bake.err"; then
    echo "seeding: portalnav bake $f failed:"; cat corpus/bake.err; exit 1
  fi
  tail -c +29 "corpus/baked_bytes/$name.nav" > "corpus/baked_body/$name.body"
done
# inputs that once crashed a target (each has a named regression test)
for d in regressions/*/; do
  [ -d "$d" ] || continue
  t=$(basename "$d")
  mkdir -p "corpus/$t"
  cp "$d"* "corpus/$t/"
done

for t in "${targets[@]}"; do
  echo "== fuzz $t for ${seconds}s"
  log="artifacts/$t.log"
  mkdir -p artifacts
  if ! "${fuzz[@]}" "$t" -- -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=20 >"$log" 2>&1; then
    grep -E '(ERROR|SUMMARY|panicked|Test unit written|Slowest unit|out-of-memory)' "$log" | head -20
    echo "fuzz target $t failed: its input is in fuzz/artifacts/$t/, the log in $log"
    exit 1
  fi
  grep -E '^Done [0-9]+ runs' "$log"
done
