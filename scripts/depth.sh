#!/usr/bin/env bash
# Worst logic depth per block: yosys synthesizes each block of rnic_top on its own for Xilinx
# UltraScale+ (synth_xilinx -family xcup -flatten -noiopad -top BLOCK) and `ltp -noff` reports
# its longest topological path; a table of LUT, FF, that length, the LUT levels on that path and
# the seconds each run took goes to stdout and to out/depth.md. A yosys estimate, not Vivado.
#
# usage: scripts/depth.sh [MODULE...]
#   default: every module rnic_top instantiates directly, smallest (Verilog lines) first
#   DEPTH_TOP=1        also rnic_top itself, last (takes very long)
#   DEPTH_BB="rnic_top_txb rnic_top_dmae"  modules kept as black boxes (their ports end paths,
#                      as registers do): rnic_top's cross-block paths among the other blocks in
#                      minutes instead of an hour (paths through a black box are not seen)
#   DEPTH_TIMEOUT=720  seconds one yosys run may take; over that it is killed, row "timeout"
#   DEPTH_VERILOG=build/verilog/rnic_top.v (make verilog writes it)   DEPTH_OUT=build/depth
#   DEPTH_MD=out/depth.md (the table)
#   DEPTH_EXPLAIN=N    also $DEPTH_OUT/MODULE.lutpath.explain: the paths to the N deepest ends,
#                      each net with its driving cell and that cell's named inputs
#   DEPTH_KEEP_JSON=1  keep $DEPTH_OUT/MODULE.json (the netlist, tens of MB) for
#                      scripts/lutdepth.py runs of your own
# Raw logs: $DEPTH_OUT/MODULE.log; the longest path, one line per cell: $DEPTH_OUT/MODULE.path;
# the path with the most LUT levels, one net a line: $DEPTH_OUT/MODULE.lutpath
# A block whose memory yosys 0.23 fails to map to LUTRAM is run again with -nolutram (its row
# says so).
#
# What the length counts: ltp walks the netlist after synth_xilinx and counts every cell on the
# path: LUT1..6, each MUXF7/F8/F9 of a wide LUT, each CARRY4 (yosys 0.23 maps carries to the
# 4-bit CARRY4 for xcup too, not CARRY8: a 64-bit add is 16 of them), INV. Its -noff only breaks
# paths at yosys's internal FF types, not at the Xilinx cells synth_xilinx leaves (FDRE ...), so
# ltp runs on a selection without the sequential cells: FD*, LD*, SRL*, RAM* (block RAM and
# LUTRAM, whose asynchronous read is then not counted), URAM*, DSP*, FIFO*, BUF*. The path runs
# from a block input or a register/RAM output to a register/RAM input or a block output; paths
# that cross block boundaries are only seen in rnic_top (DEPTH_TOP=1). "LUT levels" counts the
# LUT1..6 cells on that path only (a LUT6 + MUXF7/F8 wide LUT is one level), which need not be
# the path with the most LUTs: the last column is that one (see lutdepth below).
set -euo pipefail
v=${DEPTH_VERILOG:-build/verilog/rnic_top.v}
out=${DEPTH_OUT:-build/depth}
tmo=${DEPTH_TIMEOUT:-720}
md=${DEPTH_MD:-out/depth.md}
[ -f "$v" ] || { echo "no $v: run make verilog first" >&2; exit 1; }
mkdir -p "$out" out
# synth_xilinx with the fixed LUT-RAM table (scripts/xcup.sh)
. "$(dirname "$0")/xcup.sh"
lutlib=$(xcup_lutlib "$out")

# Lines of Verilog of MODULE and of the modules named MODULE_* (its submodules: rust-hdl names
# them after their parent), a size estimate to run the small blocks first.
size() { awk -v b="$1" '/^module /{n = $2; sub(/\(.*/, "", n); p = (n == b || index(n, b "_") == 1)} p {c++} END {print c + 0}' "$v"; }

