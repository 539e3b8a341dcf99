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

# Most LUT levels on any path (the longest ltp path is mostly carry chains): a longest path over
# the netlist yosys writes as JSON where a LUT1..6 counts 1 and MUXF*, CARRY*, INV count 0,
# broken at the same sequential cells. Prints: levels, start bit, end bit.
lutdepth() {
    python3 - "$1" "$2" "$3" "${DEPTH_BB:-}" <<'PY'
import json, sys
from collections import defaultdict, deque
# longest path counting LUT1..6 only (MUXF*, CARRY*, INV free), paths broken at sequential cells
SEQ = ("FD", "LD", "SRL", "RAM", "URAM", "DSP", "FIFO", "BUF")
BB = set(sys.argv[4].split())
d = json.load(open(sys.argv[1]))
mods = {n: m for n, m in d["modules"].items() if not m.get("attributes", {}).get("blackbox")}
mod = mods[sys.argv[2]]
names = {}
for n, w in mod["netnames"].items():
    for i, b in enumerate(w["bits"]):
        if isinstance(b, int) and (b not in names or not n.startswith("$")):
            names[b] = n if len(w["bits"]) == 1 else "%s[%d]" % (n, i + w.get("offset", 0))
succ = defaultdict(list)
indeg = defaultdict(int)
nodes = set()
for cn, c in mod["cells"].items():
    t = c["type"]
    if t.startswith(SEQ) or t in BB:
        continue
    w = 1 if t.startswith("LUT") else 0
    dirs = c.get("port_directions", {})
    ins, outs = [], []
    for p, bits in c["connections"].items():
        bits = [b for b in bits if isinstance(b, int)]
        if dirs.get(p) == "input":
            ins += bits
        elif dirs.get(p) == "output":
            outs += bits
    for s in set(ins):
        for o in set(outs):
            succ[s].append((o, w))
            indeg[o] += 1
            nodes.add(s); nodes.add(o)
dist = {n: 0 for n in nodes}
prev = {}
q = deque(n for n in nodes if indeg[n] == 0)
seen = 0
while q:
    n = q.popleft(); seen += 1
    for o, w in succ[n]:
        if dist[n] + w > dist[o]:
            dist[o] = dist[n] + w; prev[o] = n
        indeg[o] -= 1
        if indeg[o] == 0:
            q.append(o)
if not nodes:
    print(0, "-", "-"); sys.exit()
end = max(nodes, key=lambda n: dist[n])
start = end
path = [end]
while start in prev:
    start = prev[start]
    path.append(start)
# the whole path, one net a line with its LUT count so far (named nets help find the logic)
with open(sys.argv[3], "w") as f:
    for n in reversed(path):
        f.write("%d %s\n" % (dist[n], names.get(n, str(n))))
# every named path end (a register input, a block port) over 8 LUT levels, deepest first,
# with where its path starts
with open(sys.argv[3] + ".ends", "w") as f:
    ends = sorted((n for n in nodes if dist[n] > 8 and not succ[n]), key=lambda n: -dist[n])
    for n in ends:
        s = n
        while s in prev:
            s = prev[s]
        f.write("%d %s <- %s\n" % (dist[n], names.get(n, str(n)), names.get(s, str(s))))
    # the deepest path of each (start block, end block) pair, its named nets only
    blk = lambda n: names.get(n, "$").split(".")[0] if not names.get(n, "$").startswith("$") else "(internal)"
    seen_pairs = set()
    for n in ends:
        p = [n]
        while p[-1] in prev:
            p.append(prev[p[-1]])
        key = (blk(p[-1]), blk(n))
        if key in seen_pairs:
            continue
        seen_pairs.add(key)
        f.write("\n# %s -> %s, %d LUT levels:\n" % (key[0], key[1], dist[n]))
        for x in reversed(p):
            if not names.get(x, "$").startswith("$"):
                f.write("  %d %s\n" % (dist[x], names[x]))
loop = "" if seen == len(nodes) else "(comb-loop:%d-bits-left-out)" % (len(nodes) - seen)
print(dist[end], names.get(start, str(start)) + loop, names.get(end, str(end)))
PY
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
        rm -f "$out/$m.json" # tens of MB each
        row="| $name | $lut | $ff | $len | $nl | $secs | $nl LUT + $nm MUXF + $nc CARRY4 + $no other; $from -> $to | $ml: $mfrom -> $mto |"
    fi
    echo "$row"
    echo "$row" >>"$md"
done
echo "table: $md   logs: $out/"
