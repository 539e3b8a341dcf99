# Non-project Vivado flow for one board: vendor IP, synthesis, implementation, reports,
# bitstream. Run through hw/fpga/vivado.mk (`make bitstream BOARD=au250`), which prepares
#   <out>/verilog/rnic_top.v      (rnic-verilog)
#   <out>/verilog/rnic_cdc_*.v, rnic_reset_sync.v (rust-hdl CDC blocks)
#   <out>/pcie_ids.tcl            (rnic-pcie-tcl, from rnic-abi)
# Usage: vivado -mode batch -source hw/fpga/build.tcl -tclargs <board> <out_dir> [jobs]
# Tested Vivado version: see RNIC_VIVADO_VERSION below (the IP versions follow from it).
set RNIC_VIVADO_VERSION 2023.2

lassign $argv board_name out_dir jobs
if {$board_name eq "" || $out_dir eq ""} { error "usage: build.tcl <board> <out_dir> \[jobs\]" }
if {$jobs eq ""} { set jobs 2 }
set here [file normalize [file dirname [info script]]]
set repo [file normalize [file join $here .. ..]]
set out_dir [file normalize $out_dir]
set ip_dir [file join $out_dir ip]
file mkdir $out_dir $ip_dir

set running [version -short]
if {![string match "${RNIC_VIVADO_VERSION}*" $running]} {
    puts "WARNING: this flow was written for Vivado $RNIC_VIVADO_VERSION, running $running;\
          IP parameter names may differ"
}

source [file join $here $board_name board.tcl]
source [file join $out_dir pcie_ids.tcl]
source [file join $here ip_util.tcl]

create_project -in_memory -part $board(part)
set_property target_language Verilog [current_project]

# ---- vendor IP
source [file join $here ip_xdma.tcl]
source [file join $here ip_cmac.tcl]
foreach ip {rnic_xdma rnic_cmac} {
    generate_target all [get_ips $ip]
    synth_ip [get_ips $ip]
}

# ---- sources
read_verilog [file join $out_dir verilog rnic_top.v]
foreach f {rnic_cdc_axis_tx.v rnic_cdc_axis_rx.v rnic_reset_sync.v} {
    read_verilog [file join $out_dir verilog $f]
}
read_verilog [file join $here common rnic_bar_split.v]
read_verilog [file join $here common rnic_board_core.v]
read_verilog [file join $here $board(top_file)]
read_xdc [file join $repo constraints $board(xdc)]
read_xdc [file join $here common cdc_timing.xdc]

# ---- synthesis and implementation
synth_design -top $board(top) -part $board(part) -flatten_hierarchy rebuilt \
    -include_dirs [list [file join $out_dir verilog]]
write_checkpoint -force [file join $out_dir post_synth.dcp]
report_utilization -file [file join $out_dir utilization_synth.rpt]
opt_design
place_design
phys_opt_design
route_design
write_checkpoint -force [file join $out_dir post_route.dcp]

# ---- reports
report_utilization -hierarchical -file [file join $out_dir utilization.rpt]
report_timing_summary -max_paths 20 -report_unconstrained -file [file join $out_dir timing_summary.rpt]
report_cdc -details -file [file join $out_dir cdc.rpt]
report_clock_interaction -file [file join $out_dir clock_interaction.rpt]
set wns [get_property SLACK [get_timing_paths -max_paths 1 -nworst 1 -setup]]
set whs [get_property SLACK [get_timing_paths -max_paths 1 -nworst 1 -hold]]
puts "rnic $board_name: WNS $wns ns, WHS $whs ns (reports in $out_dir)"

# ---- bitstream (volatile JTAG image) and a flash image for the configuration memory
write_bitstream -force [file join $out_dir rnic_${board_name}.bit]
write_cfgmem -force -format mcs -size 128 -interface SPIx4 \
    -loadbit "up 0x01002000 [file join $out_dir rnic_${board_name}.bit]" \
    [file join $out_dir rnic_${board_name}.mcs]
if {$wns < 0 || $whs < 0} {
    puts "WARNING: timing not met (WNS $wns, WHS $whs): see timing_summary.rpt"
}
