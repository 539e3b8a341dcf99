# The build's QP count, for the top-level Makefile and hw/fpga/vivado.mk alike:
#   QPS=     the standard 2048-QP build
#   QPS=16k  the 16k-QP build: the cargo feature qps16k (rnic_abi::params::QPS16K), its own
#            cargo target dir (so the standard build's stays) and outputs suffixed -16k
QPS ?=
Q_REPO := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/../..)
ifeq ($(QPS),16k)
Q_FEAT := --features qps16k
Q_SUF := -16k
Q_TARGET := $(Q_REPO)/target/qps16k
else ifneq ($(QPS),)
$(error QPS must be empty (the standard 2048-QP build) or 16k, not '$(QPS)')
endif
