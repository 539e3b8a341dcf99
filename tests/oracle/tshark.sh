#!/usr/bin/env bash
# Structural oracle: Wireshark's own dissectors (tshark 4.0) over a capture.
# Usage: tshark.sh FILE.pcap
# Prints one line per frame (number, malformed marker, InfiniBand BTH opcode) and a summary;
# exits 1 if tshark fails or flags any frame as malformed, 2 on usage errors.
# The RPC-over-RDMA and Ethernet-over-InfiniBand heuristics are disabled so that RoCE payloads
# (perftest's are arbitrary bytes) are not guessed as RPC or as EoIB frames.
set -euo pipefail
if [ $# -ne 1 ] || [ ! -r "$1" ]; then
  echo "usage: tshark.sh FILE.pcap (readable)" >&2
  exit 2
fi
err=$(mktemp)
trap 'rm -f "$err"' EXIT
out=$(tshark -r "$1" --disable-heuristic rpcrdma_infiniband --disable-heuristic mellanox_eoib --disable-heuristic eth_over_ib -T fields -E separator=/t \
  -e frame.number -e _ws.malformed -e infiniband.bth.opcode 2>"$err") || {
  echo "tshark.sh: tshark failed on $1:" >&2
  grep -v 'Running as user' "$err" >&2 || true
  exit 1
}
printf '%s\n' "$out"
frames=$(printf '%s\n' "$out" | grep -c . || true)
roce=$(printf '%s\n' "$out" | awk -F'\t' '$3 != ""' | grep -c . || true)
malformed=$(printf '%s\n' "$out" | awk -F'\t' '$2 != ""' | grep -c . || true)
echo "frames $frames roce $roce malformed $malformed"
[ "$malformed" -eq 0 ]
