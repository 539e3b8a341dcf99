# 100G Ethernet MAC (xilinx.com:ip:cmac_usplus), module rnic_cmac, for QSFP28 port 0.
#   CAUI-4 (4 x 25.78125 Gb/s) with RS-FEC (clause 91), 161.1328125 MHz reference clock,
#   512-bit AXI-Stream user interface on gt_txusrclk2 (322.265625 MHz), FCS added on TX and
#   checked and stripped on RX, no pause frames, GT and shared logic inside the core.
# Needs: board() from <board>/board.tcl, ip_dir, rnic_ip_props (hw/fpga/ip_util.tcl).
create_ip -name cmac_usplus -vendor xilinx.com -library ip -module_name rnic_cmac -dir $ip_dir
set cmac [get_ips rnic_cmac]
lassign $board(cmac_lanes) l1 l2 l3 l4
rnic_ip_props $cmac [list \
    CMAC_CAUI4_MODE           1 \
    NUM_LANES                 4x25 \
    GT_TYPE                   GTY \
    GT_REF_CLK_FREQ           161.1328125 \
    GT_DRP_CLK                100 \
    CMAC_CORE_SELECT          $board(cmac_core) \
    GT_GROUP_SELECT           $board(cmac_gt_group) \
    LANE1_GT_LOC              $l1 \
    LANE2_GT_LOC              $l2 \
    LANE3_GT_LOC              $l3 \
    LANE4_GT_LOC              $l4 \
    USER_INTERFACE            AXIS \
    INCLUDE_RS_FEC            1 \
    INCLUDE_SHARED_LOGIC      2 \
    TX_FLOW_CONTROL           0 \
    RX_FLOW_CONTROL           0 \
    TX_FRAME_CRC_CHECKING     {Enable FCS Insertion} \
    RX_FRAME_CRC_CHECKING     {Enable FCS Stripping} \
    RX_MAX_PACKET_LEN         9622 \
    ENABLE_AXI_INTERFACE      0 \
    INCLUDE_STATISTICS_COUNTERS 0 \
]
