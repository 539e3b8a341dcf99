#!/usr/bin/env python3
"""Craft RoCE v2 request frames with scapy (independent of rnic's frame builder).

Usage: craft.py < spec.json > frames.hex

The input is a JSON list of frame specs; each has: dmac, smac (aa:bb:..), sip, dip (dotted),
sport, dqpn, psn, opcode (BTH opcode number), ackreq (bool), payload (hex string), and
optionally reth: {va, rkey, dmalen}, imm (u32), bad_icrc (bool: flip one ICRC bit), and the
hostile-peer overrides pkey (u16, default 0xFFFF), padcnt (BTH PadCnt, default: what the
payload needs; the pad bytes sent stay what the payload needs) and udp_len_delta (added to the
UDP length field; the ICRC is computed over the frame as sent).
Prints one line of hex per frame. The ICRC is computed by scapy's RoCE layer
(scapy.contrib.roce.BTH, which implements IBTA Annex A17); RETH and ImmDt are packed with
struct from the IBTA field layout (scapy 2.5 has no RETH layer).
"""
import json
import struct
import sys
import warnings

warnings.filterwarnings("ignore")

from scapy.contrib.roce import BTH  # noqa: E402
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.packet import Raw  # noqa: E402


def frame(s):
    payload = bytes.fromhex(s.get("payload", ""))
    pad = (-len(payload)) % 4
    ext = b""
    if "reth" in s:
        r = s["reth"]
        ext += struct.pack(">QII", r["va"], r["rkey"], r["dmalen"])
    if "imm" in s:
        ext += struct.pack(">I", s["imm"])
    bth = BTH(
        opcode=s["opcode"],
        solicited=0,
        migreq=0,
        padcount=s.get("padcnt", pad),
        version=0,
        pkey=s.get("pkey", 0xFFFF),
        fecn=0,
        becn=0,
        dqpn=s["dqpn"],
        ackreq=1 if s.get("ackreq") else 0,
        psn=s["psn"],
    )
    udp = UDP(sport=s["sport"], dport=4791, chksum=0)
    if "udp_len_delta" in s:
        udp.len = 8 + 12 + len(ext) + len(payload) + pad + 4 + s["udp_len_delta"]
    p = (
        Ether(dst=s["dmac"], src=s["smac"])
        / IP(src=s["sip"], dst=s["dip"], ttl=64, flags="DF", id=0)
        / udp
        / bth
        / Raw(ext + payload + b"\x00" * pad)
    )
    b = bytearray(bytes(p))
    if s.get("bad_icrc"):
        b[-1] ^= 0x01
    return bytes(b)


def main():
    specs = json.load(sys.stdin)
    for s in specs:
        print(frame(s).hex())


if __name__ == "__main__":
    main()
