#!/bin/bash
# rnic VFIO tests in a VM: a pinned Debian kernel booted in QEMU (TCG, q35, emulated Intel
# IOMMU) with QEMU's `edu` device; the guest binds it to vfio-pci and runs the rnic VFIO backend
# against it (tests/vm/guest). See docs/VFIO.md.
#
# usage: tests/vm/run.sh [ci|build|boot NAME|clean]
#   ci        build (cached) + boot "iommu" + boot "noiommu"; prints "vm: N passed, M failed";
#             exits non-zero on any failed or missing check
#   build     host packages, guest binaries, kernel, initramfs (each step cached)
#   boot NAME one VM run, NAME = iommu | noiommu; log in $W/logs/NAME.log
#   clean     remove the cache directory
# Cache: ${RNIC_VM_DIR:-/var/tmp/rnic-vm}. Every QEMU started here is killed by its PID.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
W=${RNIC_VM_DIR:-/var/tmp/rnic-vm}
# The kernel is pinned by package name, version and sha256 (Debian 12 "bookworm").
KPKG=${RNIC_VM_KPKG:-linux-image-6.1.0-57-amd64}
KVERSION=${RNIC_VM_KVERSION:-6.1.192-3}
KSHA256=${RNIC_VM_KSHA256:-14d219d01e1283261817d961dbb3895cb5b4288d0de10e0ba0632a0d993e15bf}
BOOT_TIMEOUT=${RNIC_VM_BOOT_TIMEOUT:-300}
TARGET_DIR=${RNIC_VM_TARGET:-$W/target}
MODULES="irqbypass vfio vfio_virqfd vfio_iommu_type1 vfio-pci-core vfio-pci"
mkdir -p "$W/logs" "$W/debs"
QEMU_PIDS=()
cleanup() { for p in "${QEMU_PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}'; }
log() { echo "vm: $*"; }

host_pkgs() {
  local miss=()
  command -v qemu-system-x86_64 >/dev/null || miss+=(qemu-system-x86)
  [ -x /bin/busybox ] || miss+=(busybox-static)
  command -v depmod >/dev/null || miss+=(kmod)
  command -v cpio >/dev/null || miss+=(cpio)
  if [ ${#miss[@]} -gt 0 ]; then
    log "installing ${miss[*]}"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${miss[@]}" >/dev/null
  fi
}

guest_bins() {   # rnic-vm-guest and the rnic CLI, glibc, optimized
  local t0; t0=$(now)
  CARGO_TARGET_DIR=$TARGET_DIR cargo build -q --release -j "${RNIC_VM_JOBS:-1}" \
    --manifest-path "$HERE/guest/Cargo.toml" -p rnic-vm-guest -p rnic --bins
  log "guest binaries ready ($(since "$t0") s)"
}

kernel() {   # pinned kernel package -> vmlinuz + modules.dep (cached)
  local deb=$W/debs/${KPKG}_${KVERSION}_amd64.deb
  if [ ! -f "$deb" ]; then
    log "downloading $KPKG=$KVERSION"
    ( cd "$W/debs" && apt-get download -q "$KPKG=$KVERSION" 2>&1 | grep -v -e unsandboxed -e '^Get:' || true )
    if [ ! -f "$deb" ]; then
      apt-get update -qq >/dev/null || true
      ( cd "$W/debs" && apt-get download -q "$KPKG=$KVERSION" 2>&1 | grep -v -e unsandboxed -e '^Get:' || true )
    fi
    [ -f "$deb" ] || { echo "vm: $KPKG=$KVERSION is not in the apt archive any more: pin a newer one (apt-cache depends linux-image-amd64) in RNIC_VM_KPKG/RNIC_VM_KVERSION/RNIC_VM_KSHA256 or in tests/vm/run.sh" >&2; exit 1; }
  fi
  echo "$KSHA256  $deb" | sha256sum -c --quiet - || { echo "vm: $deb does not match the pinned sha256" >&2; rm -f "$deb"; exit 1; }
  local K=$W/kernel-$KVERSION
  if [ ! -f "$K/.done" ]; then
    rm -rf "$K"; mkdir -p "$K"
    dpkg-deb -x "$deb" "$K/x"
    local kver; kver=$(ls "$K/x/lib/modules" | head -1)
    depmod -b "$K/x" "$kver"
    cp "$K/x/boot/vmlinuz-$kver" "$K/vmlinuz"
    echo "$kver" > "$K/KVER"
    touch "$K/.done"
  fi
  KDIR=$K
}

base_initramfs() {   # busybox + the vfio modules, cached per kernel
  local B=$W/base-$KVERSION.cpio.gz
  if [ ! -f "$B" ]; then
    local kver; kver=$(cat "$KDIR/KVER")
    local R=$W/base-root; rm -rf "$R"; mkdir -p "$R"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,proc,sys,dev,tmp,etc}
    cp /bin/busybox "$R/bin/busybox"
    for p in $(/bin/busybox --list-full); do
      [ -e "$R/$p" ] || { mkdir -p "$R/$(dirname "$p")"; ln -s /bin/busybox "$R/$p"; }
    done
    local MD=$KDIR/x/lib/modules/$kver order=()
    for m in $MODULES; do   # each module after its dependencies
      local line; line=$(grep -E "(^|/)$m\.ko(\.xz)?:" "$MD/modules.dep")
      for f in $(echo "${line#*:}" | tr ' ' '\n' | tac) "${line%%:*}"; do
        [[ " ${order[*]} " == *" $f "* ]] || order+=("$f")
      done
    done
    for f in "${order[@]}"; do mkdir -p "$R/lib/modules/$kver/$(dirname "$f")"; cp "$MD/$f" "$R/lib/modules/$kver/$f"; done
    printf '%s\n' "${order[@]}" > "$R/modules.load"
    echo "$kver" > "$R/KVER"
    echo "nobody:x:65534:65534:nobody:/:/bin/false" > "$R/etc/passwd"
    ( cd "$R" && find . | cpio -o -H newc --quiet | gzip -1 > "$B.tmp" ) && mv "$B.tmp" "$B"
    rm -rf "$R"
  fi
  BASE=$B
}

write_init() {
cat <<'EOF'
#!/bin/sh
export PATH=/usr/local/bin:/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev; mount -t tmpfs tmp /tmp
up() { cut -d' ' -f1 /proc/uptime; }
MODE=$(sed -n 's/.*rnic\.mode=\([a-z]*\).*/\1/p' /proc/cmdline)
echo "MARK init uptime=$(up) mode=$MODE"
run() { echo "=== rnic-vm-guest $1"; rnic-vm-guest "$@"; echo "guest-exit $1 $?"; }
bind() {  # vendor device: every match to vfio-pci
  for d in /sys/bus/pci/devices/*; do
    [ "$(cat $d/vendor)" = "0x$1" ] && [ "$(cat $d/device)" = "0x$2" ] || continue
    b=$(basename $d)
    [ -e $d/driver ] && echo $b > $d/driver/unbind
    echo vfio-pci > $d/driver_override
    echo $b > /sys/bus/pci/drivers_probe 2>/dev/null
    echo "bind $b: driver=$(basename "$(readlink $d/driver 2>/dev/null)" 2>/dev/null) group=$(basename "$(readlink $d/iommu_group 2>/dev/null)" 2>/dev/null)"
  done
}
[ "$MODE" = iommu ] && run novfio
KVER=$(cat /KVER)
while read -r m; do insmod /lib/modules/$KVER/$m || echo "insmod $m failed"; done < /modules.load
bind 1234 11e8
echo "MARK ready uptime=$(up)"
if [ "$MODE" = iommu ]; then run main; else run noiommu; fi
echo "=== dmesg: IOMMU faults"; dmesg | grep -E 'DMAR: \[DMA|fault addr|DRHD: handling' | head -6
echo "MARK done uptime=$(up)"
poweroff -f
EOF
}

initrd() {   # base + a small overlay (binaries, init): concatenated cpio archives
  local O=$W/overlay; rm -rf "$O"; mkdir -p "$O/usr/local/bin" "$O/lib64" "$O/lib/x86_64-linux-gnu"
  cp "$TARGET_DIR/release/rnic-vm-guest" "$TARGET_DIR/release/rnic" "$O/usr/local/bin/"
  for b in "$O"/usr/local/bin/*; do ldd "$b" | awk '/=>/ && $3 ~ /^\// {print $3} /^\t\/lib64/ {print $1}'; done | sort -u |
    while read -r lib; do
      case "$lib" in /lib64/*) cp -L "$lib" "$O/lib64/";; *) cp -L "$lib" "$O/lib/x86_64-linux-gnu/";; esac
    done
  write_init > "$O/init"; chmod +x "$O/init"
  ( cd "$O" && find . | cpio -o -H newc --quiet | gzip -1 > "$W/overlay.cpio.gz" )
  cat "$BASE" "$W/overlay.cpio.gz" > "$W/initrd.gz"
}

build() {
  local t0; t0=$(now)
  host_pkgs; guest_bins; kernel; base_initramfs; initrd
  log "build done ($(since "$t0") s)"
}

boot_start() {   # NAME: iommu | noiommu; starts QEMU in the background
  local name=$1 args=(-accel tcg -machine q35,kernel-irqchip=split -m 512 -smp 1 -nographic -no-reboot -nic none)
  [ "$name" = iommu ] && args+=(-device intel-iommu,intremap=on,caching-mode=on)   # before the devices it translates
  args+=(-device edu,addr=4 -device pci-testdev,addr=5
         -device pci-bridge,id=br1,chassis_nr=1,shpc=off,addr=6 -device edu,bus=br1,addr=1 -device pci-serial,bus=br1,addr=2)
  timeout -s KILL "$BOOT_TIMEOUT" qemu-system-x86_64 "${args[@]}" -kernel "$KDIR/vmlinuz" -initrd "$W/initrd.gz" \
    -append "console=ttyS0 quiet panic=-1 intel_iommu=on rnic.mode=$name" </dev/null >"$W/logs/$name.log" 2>&1 &
  QEMU_PIDS+=($!)
}

boot_wait() {   # wait for every QEMU started; report the guest's own time line
  local t0=$1; shift
  for p in "${QEMU_PIDS[@]}"; do wait "$p" || true; done
  QEMU_PIDS=()
  for name in "$@"; do
    log "boot $name: guest $(grep -a -o 'MARK done uptime=[0-9.]*' "$W/logs/$name.log" | cut -d= -f2 || echo '?') s uptime (log $W/logs/$name.log)"
  done
  log "boots: $(since "$t0") s wall"
}

tally() {   # prints the PASS/FAIL lines and the summary; returns non-zero on any failure
  local pass=0 fail=0 name mode
  for name in "$@"; do
    local f=$W/logs/$name.log
    grep -a -E '^(PASS|FAIL) ' "$f" | sed "s/^/  [$name] /" || true
    pass=$((pass + $(grep -a -c '^PASS ' "$f" || true)))
    fail=$((fail + $(grep -a -c '^FAIL ' "$f" || true)))
    case $name in iommu) modes="novfio main";; *) modes=noiommu;; esac
    if [ "$name" = iommu ]; then   # the blocked DMA must show up as an IOMMU fault in the guest kernel
      local faults; faults=$(grep -a -c 'DMAR: \[DMA Write.*fault addr' "$f" || true)
      if [ "$faults" -ge 1 ]; then echo "  [$name] PASS iommu-fault-logged: $faults DMAR write faults for the unmapped IOVAs"; pass=$((pass + 1))
      else echo "  [$name] FAIL iommu-fault-logged: no DMAR fault in the guest kernel log"; fail=$((fail + 1)); fi
    fi
    for mode in $modes; do   # a guest run that crashed or never ran is a failure
      if ! grep -aq "^guest-exit $mode 0" "$f"; then
        echo "  [$name] FAIL guest run '$mode' did not finish cleanly: $(grep -a "^guest-exit $mode" "$f" || echo 'no exit line')"
        fail=$((fail + 1))
      fi
    done
  done
  echo "vm: $pass passed, $fail failed"
  [ "$fail" = 0 ]
}

case "${1:-ci}" in
  build) build;;
  boot) build; t1=$(now); boot_start "${2:?boot iommu|noiommu}"; boot_wait "$t1" "$2"; tally "$2";;
  ci) t0=$(now); build; t1=$(now)
      # both VMs at once (one vCPU each); RNIC_VM_SERIAL=1 runs them one after the other
      boot_start iommu; [ -n "${RNIC_VM_SERIAL:-}" ] && boot_wait "$t1" iommu && t1=$(now)
      boot_start noiommu; if [ -n "${RNIC_VM_SERIAL:-}" ]; then boot_wait "$t1" noiommu; else boot_wait "$t1" iommu noiommu; fi
      rc=0; tally iommu noiommu || rc=1
      log "total $(since "$t0") s"; exit $rc;;
  clean) rm -rf "$W";;
  *) sed -n '2,14p' "$0"; exit 2;;
esac
