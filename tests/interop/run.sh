#!/bin/bash
# Live interop: Linux SoftRoCE (rdma_rxe) with unmodified perftest in a QEMU guest against our
# simulated NIC (rnic-perf, Verilated RTL). The guest's eth0 is a QEMU dgram netdev whose far
# end is the simulated NIC's MAC port (rnic-perf --ext udp:...); perftest's TCP exchange goes
# through a user-mode NIC (eth1): the guest reaches our servers at 10.0.2.2:19000+k, we reach
# its servers at 127.0.0.1:20000+k (hostfwd). One VM boot runs the whole matrix, case by case in
# lockstep with this script. See docs/INTEROP.md.
#
# usage: tests/interop/run.sh [ci|small|atomic|build|case-list|clean]
#   ci      build (cached) + the full matrix; prints one line per case and
#           "interop: N passed, M failed"; exits non-zero on any failure
#   small   the same with the small matrix of `make test`
#   atomic  the same with only the atomic cases (atomic_bw, atomic_lat; both directions)
#   build   host packages, guest packages (pinned), kernel, initramfs, rnic-perf, the checker
#   clean   remove the cache directory
# Cache: ${RNIC_INTEROP_DIR:-/var/tmp/rnic-interop}; captures and logs: out/interop/.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
W=${RNIC_INTEROP_DIR:-/var/tmp/rnic-interop}
OUT=${RNIC_INTEROP_OUT:-$ROOT/out/interop}
PY=${PYTHON:-}
if [ -z "$PY" ]; then if [ -x "$ROOT/.venv/bin/python" ]; then PY=$ROOT/.venv/bin/python; else PY=python3; fi; fi
CARGO_TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
PERF=$CARGO_TARGET/release/rnic-perf
GPORT=${RNIC_INTEROP_GPORT:-17011}   # guest side of the dgram netdev
HPORT=${RNIC_INTEROP_HPORT:-17010}   # our NIC's side
CASE_TIMEOUT=${RNIC_INTEROP_CASE_TIMEOUT:-600}
# The cable: "stream" (default): QEMU listens on a Unix stream socket, each rnic-perf connects,
# lossless (the stream pauses while QEMU is slow to read); "dgram": UDP datagrams, which the
# kernel drops when QEMU's socket buffer overflows under a burst (a lossy wire, which both
# sides' retransmission must recover).
NET=${RNIC_INTEROP_NET:-stream}
# Debian 12 "bookworm" packages, pinned by version and sha256. The kernel is the one tests/vm
# pins. When a pinned version has left the archive the current one is used and reported.
PINS="
linux-image-6.1.0-57-amd64 6.1.192-3 14d219d01e1283261817d961dbb3895cb5b4288d0de10e0ba0632a0d993e15bf
rdma-core 44.0-2 c2451f269d558cc92f05d8280b08b25cd3e03a6a4916c4c91005cb9618458439
ibverbs-providers 44.0-2 3c9907fd96a4ae7effb5faa178bd3648344a521f6bcca2c23c9f2dd214cf1192
libibverbs1 44.0-2 35054815259fee46173240254246d03b673a5cd5c528aaac96fd15ac428a8d59
libibverbs-dev 44.0-2 78e87d12fb642bc41b04cb2e2f3f2f23cee14b89978a846b83defe945f388f72
librdmacm1 44.0-2 16b18625834371d023b81477823074ea0d34c478d58dbef3f01107984f47d034
ibverbs-utils 44.0-2 610423d011908d21d8bbda185af96d63cd8b3b8a90ab187e0992253eae249049
perftest 4.5+0.17-1 d5bb8f968762295021e89548b983953787047676a406cc38f98559cc5332fcdb
libnl-3-200 3.7.0-0.2+b1 d1fc3e9eb8e79b4c96b0a64c3d8c9e068ae2f665cab71bd19f417ffd0453a890
libnl-route-3-200 3.7.0-0.2+b1 0fdcc425ae2982788c085c76a7cb0eda3e3db99d41bd1ce56082ee18e9f1e21f
libpci3 1:3.9.0-4 75519023eb1f0cdc556709b109765e2ea36f6e5c66b8ca94cec45843b3e3bee7
iproute2 6.1.0-3 1204b29e916e836267096d0b9d778106752f821ebde0d281539008b4386d9070
libibumad3 44.0-2 0297f4f6a29d7870ea3c8c85b2b2bddce2b665a6e7b17114dce82a5087442a32
libmnl0 1.0.4-3 4581f42e3373cb72f9ea4e88163b17873afca614a6c6f54637e95aa75983ea7c
libbpf1 1:1.1.2-0+deb12u1 5e7505ef77ebc84ad0203411e4afdeb8a98f40fb7f78f013aa4dd8710e49f8ed
libelf1 0.188-2.1 619add379c606b3ac6c1a175853b918e6939598a83d8ebadf3bdfd50d10b3c8c
libcap2 1:2.66-4+deb12u3+b1 8d684c673e7483802a5c447834b0df6fce006eb3a7109e1be412f5ad425bb24f
libbsd0 0.11.7-2 bb31cc8b40f962a85b2cec970f7f79cc704a1ae4bad24257a822055404b2c60b
libmd0 1.0.4-2 03539fd30c509e27101d13a56e52eda9062bdf1aefe337c07ab56def25a13eab
libxtables12 1.8.9-2 cb841d66950a43af4a398625313d2f3da9065299c9738538de6c2c3495857040
"
# RNIC_INTEROP_KPIN="NAME VERSION SHA256" replaces the kernel's pin (e.g. to try the fallback)
if [ -n "${RNIC_INTEROP_KPIN:-}" ]; then PINS="$RNIC_INTEROP_KPIN
$(echo "$PINS" | grep -v '^linux-image-')"; fi
MODULES="crc32_generic virtio_pci virtio_net ib_core ib_uverbs udp_tunnel ip6_udp_tunnel rdma_rxe sch_netem"
mkdir -p "$W/logs" "$W/debs" "$OUT"
QEMU_PID=
PERF_PID=
cleanup() {
  [ -n "$PERF_PID" ] && kill "$PERF_PID" 2>/dev/null || true
  [ -n "$QEMU_PID" ] && kill -9 "$QEMU_PID" 2>/dev/null || true
}
trap cleanup EXIT
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}'; }
log() { echo "interop: $*"; }

