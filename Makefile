# rnic: thin dispatcher. The real work lives in cargo, scripts/ and hw/fpga/.
#   make run        the main job: two simulated NICs through the driver (after setup)
#   make test       everything CI runs: unit, block and system tests, VM tests, board checks + yosys
#   make verilog    build/verilog/rnic_top.v
#   make lint       verilator -Wall lint of rnic_top, cargo clippy, rustfmt check
#   make synth      yosys estimate of rnic_top (or of a board top with BOARD=au250|au55c)
#   make depth      yosys worst logic depth (ltp) per block of rnic_top, table in out/depth.md
#   make bench      simulated-cycle benchmarks (docs/BENCHMARKS.md)
#   make sim-ir     the simulator's machine instructions per simulated cycle (valgrind; exact)
#   make interop    Linux SoftRoCE (rdma_rxe) + unmodified perftest in a VM against our simulated NIC
#   make bitstream BOARD=au250|au55c   Vivado flow (needs Vivado)
#   make board-check                   Tcl syntax + XDC ports vs board tops
#   make regdoc     regenerate docs/REGISTERS.md from rnic-abi
#   make fresh-check   a fresh clone of HEAD in a temporary folder: setup + run, timed
#   QPS=16k         with verilog, lint-verilog, synth, bitstream: the 16k-QP build (cargo
#                   feature qps16k, rnic_abi::params::QPS16K; its own target dir and build/*-16k)
#   make test-16k   the system tests that span every QP, on the 16k-QP build (long)
SHELL := /bin/bash
CARGO ?= cargo
BOARD ?=
include hw/fpga/qps.mk
Q_ENV := $(if $(Q_TARGET),CARGO_TARGET_DIR=$(Q_TARGET))
# Python and Verilator come from the project's .venv, which scripts/setup.sh makes. Recipes
# that run them directly source scripts/env.sh when they run (never at parse time: before the
# first setup there is nothing to find), which sets RNIC_VENV and VERILATOR_ROOT; cargo finds
# them by itself (rnic_rtl::vlt::verilator_root, rnic_tests::python), so its recipes leave
# VERILATOR_ROOT alone (a change of it re-runs sim's build script).
ENV := source scripts/env.sh &&
# A line before the simulator's first build, which is long and would otherwise be silent.
MODEL_NOTE := @ls $${CARGO_TARGET_DIR:-target}/release/build/rnic-sim-*/out/vlt/stamp >/dev/null 2>&1 || \
  echo "first build of the simulator: the Rust crates, then rnic_top through Verilator (about a minute on its own); later runs start at once"

.PHONY: lint-verilog check-16k test-16k setup run test test-rust test-vm test-interop interop test-boards depth-check verilog lint synth depth bench sim-ir bitstream board-check regdoc fresh-check clean

setup:
	@bash scripts/setup.sh

run: setup
	$(MODEL_NOTE)
	$(CARGO) build --release -p rnic-sim --bin rnic-sim
	$(CARGO) run --release -q -p rnic-sim --bin rnic-sim -- run --pcap out/rnic-sim.pcap

test: setup test-rust test-vm test-interop board-check test-boards check-16k

test-rust:
	$(MODEL_NOTE)
	$(CARGO) test --release --workspace

test-vm:
	bash tests/vm/run.sh ci

# the small interop matrix (write_bw + send_bw + read_bw 4 KiB at MTU 1024, both directions); the full one: make interop
test-interop:
	bash tests/interop/run.sh small

interop: setup
	bash tests/interop/run.sh ci

# yosys synthesizes both board tops (vendor IP and rnic_top as black boxes)
test-boards:
	$(MAKE) -s -f hw/fpga/vivado.mk synth BOARD=au250
	$(MAKE) -s -f hw/fpga/vivado.mk synth BOARD=au55c
	$(MAKE) -s depth-check

# make depth's tool on two small blocks: each gets a measured row, and acktimer stays within
# the 8-LUT-level target (its max LUT levels, the table's last column)
depth-check: setup verilog
	DEPTH_OUT=build/depth-check DEPTH_MD=build/depth-check/depth.md bash scripts/depth.sh rnic_top_axil rnic_top_tmr
	awk -F'|' '$$2 ~ /rnic_top_(axil|tmr)/ { n++; split($$9, a, ":"); lv = a[1] + 0; \
	  if ($$3 !~ /[0-9]/ || a[1] !~ /[0-9]/) { print "depth-check: no numbers in" $$0; bad = 1 } \
	  if ($$2 ~ /tmr/ && lv > 8) { print "depth-check: acktimer at " lv " LUT levels (> 8)"; bad = 1 } } \
	  END { if (n != 2) { print "depth-check: " n " rows, want 2"; bad = 1 } exit bad }' build/depth-check/depth.md

verilog:
	$(Q_ENV) $(CARGO) run -q -p rnic-rtl $(Q_FEAT) --bin rnic-verilog -- build/verilog$(Q_SUF)

lint-verilog: setup verilog
	$(ENV) $(Q_ENV) "$$VERILATOR_ROOT/bin/verilator" --lint-only -Wall $$($(Q_ENV) $(CARGO) run -q -p rnic-rtl $(Q_FEAT) --bin rnic-verilog -- --waivers) --top-module rnic_top build/verilog$(Q_SUF)/rnic_top.v

# the 16k-QP build generates and passes the same Verilator -Wall lint (in make test)
check-16k:
	$(MAKE) -s lint-verilog QPS=16k

# the system tests that span every QP (4 KiB and 64 B WRITEs and 64 B READs over all 16,382
# pairs; one deep-ring QP at line rate) on the 16k-QP build's simulator
test-16k: setup
	$(MAKE) -s QPS=16k _test-16k
_test-16k:
	$(Q_ENV) $(CARGO) test --release -p rnic-tests $(Q_FEAT) --test allqps --test rdma -- --nocapture

lint: setup lint-verilog
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) fmt --all --check

synth: setup
ifeq ($(BOARD),)
	$(MAKE) -s verilog
	bash scripts/synth.sh build/verilog$(Q_SUF)/rnic_top.v build/synth$(Q_SUF)
else
	$(MAKE) -f hw/fpga/vivado.mk synth BOARD=$(BOARD) QPS=$(QPS)
endif

# worst logic depth per block (yosys synth_xilinx + ltp -noff), a table in out/depth.md; one
# block: make depth BLOCKS=rnic_top_txq; with rnic_top itself (long): make depth DEPTH_TOP=1
depth: setup verilog
	bash scripts/depth.sh $(BLOCKS)

bench: setup
	$(MODEL_NOTE)
	$(CARGO) build --release -p rnic-sim --bin rnic-sim
	$(CARGO) run --release -q -p rnic-sim --bin rnic-sim -- bench

sim-ir: setup
	$(MODEL_NOTE)
	$(CARGO) build --release -p rnic-sim --bin rnic-sim
	bash scripts/sim-ir.sh

bitstream:
	$(MAKE) -f hw/fpga/vivado.mk bitstream BOARD=$(BOARD) QPS=$(QPS)

board-check: setup
	bash hw/fpga/check.sh

# a newcomer's first run: a fresh clone of HEAD in an empty temporary folder (no .venv, no
# target dir, nothing beside it), its own `make setup`, then `make run`; prints the time
fresh-check:
	bash scripts/fresh-check.sh

regdoc:
	$(CARGO) run -q -p rnic-abi --bin rnic-regdoc

clean:
	rm -rf build out
	$(CARGO) clean
