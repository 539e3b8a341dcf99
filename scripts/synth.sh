#!/usr/bin/env bash
# yosys synthesis estimate of rnic_top (or of one of its blocks) for Xilinx UltraScale+:
# synth_xilinx -family xcup, its memory step on the fixed LUT-RAM table of scripts/xcup.sh.
# usage: scripts/synth.sh VERILOG_FILE OUTDIR [TOP]   (TOP: rnic_top, or a block: rnic_top_ctxs)
set -euo pipefail
v=$1; out=$2; top=${3:-rnic_top}
mkdir -p "$out"
. "$(dirname "$0")/xcup.sh"
lutlib=$(xcup_lutlib "$out")
t0=$(date +%s)
yosys -q -l "$out/yosys.log" -p "read_verilog $v; $(xcup_synth "$lutlib" -top "$top"); tee -o $out/stat.txt stat" >/dev/null
t1=$(date +%s)
# totals of the whole design: the section after "design hierarchy" (per-module sections before
# it would count every cell twice); a top without submodules has no such section
cells() { awk -v pat="$1" '/=== design hierarchy ===/ {h = 1; s = 0} $1 ~ pat {s += $2} END {print s+0}' "$out/stat.txt"; }
lut=$(cells '^LUT[1-6]$'); ff=$(cells '^FD[CPRS]E$'); b36=$(cells '^RAMB36E2$'); b18=$(cells '^RAMB18E2$'); uram=$(cells '^URAM288$')
lutram=$(cells '^RAM(32|64|128|256|512)[MXS]')
echo "$top yosys estimate (synth_xilinx -family xcup, yosys $(yosys -V | awk '{print $2}'), not Vivado):"
echo "  LUT $lut  FF $ff  BRAM36 $b36  BRAM18 $b18  URAM $uram  LUTRAM cells $lutram   ($((t1 - t0)) s)"
echo "  full report: $out/stat.txt"
