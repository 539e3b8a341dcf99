# rnic on the AMD/Xilinx Alveo U55C (A-U55C-P00G-PQ-G), part xcu55c-fsvh2892-2L-e.
#
# Pin locations and I/O standards are taken from:
#   * UG1469 "Alveo U55C Data Center Accelerator Card User Guide" (clocking, QSFP28, PCIe);
#   * the card's master constraints file, "U55N - Master XDC, Revision 1.00" (the U55C,
#     U55N and Varium C1100 share one PCB; the file documents the clock tree below).
# Facts used: PCIe REFCLK1 (x16 synchronous clocking) on MGTREFCLK0_225 (AR15/AR14);
# PCIE_PERST_LS_65 on BF41 (bank 65, LVCMOS18); QSFP28 port 0 = GTY quad 130
# (channels X0Y40..X0Y43); its 161.1328125 MHz clock SYNCE_CLK0 from the Si5394 on
# MGTREFCLK0_130 (AD42/AD43); QSFP0 LEDs on BL13 (activity), BK11 (link, green),
# BJ11 (link, yellow), LVCMOS18; HBM_CATTRIP_LS on BE45 (LVCMOS18) must be driven low.
# The PCIe lanes (quads 224..227) are placed by the XDMA IP.

# ---------------------------------------------------------------- configuration
set_property CFGBVS GND                                [current_design]
set_property CONFIG_VOLTAGE 1.8                        [current_design]
set_property CONFIG_MODE SPIx4                         [current_design]
set_property BITSTREAM.CONFIG.SPI_BUSWIDTH 4           [current_design]
set_property BITSTREAM.CONFIG.SPI_32BIT_ADDR YES       [current_design]
set_property BITSTREAM.CONFIG.SPI_FALL_EDGE YES        [current_design]
set_property BITSTREAM.CONFIG.CONFIGRATE 63.8          [current_design]
set_property BITSTREAM.CONFIG.CONFIGFALLBACK ENABLE    [current_design]
set_property BITSTREAM.CONFIG.EXTMASTERCCLK_EN DISABLE [current_design]
set_property BITSTREAM.CONFIG.UNUSEDPIN PULLUP         [current_design]
set_property BITSTREAM.GENERAL.COMPRESS TRUE           [current_design]

# ---------------------------------------------------------------- PCIe
set_property PACKAGE_PIN AR15 [get_ports pcie_refclk_p]
set_property PACKAGE_PIN AR14 [get_ports pcie_refclk_n]
create_clock -name pcie_refclk -period 10.000 [get_ports pcie_refclk_p]

set_property PACKAGE_PIN BF41 [get_ports pcie_perst_n]
set_property IOSTANDARD LVCMOS18 [get_ports pcie_perst_n]
set_property PULLUP true [get_ports pcie_perst_n]
set_false_path -from [get_ports pcie_perst_n]

# ---------------------------------------------------------------- QSFP28 port 0 (quad 130)
set_property PACKAGE_PIN AD42 [get_ports qsfp0_refclk_p]
set_property PACKAGE_PIN AD43 [get_ports qsfp0_refclk_n]
create_clock -name qsfp0_refclk -period 6.206 [get_ports qsfp0_refclk_p]

set_property PACKAGE_PIN AD51 [get_ports {qsfp0_rx_p[0]}]
set_property PACKAGE_PIN AD52 [get_ports {qsfp0_rx_n[0]}]
set_property PACKAGE_PIN AD46 [get_ports {qsfp0_tx_p[0]}]
set_property PACKAGE_PIN AD47 [get_ports {qsfp0_tx_n[0]}]
set_property PACKAGE_PIN AC53 [get_ports {qsfp0_rx_p[1]}]
set_property PACKAGE_PIN AC54 [get_ports {qsfp0_rx_n[1]}]
set_property PACKAGE_PIN AC44 [get_ports {qsfp0_tx_p[1]}]
set_property PACKAGE_PIN AC45 [get_ports {qsfp0_tx_n[1]}]
set_property PACKAGE_PIN AC49 [get_ports {qsfp0_rx_p[2]}]
set_property PACKAGE_PIN AC50 [get_ports {qsfp0_rx_n[2]}]
set_property PACKAGE_PIN AB46 [get_ports {qsfp0_tx_p[2]}]
set_property PACKAGE_PIN AB47 [get_ports {qsfp0_tx_n[2]}]
set_property PACKAGE_PIN AB51 [get_ports {qsfp0_rx_p[3]}]
set_property PACKAGE_PIN AB52 [get_ports {qsfp0_rx_n[3]}]
set_property PACKAGE_PIN AA48 [get_ports {qsfp0_tx_p[3]}]
set_property PACKAGE_PIN AA49 [get_ports {qsfp0_tx_n[3]}]

# ---------------------------------------------------------------- LEDs, HBM catastrophic trip
set_property -dict {PACKAGE_PIN BL13 IOSTANDARD LVCMOS18} [get_ports {qsfp0_led[0]}]
set_property -dict {PACKAGE_PIN BK11 IOSTANDARD LVCMOS18} [get_ports {qsfp0_led[1]}]
set_property -dict {PACKAGE_PIN BJ11 IOSTANDARD LVCMOS18} [get_ports {qsfp0_led[2]}]
set_false_path -to [get_ports {qsfp0_led[*]}]

set_property -dict {PACKAGE_PIN BE45 IOSTANDARD LVCMOS18 PULLDOWN true} [get_ports hbm_cattrip]
set_false_path -to [get_ports hbm_cattrip]
