#!/usr/bin/env python3
"""Every port an XDC constrains must exist in the board top (with a valid bit index).

usage: check_xdc_ports.py XDC=TOP.v:MODULE ...
Reads `[get_ports ...]` from the XDC (names, `name[i]`, and `name[*]` patterns) and the
ANSI port declarations of MODULE in TOP.v.
"""
import re
import sys


def ports_of(verilog, module):
    text = re.sub(r"//[^\n]*", "", open(verilog).read())
    m = re.search(r"\bmodule\s+" + re.escape(module) + r"\s*\((.*?)\);", text, re.S)
    if not m:
        sys.exit(f"{verilog}: module {module} not found")
    ports = {}
    for d in re.finditer(r"\b(input|output|inout)\s+(?:wire|reg)?\s*(\[\s*(\d+)\s*:\s*(\d+)\s*\])?\s*([A-Za-z_]\w*)", m.group(1)):
        hi, lo = (int(d.group(3)), int(d.group(4))) if d.group(2) else (None, None)
        ports[d.group(5)] = (hi, lo)
    return ports


def constrained(xdc):
    text = open(xdc).read()
    names = []
    for g in re.finditer(r"get_ports\s+(-quiet\s+)?(\{[^}]*\}|\S+?)\]", text):
        quiet = bool(g.group(1))
        for n in g.group(2).strip("{}").split():
            names.append((n, quiet, text.count("\n", 0, g.start()) + 1))
    return names


def main():
    bad = 0
    for arg in sys.argv[1:]:
        xdc, rest = arg.split("=", 1)
        verilog, module = rest.rsplit(":", 1)
        ports = ports_of(verilog, module)
        seen = 0
        for name, quiet, line in constrained(xdc):
            m = re.fullmatch(r"([A-Za-z_]\w*)(?:\[(\d+|\*)\])?", name)
            if not m:
                print(f"{xdc}:{line}: cannot parse port pattern {name}")
                bad += 1
                continue
            base, idx = m.groups()
            if base not in ports:
                if quiet:
                    continue  # -quiet: a shared constraint for ports of another board
                print(f"{xdc}:{line}: port {name} is not a port of {module}")
                bad += 1
                continue
            hi, lo = ports[base]
            if idx not in (None, "*"):
                if hi is None or not (min(hi, lo) <= int(idx) <= max(hi, lo)):
                    print(f"{xdc}:{line}: {name}: index out of range of {module}.{base}")
                    bad += 1
                    continue
            elif idx is None and hi is not None and hi != lo:
                print(f"{xdc}:{line}: {name} is a bus in {module}; constrain its bits")
                bad += 1
                continue
            seen += 1
        print(f"xdc ports ok: {xdc}: {seen} constrained ports found in {module}" if not bad else "")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