host_pkgs() {
  local miss=()
  command -v qemu-system-x86_64 >/dev/null || miss+=(qemu-system-x86)
  [ -x /bin/busybox ] || miss+=(busybox-static)
  command -v depmod >/dev/null || miss+=(kmod)
  command -v cpio >/dev/null || miss+=(cpio)
  command -v gcc >/dev/null || miss+=(gcc libc6-dev)
  command -v tshark >/dev/null || miss+=(tshark)
  if [ ${#miss[@]} -gt 0 ]; then
    log "installing ${miss[*]}"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${miss[@]}" >/dev/null
  fi
}

fetch() {   # NAME VERSION SHA256 -> $W/debs/..., pinned, else the archive's current version
  local name=$1 ver=$2 sha=$3 f
  f=$(ls "$W/debs/${name}_${ver#*:}_"*.deb 2>/dev/null | head -1 || true)
  [ -z "$f" ] && f=$(ls "$W/debs/${name}_$(printf %s "$ver" | sed 's/:/%3a/')_"*.deb 2>/dev/null | head -1 || true)
  if [ -z "$f" ]; then
    ( cd "$W/debs" && apt-get download -q "$name=$ver" 2>&1 | grep -v -e unsandboxed -e '^Get:' -e '^Fetched' >&2 || true )
    if ! ls "$W/debs/${name}_"*.deb >/dev/null 2>&1; then
      apt-get update -qq >/dev/null 2>&1 || true
      ( cd "$W/debs" && apt-get download -q "$name=$ver" 2>&1 | grep -v -e unsandboxed -e '^Get:' -e '^Fetched' >&2 || true )
    fi
    f=$(ls "$W/debs/${name}_"*.deb 2>/dev/null | head -1 || true)
  fi
  if [ -n "$f" ] && echo "$sha  $f" | sha256sum -c --quiet - 2>/dev/null; then echo "$f"; return; fi
  if [ -n "$f" ]; then log "WARNING: $f does not match the pinned sha256: removed" >&2; rm -f "$f"; fi
  # the pinned version is gone: fall back to the current one, and say so
  if [ "${name#linux-image-}" != "$name" ]; then
    name=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-6/{print $2; exit}')
  fi
  ( cd "$W/debs" && apt-get download -q "$name" 2>&1 | grep -v -e unsandboxed -e '^Get:' -e '^Fetched' >&2 || true )
  f=$(ls -t "$W/debs/${name}_"*.deb 2>/dev/null | head -1 || true)
  [ -n "$f" ] || { log "cannot download $name" >&2; exit 1; }
  echo "FALLBACK $1=$2 is not in the archive: using $(basename "$f") sha256 $(sha256sum "$f" | cut -c1-64)" | tee -a "$W/FALLBACK" >&2
  echo "$f"
}

stage() {   # every pinned package unpacked into $W/stage
  local S=$W/stage key
  key=$(echo "$PINS" | sha256sum | cut -c1-16)
  if [ -f "$S/.done" ] && [ "$(cat "$S/.done")" = "$key" ]; then return; fi
  rm -rf "$S" "$W/FALLBACK"; mkdir -p "$S"
  echo "$PINS" | while read -r name ver sha; do
    [ -n "$name" ] || continue
    dpkg-deb -x "$(fetch "$name" "$ver" "$sha")" "$S"
  done
  local kver; kver=$(ls "$S/lib/modules" | head -1)
  depmod -b "$S" "$kver"
  echo "$kver" > "$W/KVER"
  cp "$S/boot/vmlinuz-$kver" "$W/vmlinuz"
  echo "$key" > "$S/.done"
}

checker() {   # tests/interop/rxe_check.c against the staged libibverbs
  local S=$W/stage
  gcc -O2 -Wall -o "$W/rxe-check" "$HERE/rxe_check.c" -I"$S/usr/include" \
    -L"$S/usr/lib/x86_64-linux-gnu" -Wl,-rpath-link,"$S/usr/lib/x86_64-linux-gnu" -libverbs
}

initramfs() {
  local S=$W/stage R=$W/root kver; kver=$(cat "$W/KVER")
  rm -rf "$R"; mkdir -p "$R"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,proc,sys,dev,tmp,run,etc/libibverbs.d,lib64,lib/x86_64-linux-gnu,usr/lib/x86_64-linux-gnu/libibverbs}
  cp /bin/busybox "$R/bin/busybox"
  for p in $(/bin/busybox --list-full); do
    [ -e "$R/$p" ] || { mkdir -p "$R/$(dirname "$p")"; ln -s /bin/busybox "$R/$p"; }
  done
  local MD=$S/lib/modules/$kver order=()
  for m in $MODULES; do
    local line; line=$(grep -E "(^|/)$m\.ko(\.xz)?:" "$MD/modules.dep")
    for f in $(echo "${line#*:}" | tr ' ' '\n' | tac) "${line%%:*}"; do
      [[ " ${order[*]} " == *" $f "* ]] || order+=("$f")
    done
  done
  for f in "${order[@]}"; do mkdir -p "$R/lib/modules/$kver/$(dirname "$f")"; cp "$MD/$f" "$R/lib/modules/$kver/$f"; done
  printf '%s\n' "${order[@]}" > "$R/modules.load"
  echo "$kver" > "$R/KVER"
  for b in ib_write_bw ib_send_bw ib_write_lat ib_send_lat ib_read_bw ib_read_lat ib_atomic_bw ib_atomic_lat ibv_devinfo rdma; do
    cp "$S/usr/bin/$b" "$R/usr/local/bin/"
  done
  cp "$S/bin/ip" "$R/usr/local/bin/ip2"     # busybox's sh prefers its own applets: named apart
  cp "$S/sbin/tc" "$R/usr/local/bin/tc2"
  cp "$W/rxe-check" "$R/usr/local/bin/"
  cp "$S"/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so "$R/usr/lib/x86_64-linux-gnu/libibverbs/"
  cp "$S/etc/libibverbs.d/rxe.driver" "$R/etc/libibverbs.d/"
  export LD_LIBRARY_PATH="$S/usr/lib/x86_64-linux-gnu:$S/lib/x86_64-linux-gnu"
  for b in "$R"/usr/local/bin/* "$R"/usr/lib/x86_64-linux-gnu/libibverbs/*.so; do
    ldd "$b" | awk '/=>/ && $3 ~ /^\// {print $3} /^\t\/lib64/ {print $1}'
  done | sort -u | while read -r lib; do
    case "$lib" in /lib64/*) cp -L "$lib" "$R/lib64/";; *) cp -L "$lib" "$R/lib/x86_64-linux-gnu/";; esac
  done
  unset LD_LIBRARY_PATH
  cp "$W/cases" "$R/cases"
  cp "$HERE/guest-init.sh" "$R/init"; chmod +x "$R/init"
  ( cd "$R" && find . | cpio -o -H newc --quiet | gzip -1 > "$W/initrd.gz" )
}

perf_bin() {
  ( cd "$ROOT" && cargo build -q --release -p rnic-sim --bin rnic-perf )
}

# The matrix: "DIR TEST MTU SIZE ITERS EXTRA"; DIR rxe2rnic = rxe client -> our server,
# rnic2rxe = our client -> rxe server. NOTBUILT lines are reported, not run.
matrix() {
  local kind=$1 dir t m s n
  if [ "$kind" = atomic ]; then atomics; return; fi
  if [ "$kind" = small ]; then
    for dir in rxe2rnic rnic2rxe; do
      for t in write_bw send_bw read_bw; do echo "$dir $t 1024 4096 20 -"; done
      echo "$dir atomic_bw 1024 8 50 -"
    done
    return
  fi
  for dir in rxe2rnic rnic2rxe; do
    for t in write_bw send_bw read_bw write_lat send_lat read_lat; do
      for m in 1024 4096; do
        for s in 1 64 4096 65536; do
          case $t in *_lat) n=50;; *) n=$([ "$s" -ge 65536 ] && echo 20 || echo 50);; esac
          echo "$dir $t $m $s $n -"
        done
      done
    done
    echo "$dir write_bw 4096 0 5 -a"
    echo "$dir data 1024 4096 8 -"
    echo "$dir data 4096 65536 4 -"
    echo "$dir write_bw 1024 65536 20 netem"
  done
  atomics
}

atomics() {   # perftest's atomics (8 B): FETCH_AND_ADD (default) and -A CMP_AND_SWAP ("cas")
  local dir
  for dir in rxe2rnic rnic2rxe; do
    echo "$dir atomic_bw 1024 8 50 -"
    echo "$dir atomic_bw 4096 8 50 cas"
    echo "$dir atomic_lat 1024 8 50 -"
    echo "$dir atomic_lat 4096 8 50 cas"
  done
}

build() {
  local t0; t0=$(now)
  host_pkgs; stage; checker; perf_bin
  log "build done ($(since "$t0") s)"
}

guest_line() {   # K: wait for the guest's "CASE K rc=N" line, print N (or "timeout")
  local k=$1 t=0 l
  while [ $t -lt $((CASE_TIMEOUT * 10)) ]; do
    l=$(grep -a -m1 "^CASE $k rc=" "$W/logs/guest.log" 2>/dev/null || true)
    if [ -n "$l" ]; then echo "${l##*rc=}" | tr -d '\r'; return; fi
    kill -0 "$QEMU_PID" 2>/dev/null || { echo "vm-gone"; return; }
    sleep 0.1; t=$((t + 1))
  done
  echo timeout
}

oracles() {   # PCAP -> "" when both pass, else the reasons
  local p=$1 why=""
  bash "$ROOT/tests/oracle/tshark.sh" "$p" > "$p.tshark" 2>&1 || why="tshark: $(tail -1 "$p.tshark")"
  "$PY" "$ROOT/tests/oracle/icrc.py" "$p" > "$p.icrc" 2>&1 || why="$why icrc: $(grep -c ' bad' "$p.icrc" || true) bad"
  echo "$why"
}

run_matrix() {
  local kind=$1 t0; t0=$(now)
  matrix "$kind" > "$W/cases"
  initramfs
  rm -rf "$OUT"; mkdir -p "$OUT"; : > "$OUT/verdicts.tsv"
  local fwd="" k=0
  while read -r dir t m s n x; do fwd="$fwd,hostfwd=tcp:127.0.0.1:$((20000 + k))-:$((19000 + k))"; k=$((k + 1)); done < "$W/cases"
  : > "$W/logs/guest.log"
  local NETDEV EXT
  if [ "$NET" = dgram ]; then
    NETDEV="dgram,id=d0,local.type=inet,local.host=127.0.0.1,local.port=$GPORT,remote.type=inet,remote.host=127.0.0.1,remote.port=$HPORT"
    EXT="udp:$HPORT:$GPORT"
  else
    rm -f "$W/nic.sock"
    NETDEV="stream,id=d0,server=on,addr.type=unix,addr.path=$W/nic.sock"
    EXT="unix-connect:$W/nic.sock"
  fi
  timeout -s KILL 7200 qemu-system-x86_64 -accel tcg -m 1024 -smp 1 -nographic -no-reboot \
    -kernel "$W/vmlinuz" -initrd "$W/initrd.gz" -append "console=ttyS0 quiet panic=-1 rnic.timeout=$((CASE_TIMEOUT - 10))" \
    -netdev "$NETDEV" \
    -device virtio-net-pci,netdev=d0,mac=52:54:00:12:34:01 \
    -netdev "user,id=u0$fwd" -device virtio-net-pci,netdev=u0,mac=52:54:00:aa:00:01 \
    </dev/null > "$W/logs/guest.log" 2>&1 &
  QEMU_PID=$!
  local pass=0 fail=0 nb=0 res=()
  k=0
  while read -r dir t m s n x; do
    local name; name=$(printf '%02d-%s-%s-m%s-s%s%s' "$k" "$dir" "$t" "$m" "$s" "$([ "$x" = - ] && echo || echo "-${x#-}")")
    if [ "$x" = NOTBUILT ]; then
      local msg; msg=$("$PERF" "$t" --ext udp:$HPORT:$GPORT 2>&1 >/dev/null || true)
      echo "NOT BUILT $name: $msg"; nb=$((nb + 1)); k=$((k + 1)); continue
    fi
    local pcap=$OUT/$name.pcap
    local args=(-m "$m" -n "$n" --ext "$EXT" --ip 10.0.0.2 --pcap "$pcap" --json)
    local pt=$t; [ "$t" = data ] && { pt=send_bw; [ "$dir" = rxe2rnic ] && args+=(--verify); }
    if [ "$x" = -a ]; then args+=(-a); elif [ "${t#atomic_}" = "$t" ]; then args+=(-s "$s"); fi
    # atomics: the same -A on both sides; rnic-perf checks every original value as client,
    # the executed count against its words as server
    if [ "${t#atomic_}" != "$t" ]; then args+=(--verify); [ "$x" = cas ] && args+=(-A CMP_AND_SWAP); fi
    local c0; c0=$(now)
    if [ "$dir" = rxe2rnic ]; then
      timeout "$CASE_TIMEOUT" "$PERF" "$pt" -p $((19000 + k)) "${args[@]}" > "$OUT/$name.log" 2>&1 &
    else
      timeout "$CASE_TIMEOUT" "$PERF" "$pt" 127.0.0.1 -p $((20000 + k)) --connect-wait 300 "${args[@]}" > "$OUT/$name.log" 2>&1 &
    fi
    PERF_PID=$!
    local prc=0; wait "$PERF_PID" || prc=$?
    PERF_PID=
    local grc; grc=$(guest_line "$k")
    sed -n "/^CASE-OUT $k /s/^CASE-OUT $k //p" "$W/logs/guest.log" > "$OUT/$name.guest.log"
    local why=""
    [ "$prc" = 0 ] || why="rnic-perf exit $prc: $(grep -a 'error' "$OUT/$name.log" | tail -1)"
    [ "$grc" = 0 ] || why="$why guest exit $grc: $(grep -a -i -E 'error|fail|couldn|unable|invalid' "$OUT/$name.guest.log" | head -2 | tr '\n' ' ')"
    if [ "${t#atomic_}" != "$t" ] && [ "$prc" = 0 ]; then   # rnic-perf's atomic check ran
      grep -a -q -E '^ atomics: .*checked: ok' "$OUT/$name.log" || why="$why atomics: rnic-perf did not check"
    fi
    if [ "$t" = data ]; then   # the data oracle must have compared every message
      if [ "$dir" = rxe2rnic ]; then
        grep -a -q "data: $n messages compared byte by byte: ok" "$OUT/$name.log" || why="$why data: rnic-perf did not compare $n messages"
      else
        grep -a -q "rxe-check: $n messages of $s bytes ok (compared byte by byte)" "$OUT/$name.guest.log" || why="$why data: rxe-check did not compare $n messages"
      fi
    fi
    [ -s "$pcap" ] || why="$why no capture"
    local summary ours theirs
    ours=$(grep -a -E '^ [0-9]+ ' "$OUT/$name.log" | tail -1 | awk '{$1=$1; print}')
    theirs=$(grep -a -E '^ *[0-9]+ +[0-9]+ +[0-9.]+' "$OUT/$name.guest.log" | tail -1 | awk '{$1=$1; print}')
    summary="rnic-perf [$ours] perftest [$theirs]"
    [ "$t" = data ] && summary="$(grep -a -h -E 'rxe-check:|data:' "$OUT/$name.log" "$OUT/$name.guest.log" | tr '\n' ' ')"
    [ "${t#atomic_}" != "$t" ] && summary="$summary $(grep -a -h -E '^ atomics:' "$OUT/$name.log" | tr '\n' ' ')"
    printf '%s\037%s\037%s\037%s\037%s\n' "$name" "$x" "$(since "$c0")" "$why" "$summary" >> "$OUT/verdicts.tsv"
    echo "ran $name ($(since "$c0") s)${why:+: $why}" >&2
    k=$((k + 1))
  done < "$W/cases"
  sleep 1; kill -9 "$QEMU_PID" 2>/dev/null || true; QEMU_PID=
  cp "$W/logs/guest.log" "$OUT/guest.log"
  # the oracles after the guest is done (a large capture takes minutes in scapy)
  local o0; o0=$(now)
  while IFS=$'\037' read -r name x secs why summary; do
    local pcap=$OUT/$name.pcap
    if [ -s "$pcap" ]; then local o; o=$(oracles "$pcap"); [ -z "$o" ] || why="$why oracles: $o"; fi
    if [ -z "$why" ]; then
      echo "PASS $name ($secs s) $summary"; pass=$((pass + 1))
    elif [ "$x" = netem ]; then
      echo "NOT BUILT $name: loss needs retransmission (another issue): $why"; nb=$((nb + 1))
    else
      echo "FAIL $name ($secs s): $why"; fail=$((fail + 1))
    fi
  done < "$OUT/verdicts.tsv"
  log "oracles $(since "$o0") s"
  [ -f "$W/FALLBACK" ] && cat "$W/FALLBACK"
  log "matrix $(since "$t0") s; captures in $OUT"
  echo "interop: $nb not built (reported, not counted)"
  echo "interop: $pass passed, $fail failed"
  [ "$fail" = 0 ]
}

case "${1:-ci}" in
  build) build;;
  ci) t0=$(now); build; rc=0; run_matrix full || rc=1; log "total $(since "$t0") s"; exit $rc;;
  small) t0=$(now); build; rc=0; run_matrix small || rc=1; log "total $(since "$t0") s"; exit $rc;;
  atomic) t0=$(now); build; rc=0; run_matrix atomic || rc=1; log "total $(since "$t0") s"; exit $rc;;
  case-list) matrix "${2:-full}";;
  clean) rm -rf "$W";;
  *) sed -n '2,17p' "$0"; exit 2;;
esac