if [ $# -gt 0 ]; then
    mods=("$@")
else
    # the modules rnic_top instantiates: lines "    TYPE NAME(" inside it whose TYPE is a module
    mapfile -t mods < <(awk '
        /^module /{n = $2; sub(/\(.*/, "", n); known[n] = 1; intop = (n == "rnic_top"); next}
        /^endmodule/ {intop = 0}
        intop && $0 ~ /^[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/ {
            t = $1; i = $2; sub(/\(.*/, "", i); inst[t] = 1}
        END {for (t in inst) if (t in known) print t}' "$v" |
        while read -r m; do echo "$(size "$m") $m"; done | sort -n | awk '{print $2}')
fi
[ "${DEPTH_TOP:-0}" = 1 ] && mods+=(rnic_top)

# Most LUT levels on any path (the longest ltp path is mostly carry chains): scripts/lutdepth.py
# on the netlist yosys writes as JSON. Prints: levels, start bit, end bit.
lutdepth() {
    python3 "$(dirname "$0")/lutdepth.py" "$1" "$2" "$3" "${DEPTH_BB:-}" "${DEPTH_EXPLAIN:-0}"
}

hdr="| module | LUT | FF | ltp length | LUT levels on it | seconds | path: cells on it, from -> to | max LUT levels (any path): from -> to |"
sep="|---|---:|---:|---:|---:|---:|---|---|"
{
    echo "yosys $(yosys -V | awk '{print $2}') synth_xilinx -family xcup -flatten -noiopad; ltp -noff without sequential cells ($(date -u +%F), $v)"
    echo
    echo "$hdr"
    echo "$sep"
} >"$md"
echo "$hdr"

for m in "${mods[@]}"; do
    log=$out/$m.log
    # the sequential/storage cells that end a path (see the header)
    seqsel='t:FD* t:LD* t:SRL* t:RAM* t:URAM* t:DSP* t:FIFO* t:BUF* %u %u %u %u %u %u %u'
    for b in ${DEPTH_BB:-}; do seqsel+=" t:$b %u"; done
    seqsel+=' %n'
    synth="synth_xilinx -family xcup -flatten -noiopad -top $m"
    bb=""
    [ -n "${DEPTH_BB:-}" ] && bb="; blackbox ${DEPTH_BB}"
    ys="read_verilog $v$bb; $(xcup_synth "$lutlib" -flatten -noiopad -top "$m")"
    post="; select -write $out/$m.luts t:LUT*; select -write $out/$m.muxf t:MUXF*; select -write $out/$m.carry t:CARRY*"
    post+="; ltp -noff $seqsel; tee -o $out/$m.stat stat; write_json $out/$m.json"
    ys+=$post
    t0=$(date +%s)
    rc=0
    timeout "$tmo" nice -n 15 yosys -q -l "$log" -p "$ys" >/dev/null 2>&1 || rc=$?
    name=$m
    # a memory the LUT-RAM mapping still fails on ("invalid OPTION_ABITS/WIDTH combination"
    # in lutrams_xc5v_map.v): once more without LUTRAM, and the row says so
    if [ "$rc" = 1 ] && grep -q 'invalid OPTION_ABITS/WIDTH combination' "$log"; then
        mv "$log" "$out/$m.lutram-failed.log"
        rc=0
        timeout "$tmo" nice -n 15 yosys -q -l "$log" -p "read_verilog $v$bb; $synth -nolutram$post" >/dev/null 2>&1 || rc=$?
        name="$m (-nolutram)"
    fi
    secs=$(($(date +%s) - t0))
    if [ "$rc" = 124 ]; then
        row="| $name | | | timeout >$((tmo / 60)) min | | $secs | | |"
    elif [ "$rc" != 0 ]; then
        row="| $name | | | yosys failed (rc $rc, see $log) | | $secs | | |"
    else
        cnt() { awk -v pat="$1" '$1 ~ pat {s += $2} END {print s + 0}' "$out/$m.stat"; }
        lut=$(cnt '^LUT[1-6]$')
        ff=$(cnt '^FD[CPRS]E$')
        len=$(sed -n 's/^Longest topological path in .* (length=\([0-9-]*\)):$/\1/p' "$log" | tail -1)
        # the path: the lines after the last "Longest topological path" up to the empty line;
        # "N: BIT (via CELL)"; the cell names are matched with the type lists written above
        awk '/^Longest topological path/ {delete p; n = 0; on = 1; next} on && /^$/ {on = 0} on {p[++n] = $0}
             END {for (i = 1; i <= n; i++) print p[i]}' "$log" >"$out/$m.path"
        nl='?' nm='?' nc='?' no='?' from='?' to='?'
        read -r nl nm nc no from to < <(awk -v mod="$m" '
            FILENAME ~ /\.luts$/ {sub("^" mod "/", ""); k[$0] = "L"; next}
            FILENAME ~ /\.muxf$/ {sub("^" mod "/", ""); k[$0] = "M"; next}
            FILENAME ~ /\.carry$/ {sub("^" mod "/", ""); k[$0] = "C"; next}
            {
                line = $0; sub(/^ *-?[0-9]+: /, "", line)
                bit = line; sub(/ \(via .*\)$/, "", bit); gsub(/ /, "", bit); gsub(/\\/, "", bit)
                if (first == "") first = bit
                last = bit
                if (match(line, / \(via .*\)$/)) {
                    c = substr(line, RSTART + 6, RLENGTH - 7)
                    t = (c in k) ? k[c] : "O"; cnt[t]++
                }
            }
            END {printf "%d %d %d %d %s %s\n", cnt["L"], cnt["M"], cnt["C"], cnt["O"], first, last}
        ' "$out/$m.luts" "$out/$m.muxf" "$out/$m.carry" "$out/$m.path") || true
        ml='?' mfrom='?' mto='?'
        read -r ml mfrom mto < <(lutdepth "$out/$m.json" "$m" "$out/$m.lutpath") || true
        [ "${DEPTH_KEEP_JSON:-0}" = 1 ] || rm -f "$out/$m.json" # tens of MB each
        row="| $name | $lut | $ff | $len | $nl | $secs | $nl LUT + $nm MUXF + $nc CARRY4 + $no other; $from -> $to | $ml: $mfrom -> $mto |"
    fi
    echo "$row"
    echo "$row" >>"$md"
done
echo "table: $md   logs: $out/"
