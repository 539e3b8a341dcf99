// Board top for the Alveo U250: pins of constraints/au250/rnic_au250.xdc -> rnic_board_core.
`default_nettype none
module rnic_au250_top (
    input  wire        pcie_refclk_p,
    input  wire        pcie_refclk_n,
    input  wire        pcie_perst_n,
    input  wire [15:0] pcie_rx_p,
    input  wire [15:0] pcie_rx_n,
    output wire [15:0] pcie_tx_p,
    output wire [15:0] pcie_tx_n,
    input  wire        qsfp0_refclk_p,
    input  wire        qsfp0_refclk_n,
    input  wire [3:0]  qsfp0_rx_p,
    input  wire [3:0]  qsfp0_rx_n,
    output wire [3:0]  qsfp0_tx_p,
    output wire [3:0]  qsfp0_tx_n,
    output wire        qsfp0_modsell,      // active low: module selected
    output wire        qsfp0_resetl,       // active low: module out of reset
    output wire        qsfp0_lpmode,       // high power mode
    output wire        qsfp0_refclk_reset, // SI5335 running
    output wire [1:0]  qsfp0_fs,           // SI5335 frequency select: 2'b10 = 161.1328125 MHz
    output wire [2:0]  led
);
    wire pcie_up, eth_up, eth_act;
    rnic_board_core u_core (
        .pcie_refclk_p(pcie_refclk_p), .pcie_refclk_n(pcie_refclk_n), .pcie_perst_n(pcie_perst_n),
        .pcie_rx_p(pcie_rx_p), .pcie_rx_n(pcie_rx_n), .pcie_tx_p(pcie_tx_p), .pcie_tx_n(pcie_tx_n),
        .qsfp0_refclk_p(qsfp0_refclk_p), .qsfp0_refclk_n(qsfp0_refclk_n),
        .qsfp0_rx_p(qsfp0_rx_p), .qsfp0_rx_n(qsfp0_rx_n), .qsfp0_tx_p(qsfp0_tx_p), .qsfp0_tx_n(qsfp0_tx_n),
        .stat_pcie_up(pcie_up), .stat_eth_up(eth_up), .stat_eth_act(eth_act));
    assign qsfp0_modsell      = 1'b0;
    assign qsfp0_resetl       = 1'b1;
    assign qsfp0_lpmode       = 1'b0;
    assign qsfp0_refclk_reset = 1'b0;
    assign qsfp0_fs           = 2'b10;
    assign led = {eth_act, eth_up, pcie_up};
endmodule
`default_nettype wire
