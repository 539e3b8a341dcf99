#!/bin/sh
# /init of the interop guest (tests/interop/run.sh): rdma_rxe on eth0 (the wire to our
# simulated NIC), perftest's TCP over eth1 (QEMU user networking). Runs /cases in order, in
# lockstep with the host script: case K uses TCP port 19000+K. Prints "CASE K rc=N" per case
# and the tool's output as "CASE-OUT K ..." lines.
export PATH=/usr/local/bin:/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev; mount -t tmpfs tmp /tmp
mkdir -p /dev/pts /dev/shm
up() { cut -d' ' -f1 /proc/uptime; }
echo "MARK init uptime=$(up)"
KVER=$(cat /KVER)
while read -r m; do insmod /lib/modules/$KVER/$m || echo "insmod $m failed"; done < /modules.load
ip2 link set lo up
ip2 link set eth0 mtu 9000
ip2 addr add 10.0.0.1/24 dev eth0; ip2 link set eth0 up
ip2 addr add 10.0.2.15/24 dev eth1; ip2 link set eth1 up; ip2 route add default via 10.0.2.2 dev eth1
rdma link add rxe0 type rxe netdev eth0
sleep 2
ibv_devinfo -v | grep -E 'hca_id|fw_ver|active_mtu|GID\[' | sed 's/^/GUEST /'
echo "MARK ready uptime=$(up)"
TMO=$(sed -n 's/.*rnic\.timeout=\([0-9]*\).*/\1/p' /proc/cmdline); TMO=${TMO:-600}
K=0
while read -r DIR T M S N X; do
  P=$((19000 + K))
  if [ "$X" = NOTBUILT ]; then K=$((K + 1)); continue; fi
  A="-d rxe0 -x 1 -F -m $M -n $N -p $P"
  if [ "$X" = "-a" ]; then A="$A -a"; elif [ "${T#atomic_}" = "$T" ]; then A="$A -s $S"; fi
  [ "$X" = cas ] && A="$A -A CMP_AND_SWAP"   # atomics: perftest's size (8) is fixed
  if [ "$T" = data ]; then TOOL="rxe-check"; A="-m $M -s $S -n $N -p $P"; else TOOL="ib_$T"; fi
  [ "$X" = netem ] && tc2 qdisc add dev eth0 root netem loss 1%
  echo "MARK case $K $DIR $T uptime=$(up)"
  if [ "$DIR" = rxe2rnic ]; then
    # our server may not listen yet: retry while the TCP connect is refused
    i=0
    while :; do
      timeout $TMO $TOOL $A 10.0.2.2 > /tmp/out 2>&1; RC=$?
      if grep -q -E "Couldn't connect|Unable to init the socket|Connection refused" /tmp/out && [ $i -lt 300 ]; then
        i=$((i + 1)); sleep 1; continue
      fi
      break
    done
  else
    timeout $TMO $TOOL $A > /tmp/out 2>&1; RC=$?
  fi
  [ "$X" = netem ] && tc2 qdisc del dev eth0 root
  sed "s/^/CASE-OUT $K /" /tmp/out
  echo "CASE $K rc=$RC"
  K=$((K + 1))
done < /cases
echo "=== dmesg"; dmesg | grep -iE 'rxe|rdma|infiniband|error|warn|bug|oops' | tail -20
echo "MARK done uptime=$(up)"
poweroff -f
