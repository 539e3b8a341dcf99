#!/usr/bin/env python3
"""Independent RoCE v2 ICRC oracle: shares no code with the RTL generator.

Usage: icrc.py FILE.pcap

For every frame of the capture prints one line `N ok`, `N bad` or `N skip` (N = frame number
from 1, as in tshark). RoCE v2 over IPv4 (UDP destination port 4791) frames are `ok` when their
trailing 4 bytes equal the ICRC computed twice: by scapy's RoCE layer (scapy.contrib.roce) and by
a direct implementation of IBTA Annex A17 with zlib.crc32. Other frames are `skip`; frames
shorter on file than on the wire are `bad`. Exits 1 if any frame is bad (2 on usage or file
errors).
"""
import struct
import sys
import warnings
import zlib

warnings.filterwarnings("ignore")  # scapy's optional crypto imports warn on newer cryptography

from scapy.contrib.roce import BTH  # noqa: E402
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.utils import PcapReader  # noqa: E402

ROCE_PORT = 4791


def spec_icrc(frame):
    """Annex A17, RoCE v2 over IPv4 (no IP options): CRC-32 over 8 bytes of 0xFF, then the
    IP header with TOS, TTL and checksum as ones, the UDP header with the checksum as ones, the
    BTH with byte 4 (FECN, BECN, resv6) as ones, then the rest up to the ICRC."""
    ihl = (frame[14] & 0x0F) * 4
    ip = bytearray(frame[14 : 14 + ihl])
    ip[1] = 0xFF  # TOS (DSCP + ECN)
    ip[8] = 0xFF  # TTL
    ip[10:12] = b"\xff\xff"  # header checksum
    udp = bytearray(frame[14 + ihl : 22 + ihl])
    udp[6:8] = b"\xff\xff"  # checksum
    rest = bytearray(frame[22 + ihl : -4])
    rest[4] = 0xFF  # BTH byte 4
    return zlib.crc32(b"\xff" * 8 + bytes(ip) + bytes(udp) + bytes(rest)) & 0xFFFFFFFF


def scapy_icrc(frame):
    p = Ether(frame)
    if BTH not in p:
        return None
    p[BTH].icrc = None  # scapy recomputes it when building
    built = bytes(p)
    if len(built) != len(frame) or built[:-4] != frame[:-4]:
        return None  # scapy did not rebuild the frame faithfully: do not trust its ICRC
    return struct.unpack("<I", built[-4:])[0]


def verdict(frame):
    try:
        p = Ether(frame)
        if IP not in p or UDP not in p or p[UDP].dport != ROCE_PORT:
            return "skip"
        if p[IP].version != 4 or len(frame) < 14 + p[IP].ihl * 4 + 8 + 12 + 4:
            return "bad"
        want = struct.unpack("<I", frame[-4:])[0]
        if spec_icrc(frame) == want and scapy_icrc(frame) == want:
            return "ok"
        return "bad"
    except Exception:  # malformed wire input is a bad frame, not a crash
        return "bad"


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    bad = 0
    try:
        with PcapReader(argv[1]) as rd:
            for n, pkt in enumerate(rd, start=1):
                frame = bytes(pkt)
                wirelen = getattr(pkt, "wirelen", None)
                # a frame cut short (snap length, truncated file) cannot be checked
                v = "bad" if wirelen is not None and wirelen != len(frame) else verdict(frame)
                bad += v == "bad"
                print(f"{n} {v}")
    except (OSError, EOFError) as e:
        print(f"icrc.py: {argv[1]}: {e}", file=sys.stderr)
        return 2
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
