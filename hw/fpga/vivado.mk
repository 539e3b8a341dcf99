# Board builds. Called from the top-level Makefile:
#   make bitstream BOARD=au250|au55c   Vivado: IP, synthesis, implementation, reports, bitstream
#   make synth BOARD=au250|au55c       yosys estimate of the board top (no Vivado needed)
#   make board-check                   Tcl syntax + XDC ports vs board tops (no Vivado needed)
#   QPS=16k with bitstream/synth: the 16k-QP build (cargo feature qps16k; BAR2 16 MiB)
# Outputs go to build/<board>/ (build/<board>-16k/ for QPS=16k).
VIVADO_VERSION := 2023.2
BOARDS := au250 au55c
BOARD ?=
JOBS ?= 2
REPO := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/../..)
include $(REPO)/hw/fpga/qps.mk
ifneq ($(Q_TARGET),)
export CARGO_TARGET_DIR ?= $(Q_TARGET)
endif
OUT := $(REPO)/build/$(BOARD)$(Q_SUF)
VDIR := $(OUT)/verilog
CARGO ?= cargo
export CARGO_TARGET_DIR ?= $(REPO)/target

.PHONY: bitstream synth verilog board-check check-board-arg check-vivado

check-board-arg:
	@case " $(BOARDS) " in *" $(BOARD) "*) ;; *) \
	  echo "error: BOARD must be one of: $(BOARDS) (got '$(BOARD)')"; exit 2;; esac

check-vivado:
	@command -v vivado >/dev/null 2>&1 || { \
	  echo "error: 'make bitstream' needs AMD Vivado $(VIVADO_VERSION) (the version these scripts target)"; \
	  echo "       on PATH: install it with UltraScale+ device support and source its settings64.sh."; \
	  echo "       The XDMA IP needs no license; the 100G MAC (CMAC USPLUS) needs the no-charge"; \
	  echo "       CMAC license key from AMD. No Vivado here: run 'make synth BOARD=$(BOARD)'"; \
	  echo "       for an open yosys estimate and 'make board-check' for the constraint checks."; \
	  exit 1; }
	@v=$$(vivado -version 2>/dev/null | head -1); case "$$v" in *v$(VIVADO_VERSION)*) ;; \
	  *) echo "warning: found '$$v', scripts written for Vivado $(VIVADO_VERSION)";; esac

# Generated inputs: the engine, the CDC blocks, the PCIe identity from rnic-abi.
verilog: check-board-arg
	@mkdir -p $(VDIR)
	$(CARGO) run -q -p rnic-rtl $(Q_FEAT) --bin rnic-verilog -- $(VDIR)
	$(CARGO) run -q -p rnic-abi $(Q_FEAT) --bin rnic-pcie-tcl -- $(OUT)/pcie_ids.tcl

bitstream: check-board-arg check-vivado verilog
	cd $(OUT) && vivado -mode batch -nojournal -log $(OUT)/vivado.log \
	  -source $(REPO)/hw/fpga/build.tcl -tclargs $(BOARD) $(OUT) $(JOBS)

synth: check-board-arg verilog
	bash $(REPO)/hw/fpga/synth.sh $(BOARD) $(OUT)

board-check:
	bash $(REPO)/hw/fpga/check.sh
