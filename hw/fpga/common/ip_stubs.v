// Black-box declarations of the vendor IP that hw/fpga/ip_*.tcl generates, with exactly
// the ports rnic_board_core connects. Used only by the open checks (yosys, Verilator
// lint); Vivado uses the generated IP. If Vivado reports a port mismatch, the IP's port
// list (PG195 XDMA / PG203 CMAC) wins: fix rnic_board_core.v and this file together.
(* blackbox *)
module rnic_xdma (
    input  wire sys_clk, input wire sys_clk_gt, input wire sys_rst_n,
    output wire [15:0] pci_exp_txp, output wire [15:0] pci_exp_txn,
    input  wire [15:0] pci_exp_rxp, input wire [15:0] pci_exp_rxn,
    output wire axi_aclk, output wire axi_aresetn, output wire user_lnk_up,
    input  wire [0:0] usr_irq_req, output wire [0:0] usr_irq_ack, output wire msix_enable,
    output wire [3:0] m_axib_awid, output wire [63:0] m_axib_awaddr, output wire [7:0] m_axib_awlen,
    output wire [2:0] m_axib_awsize, output wire [1:0] m_axib_awburst, output wire [2:0] m_axib_awprot,
    output wire m_axib_awlock, output wire [3:0] m_axib_awcache,
    output wire m_axib_awvalid, input wire m_axib_awready,
    output wire [511:0] m_axib_wdata, output wire [63:0] m_axib_wstrb, output wire m_axib_wlast,
    output wire m_axib_wvalid, input wire m_axib_wready,
    input  wire [3:0] m_axib_bid, input wire [1:0] m_axib_bresp, input wire m_axib_bvalid, output wire m_axib_bready,
    output wire [3:0] m_axib_arid, output wire [63:0] m_axib_araddr, output wire [7:0] m_axib_arlen,
    output wire [2:0] m_axib_arsize, output wire [1:0] m_axib_arburst, output wire [2:0] m_axib_arprot,
    output wire m_axib_arlock, output wire [3:0] m_axib_arcache,
    output wire m_axib_arvalid, input wire m_axib_arready,
    input  wire [3:0] m_axib_rid, input wire [511:0] m_axib_rdata, input wire [1:0] m_axib_rresp,
    input  wire m_axib_rlast, input wire m_axib_rvalid, output wire m_axib_rready,
    input  wire [3:0] s_axib_awid, input wire [63:0] s_axib_awaddr, input wire [3:0] s_axib_awregion,
    input  wire [7:0] s_axib_awlen, input wire [2:0] s_axib_awsize, input wire [1:0] s_axib_awburst,
    input  wire s_axib_awvalid, output wire s_axib_awready,
    input  wire [511:0] s_axib_wdata, input wire [63:0] s_axib_wstrb, input wire s_axib_wlast,
    input  wire s_axib_wvalid, output wire s_axib_wready,
    output wire [3:0] s_axib_bid, output wire [1:0] s_axib_bresp, output wire s_axib_bvalid, input wire s_axib_bready,
    input  wire [3:0] s_axib_arid, input wire [63:0] s_axib_araddr, input wire [3:0] s_axib_arregion,
    input  wire [7:0] s_axib_arlen, input wire [2:0] s_axib_arsize, input wire [1:0] s_axib_arburst,
    input  wire s_axib_arvalid, output wire s_axib_arready,
    output wire [3:0] s_axib_rid, output wire [511:0] s_axib_rdata, output wire [1:0] s_axib_rresp,
    output wire s_axib_rlast, output wire s_axib_rvalid, input wire s_axib_rready
);
endmodule

(* blackbox *)
module rnic_cmac (
    input  wire gt_ref_clk_p, input wire gt_ref_clk_n,
    input  wire [3:0] gt_rxp_in, input wire [3:0] gt_rxn_in,
    output wire [3:0] gt_txp_out, output wire [3:0] gt_txn_out,
    input  wire init_clk, input wire sys_reset, input wire drp_clk,
    input  wire [11:0] gt_loopback_in,
    input  wire gtwiz_reset_tx_datapath, input wire gtwiz_reset_rx_datapath,
    input  wire core_rx_reset, input wire core_tx_reset, input wire core_drp_reset,
    input  wire [9:0] drp_addr, input wire [15:0] drp_di, input wire drp_en, input wire drp_we,
    output wire gt_txusrclk2, input wire rx_clk,
    output wire usr_tx_reset, output wire usr_rx_reset,
    input  wire [511:0] tx_axis_tdata, input wire [63:0] tx_axis_tkeep, input wire tx_axis_tlast,
    input  wire tx_axis_tuser, input wire tx_axis_tvalid, output wire tx_axis_tready,
    input  wire [55:0] tx_preamblein,
    output wire [511:0] rx_axis_tdata, output wire [63:0] rx_axis_tkeep, output wire rx_axis_tlast,
    output wire rx_axis_tuser, output wire rx_axis_tvalid,
    input  wire ctl_rx_enable, input wire ctl_rx_force_resync, input wire ctl_rx_test_pattern,
    input  wire ctl_tx_enable, input wire ctl_tx_send_rfi, input wire ctl_tx_send_lfi,
    input  wire ctl_tx_send_idle, input wire ctl_tx_test_pattern,
    input  wire ctl_rx_rsfec_enable, input wire ctl_rx_rsfec_enable_correction,
    input  wire ctl_rx_rsfec_enable_indication, input wire ctl_tx_rsfec_enable,
    input  wire ctl_rsfec_ieee_error_indication_mode,
    output wire stat_rx_aligned
);
endmodule
