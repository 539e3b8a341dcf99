#!/usr/bin/env bash
# Open synthesis check of a board top with yosys (synth_xilinx -family xcup): the vendor IP
# (rnic_xdma, rnic_cmac: hw/fpga/common/ip_stubs.v) and the UltraScale+ primitives are black
# boxes. rnic_top is read with `read_verilog -lib` (ports only: its connections are checked,
# its logic is not synthesized here) unless RNIC_SYNTH_FULL=1, which synthesizes it too.
# The printed LUT/FF/BRAM/URAM numbers are a YOSYS ESTIMATE, not Vivado's.
#
# usage: hw/fpga/synth.sh <au250|au55c> [out_dir]   (needs build/verilog/rnic_top.v and the
#        CDC Verilog in <out_dir>/verilog, which hw/fpga/vivado.mk prepares)
set -euo pipefail
board=${1:?usage: synth.sh <board> [out_dir]}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${2:-$repo/build/$board}
vdir=$out/verilog
case $board in
  au250) top=rnic_au250_top ;;
  au55c) top=rnic_au55c_top ;;
  *) echo "synth.sh: unknown board '$board' (au250, au55c)" >&2; exit 2 ;;
esac
command -v yosys >/dev/null || { echo "synth.sh: yosys not found (apt-get install yosys)" >&2; exit 2; }
source "$repo/scripts/env.sh"  # the project's Python (.venv)
for f in rnic_top.v rnic_cdc_axis_tx.v rnic_cdc_axis_rx.v rnic_reset_sync.v rnic_board_params.vh; do
  [ -f "$vdir/$f" ] || { echo "synth.sh: missing $vdir/$f (run: make -f hw/fpga/vivado.mk verilog BOARD=$board)" >&2; exit 2; }
done
if [ "${RNIC_SYNTH_FULL:-0}" = 1 ]; then rnic="read_verilog $vdir/rnic_top.v"; mode="full netlist (rnic_top synthesized)"
else rnic="read_verilog -lib $vdir/rnic_top.v"; mode="rnic_top as a black box"; fi
log=$out/yosys_$board.log
mkdir -p "$out"
start=$(date +%s)
yosys -q -l "$log" -p "
  read_verilog -lib $here/common/ip_stubs.v
  $rnic
  read_verilog $vdir/rnic_cdc_axis_tx.v $vdir/rnic_cdc_axis_rx.v $vdir/rnic_reset_sync.v
  read_verilog -I$vdir $here/common/rnic_bar_split.v $here/common/rnic_board_core.v $here/$board/$top.v
  synth_xilinx -family xcup -top $top -flatten
  tee -o $out/yosys_${board}_stat.txt stat
" >/dev/null 2>"$out/yosys_${board}.stderr" || { tail -20 "$out/yosys_${board}.stderr" >&2; exit 1; }
secs=$(( $(date +%s) - start ))
# a port of a hand-written instance (rnic_top, the BAR splitter, the core) connected with
# another width than it has: yosys pads or cuts it with a warning; here it is an error (the
# BAR2 address once stayed 21 bits wide when the ring memory grew to 8 MiB)
if bad=$(grep -E 'Resizing cell port [A-Za-z0-9_]+\.u_[A-Za-z0-9_]+\.[A-Za-z0-9_]+ from' "$log"); then
  echo "synth.sh: port width mismatch in the $board board files:" >&2
  echo "$bad" >&2
  exit 1
fi
"$RNIC_VENV/bin/python" - "$out/yosys_${board}_stat.txt" "$board" "$mode" "$secs" <<'PY'
import re, sys
path, board, mode, secs = sys.argv[1:]
cells = {}
for line in open(path):
    m = re.match(r"\s+(\d+)\s+(\S+)\s*$", line) or re.match(r"\s+(\S+)\s+(\d+)\s*$", line)
    if not m: continue
    a, b = m.groups()
    n, c = (int(a), b) if a.isdigit() else (int(b), a)
    cells[c] = cells.get(c, 0) + n
lut = sum(n for c, n in cells.items() if re.fullmatch(r"LUT[1-6]", c))
ff = sum(n for c, n in cells.items() if re.fullmatch(r"FD[A-Z]*", c))
b36 = cells.get("RAMB36E2", 0); b18 = cells.get("RAMB18E2", 0)
uram = cells.get("URAM288", 0)
lutram = sum(n for c, n in cells.items() if c.startswith("RAM") and not c.startswith("RAMB"))
print(f"yosys estimate (not Vivado) for board top {board}, {mode}, {secs} s:")
print(f"  LUT {lut}  FF {ff}  BRAM {b36 + b18 / 2:g} (RAMB36E2 {b36}, RAMB18E2 {b18})  URAM {uram}  LUTRAM cells {lutram}")
PY
