#!/usr/bin/env bash
# Board checks that need no Vivado:
#   1. every Tcl script under hw/fpga parses (tclsh: complete commands, balanced braces);
#   2. every port an XDC constrains exists, with a valid index, in that board's top module.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
command -v tclsh >/dev/null || { echo "check.sh: tclsh not found (apt-get install tcl)" >&2; exit 2; }
source "$repo/scripts/env.sh"  # the project's Python (.venv)
tclsh "$here/tcl_syntax.tcl" "$here"/*.tcl "$here"/*/*.tcl "$repo"/constraints/*/*.xdc "$here"/common/*.xdc
"$RNIC_VENV/bin/python" "$here/check_xdc_ports.py" \
  "$repo/constraints/au250/rnic_au250.xdc=$here/au250/rnic_au250_top.v:rnic_au250_top" \
  "$repo/constraints/au55c/rnic_au55c.xdc=$here/au55c/rnic_au55c_top.v:rnic_au55c_top"
