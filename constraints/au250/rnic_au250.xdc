# rnic on the AMD/Xilinx Alveo U250 (A-U250-P64G-PQ-G / A-U250-A64G-PQ-G), part xcu250-figd2104-2L-e.
#
# Pin locations and I/O standards are taken from:
#   * UG1289 "Alveo U200 and U250 Data Center Accelerator Cards User Guide", v1.1.1
#     (November 20, 2019), Chapter 3 (clocks, QSFP28, status LEDs) and Appendix A (XDC);
#   * the card's master constraints file published with it (alveo-u250-xdc.xdc).
# Facts used: PCIe REFCLK on MGTREFCLK0_226 (AM11/AM10); PCIE_PERST_LS on BD21 (bank 64,
# VCCO 1.2 V); QSFP0 = GTY quad 231 (channels X1Y48..X1Y51); QSFP0_CLOCK from the SI5335 on
# MGTREFCLK1_231 (K11/K10), 161.1328125 MHz with FS[1:0] = 2'b10 (156.25 MHz with 2'b01);
# QSFP0 sideband and FS/refclk-reset pins in bank 64 (LVCMOS12); triple status LEDs on
# BC21/BB21/BA20 (LVCMOS12). The PCIe lanes (quads 224..227) are placed by the XDMA IP.

# ---------------------------------------------------------------- configuration
set_property CFGBVS GND                                [current_design]
set_property CONFIG_VOLTAGE 1.8                        [current_design]
set_property CONFIG_MODE SPIx4                         [current_design]
set_property BITSTREAM.CONFIG.SPI_BUSWIDTH 4           [current_design]
set_property BITSTREAM.CONFIG.SPI_32BIT_ADDR YES       [current_design]
set_property BITSTREAM.CONFIG.SPI_FALL_EDGE YES        [current_design]
set_property BITSTREAM.CONFIG.CONFIGRATE 63.8          [current_design]
set_property BITSTREAM.CONFIG.EXTMASTERCCLK_EN DISABLE [current_design]
set_property BITSTREAM.CONFIG.UNUSEDPIN PULLUP         [current_design]
set_property BITSTREAM.GENERAL.COMPRESS TRUE           [current_design]

# ---------------------------------------------------------------- PCIe
set_property PACKAGE_PIN AM11 [get_ports pcie_refclk_p]
set_property PACKAGE_PIN AM10 [get_ports pcie_refclk_n]
create_clock -name pcie_refclk -period 10.000 [get_ports pcie_refclk_p]

set_property PACKAGE_PIN BD21 [get_ports pcie_perst_n]
set_property IOSTANDARD LVCMOS12 [get_ports pcie_perst_n]
set_property PULLUP true [get_ports pcie_perst_n]
set_false_path -from [get_ports pcie_perst_n]

# ---------------------------------------------------------------- QSFP28 port 0 (quad 231)
set_property PACKAGE_PIN K11 [get_ports qsfp0_refclk_p]
set_property PACKAGE_PIN K10 [get_ports qsfp0_refclk_n]
create_clock -name qsfp0_refclk -period 6.206 [get_ports qsfp0_refclk_p]

set_property PACKAGE_PIN N4 [get_ports {qsfp0_rx_p[0]}]
set_property PACKAGE_PIN N3 [get_ports {qsfp0_rx_n[0]}]
set_property PACKAGE_PIN N9 [get_ports {qsfp0_tx_p[0]}]
set_property PACKAGE_PIN N8 [get_ports {qsfp0_tx_n[0]}]
set_property PACKAGE_PIN M2 [get_ports {qsfp0_rx_p[1]}]
set_property PACKAGE_PIN M1 [get_ports {qsfp0_rx_n[1]}]
set_property PACKAGE_PIN M7 [get_ports {qsfp0_tx_p[1]}]
set_property PACKAGE_PIN M6 [get_ports {qsfp0_tx_n[1]}]
set_property PACKAGE_PIN L4 [get_ports {qsfp0_rx_p[2]}]
set_property PACKAGE_PIN L3 [get_ports {qsfp0_rx_n[2]}]
set_property PACKAGE_PIN L9 [get_ports {qsfp0_tx_p[2]}]
set_property PACKAGE_PIN L8 [get_ports {qsfp0_tx_n[2]}]
set_property PACKAGE_PIN K2 [get_ports {qsfp0_rx_p[3]}]
set_property PACKAGE_PIN K1 [get_ports {qsfp0_rx_n[3]}]
set_property PACKAGE_PIN K7 [get_ports {qsfp0_tx_p[3]}]
set_property PACKAGE_PIN K6 [get_ports {qsfp0_tx_n[3]}]

# sideband (module select/reset/low-power) and the SI5335 frequency select
set_property -dict {PACKAGE_PIN BE16 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports qsfp0_modsell]
set_property -dict {PACKAGE_PIN BE17 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports qsfp0_resetl]
set_property -dict {PACKAGE_PIN BD18 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports qsfp0_lpmode]
set_property -dict {PACKAGE_PIN AT22 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports qsfp0_refclk_reset]
set_property -dict {PACKAGE_PIN AT20 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {qsfp0_fs[0]}]
set_property -dict {PACKAGE_PIN AU22 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {qsfp0_fs[1]}]
set_false_path -to [get_ports {qsfp0_modsell qsfp0_resetl qsfp0_lpmode qsfp0_refclk_reset qsfp0_fs[*]}]

# ---------------------------------------------------------------- status LEDs
set_property -dict {PACKAGE_PIN BC21 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[0]}]
set_property -dict {PACKAGE_PIN BB21 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[1]}]
set_property -dict {PACKAGE_PIN BA20 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[2]}]
set_false_path -to [get_ports {led[*]}]
