#!/usr/bin/env bash
# A newcomer's first run, checked: clone the committed HEAD of this repository into a new,
# otherwise empty temporary folder (nothing beside it, no .venv, no cargo target dir beside or inside
# it), run the clone's own `make setup` (a new .venv from Debian's /usr/bin/python3, or
# $RNIC_PYTHON) and `make run` once, and print how long it took. The cargo registry
# (~/.cargo/registry: downloads) is reused; every build is cold. Uncommitted changes are not
# in the clone. Keeps the folder only on failure (RNIC_FRESH_KEEP=1 keeps it always).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnic-fresh.XXXXXX")
clone="$tmp/rnic"
ok=0
cleanup() {
  if [ "$ok" = 1 ] && [ "${RNIC_FRESH_KEEP:-0}" != 1 ]; then rm -rf "$tmp"; else echo "fresh-check: left $tmp" >&2; fi
}
trap cleanup EXIT
echo "fresh-check: cloning $(git -C "$repo" rev-parse --short HEAD) into $clone"
git clone -q --no-hardlinks "$repo" "$clone"
# nothing of the caller's environment may point the clone at other installs or build dirs
unset VERILATOR_ROOT RNIC_VENV CARGO_TARGET_DIR
export PATH
PATH=$(echo "$PATH" | tr ':' '\n' | grep -v -e '/\.venv/bin$' | paste -sd: -)
start=$(date +%s)
make -C "$clone" setup
t_setup=$(( $(date +%s) - start ))
make -C "$clone" run
t_all=$(( $(date +%s) - start ))
[ -s "$clone/out/rnic-sim.pcap" ] || { echo "fresh-check: make run wrote no out/rnic-sim.pcap" >&2; exit 1; }
ok=1
echo "fresh-check: passed in ${t_all} s (setup ${t_setup} s, first make run $(( t_all - t_setup )) s)"
