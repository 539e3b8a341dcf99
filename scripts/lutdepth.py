#!/usr/bin/env python3
"""Most LUT levels on any path of a yosys netlist (JSON after synth_xilinx), for scripts/depth.sh.

usage: lutdepth.py NETLIST.json MODULE OUT.lutpath [BLACKBOX_TYPES] [EXPLAIN]

A longest path over the module's cells where a LUT1..6 counts 1 and MUXF*, CARRY*, INV count
0 (the longest ltp path is mostly carry chains), broken at sequential and storage cells (FD*,
LD*, SRL*, RAM*, URAM*, DSP*, FIFO*, BUF*) and at the black-boxed cell types. Writes:
- OUT.lutpath: the deepest path, one net a line with its LUT count so far;
- OUT.lutpath.ends: every named path end over 8 LUT levels, deepest first, with where its path
  starts, then the deepest path of each (start block, end block) pair (named nets only);
- with EXPLAIN = N > 0, OUT.lutpath.explain: the paths to the N deepest ends (of any depth),
  every net on them with the cell driving it and that cell's named inputs, which says what
  each level is made of when abc left the nets unnamed.
Prints "LEVELS START END" for the deepest path.
"""
import json
import sys
from collections import defaultdict, deque

SEQ = ("FD", "LD", "SRL", "RAM", "URAM", "DSP", "FIFO", "BUF")


def main():
    netlist, top, out = sys.argv[1], sys.argv[2], sys.argv[3]
    bb = set(sys.argv[4].split()) if len(sys.argv) > 4 else set()
    explain = int(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[5] else 0
    d = json.load(open(netlist))
    mods = {n: m for n, m in d["modules"].items() if not m.get("attributes", {}).get("blackbox")}
    mod = mods[top]
    names = {}
    for n, w in mod["netnames"].items():
        for i, b in enumerate(w["bits"]):
            if isinstance(b, int) and (b not in names or not n.startswith("$")):
                names[b] = n if len(w["bits"]) == 1 else "%s[%d]" % (n, i + w.get("offset", 0))
    succ = defaultdict(list)
    indeg = defaultdict(int)
    nodes = set()
    # the cell driving each bit and that cell's input bits (for EXPLAIN)
    drv = {}
    for cn, c in mod["cells"].items():
        t = c["type"]
        if t.startswith(SEQ) or t in bb:
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
        for o in set(outs):
            drv[o] = (t, sorted(set(ins)))
        for s in set(ins):
            for o in set(outs):
                succ[s].append((o, w))
                indeg[o] += 1
                nodes.add(s)
                nodes.add(o)
    dist = {n: 0 for n in nodes}
    prev = {}
    q = deque(n for n in nodes if indeg[n] == 0)
    seen = 0
    while q:
        n = q.popleft()
        seen += 1
        for o, w in succ[n]:
            if dist[n] + w > dist[o]:
                dist[o] = dist[n] + w
                prev[o] = n
            indeg[o] -= 1
            if indeg[o] == 0:
                q.append(o)
    if not nodes:
        print(0, "-", "-")
        return
    name = lambda n: names.get(n, str(n))

    def path_to(n):
        p = [n]
        while p[-1] in prev:
            p.append(prev[p[-1]])
        return list(reversed(p))

    end = max(nodes, key=lambda n: dist[n])
    path = path_to(end)
    with open(out, "w") as f:
        for n in path:
            f.write("%d %s\n" % (dist[n], name(n)))
    # every path end (no successor), deepest first; the list below keeps those over 8
    tails = sorted((n for n in nodes if not succ[n]), key=lambda n: -dist[n])
    ends = [n for n in tails if dist[n] > 8]
    with open(out + ".ends", "w") as f:
        for n in ends:
            f.write("%d %s <- %s\n" % (dist[n], name(n), name(path_to(n)[0])))
        # the deepest path of each (start block, end block) pair, its named nets only
        def blk(n):
            s = names.get(n, "$")
            return "(internal)" if s.startswith("$") else s.split(".")[0]
        pairs = set()
        for n in ends:
            p = path_to(n)
            key = (blk(p[0]), blk(n))
            if key in pairs:
                continue
            pairs.add(key)
            f.write("\n# %s -> %s, %d LUT levels:\n" % (key[0], key[1], dist[n]))
            for x in p:
                if not names.get(x, "$").startswith("$"):
                    f.write("  %d %s\n" % (dist[x], names[x]))
    if explain > 0:
        with open(out + ".explain", "w") as f:
            for n in tails[:explain]:
                f.write("# %d LUT levels: %s <- %s\n" % (dist[n], name(n), name(path_to(n)[0])))
                for x in path_to(n):
                    t, ins = drv.get(x, ("-", []))
                    named = [name(i) for i in ins if not names.get(i, "$").startswith("$")]
                    f.write("  %2d %s  (%s; named inputs: %s; %d unnamed)\n" % (
                        dist[x], name(x), t, " ".join(named) or "-", len(ins) - len(named)))
                f.write("\n")
    loop = "" if seen == len(nodes) else "(comb-loop:%d-bits-left-out)" % (len(nodes) - seen)
    print(dist[end], name(path[0]) + loop, name(end))


if __name__ == "__main__":
    main()
