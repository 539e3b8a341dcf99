# Timing constraints for the clock-domain crossings of rnic_board_core (both boards).
# Read after the board XDC; the clock objects come from the XDMA (axi_aclk) and the CMAC
# (gt_txusrclk2) IP, which create their own clocks from the reference clocks.
#
# Core clock: XDMA axi_aclk (250 MHz). CMAC clock: gt_txusrclk2 (322.265625 MHz).
set core_clk [get_clocks -of_objects [get_pins u_core/u_pcie/axi_aclk]]
set cmac_clk [get_clocks -of_objects [get_pins u_core/u_cmac/gt_txusrclk2]]
set min_period [expr {min([get_property PERIOD $core_clk], [get_property PERIOD $cmac_clk])}]

# Gray-coded pointers into the two-flop synchronizers (cells named cdc_s1 in SyncBits):
# bound the data path delay by one period of the faster clock and the skew between the
# bits of one pointer, instead of cutting the paths. Nothing else crosses between the two
# clocks except through the dual-clock RAMs (BRAM ports are timed per clock).
foreach fifo {u_core/u_tx_fifo u_core/u_rx_fifo} {
    foreach sync {rgray_sync wgray_sync wpkt_sync} {
        set dst [get_cells -quiet -hier -filter "NAME =~ $fifo/$sync/cdc_s1_reg*"]
        if {[llength $dst] == 0} { continue }
        set src [all_fanin -startpoints_only -only_cells -flat [get_pins -of_objects $dst -filter {REF_PIN_NAME == D}]]
        set_max_delay -datapath_only -from $src -to $dst $min_period
        set_bus_skew -from $src -to $dst [expr {$min_period * 0.8}]
    }
}

# Reset synchronizers: the asynchronous assert is not timed; the release is re-timed by the
# chain (rnic_reset_sync, ASYNC_REG). Recovery/removal of the chain flops is ignored.
set_false_path -to [get_pins -quiet -hier -filter {NAME =~ */u_*rst*/rst_chain_reg*/PRE}]
set_false_path -to [get_pins -quiet -hier -filter {NAME =~ */u_*rst*/rst_chain_reg*/CLR}]

# Status LEDs are static indicators.
set_false_path -to [get_ports -quiet {led[*] qsfp0_led[*]}]
