#!/usr/bin/env bash
# yosys synthesis estimate of rnic_top for Xilinx UltraScale+ (synth_xilinx -family xcup).
# usage: scripts/synth.sh VERILOG_FILE OUTDIR
set -euo pipefail
v=$1; out=$2
mkdir -p "$out"
t0=$(date +%s)
yosys -q -l "$out/yosys.log" -p "read_verilog $v; synth_xilinx -family xcup -top rnic_top; tee -o $out/stat.txt stat" >/dev/null
t1=$(date +%s)
# totals of the whole design: the section after "design hierarchy" (per-module sections before
# it would count every cell twice)
cells() { awk -v pat="$1" '/=== design hierarchy ===/ {h = 1} h && $1 ~ pat {s += $2} END {print s+0}' "$out/stat.txt"; }
lut=$(cells '^LUT[1-6]$'); ff=$(cells '^FD[CPRS]E$'); b36=$(cells '^RAMB36E2$'); b18=$(cells '^RAMB18E2$'); uram=$(cells '^URAM288$')
lutram=$(cells '^RAM(32|64|128|256)[MXS]')
echo "rnic_top yosys estimate (synth_xilinx -family xcup, yosys $(yosys -V | awk '{print $2}'), not Vivado):"
echo "  LUT $lut  FF $ff  BRAM36 $b36  BRAM18 $b18  URAM $uram  LUTRAM cells $lutram   ($((t1 - t0)) s)"
echo "  full report: $out/stat.txt"
