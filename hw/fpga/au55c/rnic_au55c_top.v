// Board top for the Alveo U55C: pins of constraints/au55c/rnic_au55c.xdc -> rnic_board_core.
`default_nettype none
module rnic_au55c_top (
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
    output wire [2:0]  qsfp0_led,          // [0] activity, [1] link (green), [2] PCIe up (yellow)
    output wire        hbm_cattrip         // HBM is unused: never signal a catastrophic trip
);
    wire pcie_up, eth_up, eth_act;
    rnic_board_core u_core (
        .pcie_refclk_p(pcie_refclk_p), .pcie_refclk_n(pcie_refclk_n), .pcie_perst_n(pcie_perst_n),
        .pcie_rx_p(pcie_rx_p), .pcie_rx_n(pcie_rx_n), .pcie_tx_p(pcie_tx_p), .pcie_tx_n(pcie_tx_n),
        .qsfp0_refclk_p(qsfp0_refclk_p), .qsfp0_refclk_n(qsfp0_refclk_n),
        .qsfp0_rx_p(qsfp0_rx_p), .qsfp0_rx_n(qsfp0_rx_n), .qsfp0_tx_p(qsfp0_tx_p), .qsfp0_tx_n(qsfp0_tx_n),
        .stat_pcie_up(pcie_up), .stat_eth_up(eth_up), .stat_eth_act(eth_act));
    assign qsfp0_led   = {pcie_up, eth_up, eth_act};
    assign hbm_cattrip = 1'b0;
endmodule
`default_nettype wire
