#!/usr/bin/env bash
# The simulator's cost in machine instructions per simulated cycle: `rnic-sim speed` (two NICs,
# RDMA then idle, a fixed number of cycles) under valgrind's callgrind, which counts every
# instruction executed. Unlike cycles per second this figure does not depend on what else the
# machine runs, so it compares two builds exactly (same cycles, same instructions); a run
# takes under a minute. Prints the total, the cycles and the instructions per cycle (both
# NICs), and the top functions; the raw profile is out/sim-ir.callgrind
# (`callgrind_annotate out/sim-ir.callgrind`).
#
# usage: scripts/sim-ir.sh [RNIC_SIM_BINARY]   (default: target/release/rnic-sim; `make sim-ir`
# builds it first). Needs valgrind, which `make setup` installs.
set -euo pipefail
bin=${1:-${CARGO_TARGET_DIR:-target}/release/rnic-sim}
[ -x "$bin" ] || { echo "sim-ir: no simulator at $bin (cargo build --release -p rnic-sim)" >&2; exit 1; }
command -v valgrind >/dev/null \
  || { echo "sim-ir: no valgrind: run 'make setup' (scripts/setup.sh installs it)" >&2; exit 1; }
mkdir -p out
log=out/sim-ir.log
valgrind --tool=callgrind --callgrind-out-file=out/sim-ir.callgrind "$bin" speed >"$log" 2>&1 \
  || { cat "$log" >&2; exit 1; }
ir=$(sed -n 's/.*I *refs: *//p' "$log" | tr -d ,)
line=$(grep "two-NIC world" "$log")
rdma=$(sed -n 's/.*READs; \([0-9]*\) cycles).*/\1/p' <<<"$line")
idle=$(sed -n 's/.*idle (\([0-9]*\) cycles).*/\1/p' <<<"$line")
[ -n "$ir" ] && [ -n "$rdma" ] && [ -n "$idle" ] || { cat "$log" >&2; echo "sim-ir: cannot read the counts" >&2; exit 1; }
cycles=$((rdma + idle))
echo "rnic-sim speed under callgrind: $ir instructions over $cycles cycles ($rdma RDMA + $idle idle)"
echo "instructions per simulated cycle (two NICs): $((ir / cycles))"
callgrind_annotate out/sim-ir.callgrind 2>/dev/null | grep -E '^ *[0-9,]+ \([ 0-9.]+%\) ' | sed -n '2,9p' | cut -c1-140
