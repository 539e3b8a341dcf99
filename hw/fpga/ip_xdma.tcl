# PCIe DMA/Bridge Subsystem (xilinx.com:ip:xdma) in AXI Bridge mode, module rnic_xdma.
#   Gen3 x16, 512-bit AXI at 250 MHz (axi_aclk = the rnic core clock)
#   BAR0 (registers) -> AXI 0x0000_0000, BAR2 (WQE rings) -> AXI rnic_pcie(bar_rings_axi) =
#   the BAR2 size (0x0080_0000 for the default 8 MiB; rnic_bar_split tells them apart by
#   that address bit) on M_AXI_B
#   S_AXI_B: AXI -> host memory, identity translation, 64-bit addresses
#   MSI-X with the table inside the IP (BAR4), one user interrupt (usr_irq_req[0])
# Needs: board() from <board>/board.tcl, rnic_pcie() from the generated pcie_ids.tcl,
#        ip_dir (output directory), rnic_ip_prop (hw/fpga/ip_util.tcl).
create_ip -name xdma -vendor xilinx.com -library ip -module_name rnic_xdma -dir $ip_dir
set xdma [get_ips rnic_xdma]
rnic_ip_props $xdma [list \
    functional_mode            AXI_Bridge \
    mode_selection             Advanced \
    device_port_type           {PCI_Express_Endpoint_device} \
    pcie_blk_locn              $board(pcie_blk_locn) \
    select_quad                $board(pcie_quad) \
    pl_link_cap_max_link_width X16 \
    pl_link_cap_max_link_speed 8.0_GT/s \
    axi_data_width             512_bit \
    axisten_freq               250 \
    axi_addr_width             64 \
    axi_id_width               4 \
    ref_clk_freq               100_MHz \
    vendor_id                  $rnic_pcie(vendor_id) \
    pf0_device_id              $rnic_pcie(device_id) \
    pf0_subsystem_vendor_id    $rnic_pcie(subsystem_vendor_id) \
    pf0_subsystem_id           $rnic_pcie(subsystem_id) \
    pf0_class_code_base        $rnic_pcie(class_base) \
    pf0_class_code_sub         $rnic_pcie(class_sub) \
    pf0_class_code_interface   $rnic_pcie(class_interface) \
    pf0_bar0_enabled           true \
    pf0_bar0_64bit             true \
    pf0_bar0_prefetchable      false \
    pf0_bar0_size              $rnic_pcie(bar_regs_size) \
    pf0_bar0_scale             $rnic_pcie(bar_regs_scale) \
    pciebar2axibar_0           0x0000000000000000 \
    pf0_bar2_enabled           true \
    pf0_bar2_64bit             true \
    pf0_bar2_prefetchable      true \
    pf0_bar2_size              $rnic_pcie(bar_rings_size) \
    pf0_bar2_scale             $rnic_pcie(bar_rings_scale) \
    pciebar2axibar_2           $rnic_pcie(bar_rings_axi) \
    axibar_num                 1 \
    axibar_0                   0x0000000000000000 \
    axibar_highaddr_0          0xFFFFFFFFFFFFFFFF \
    axibar2pciebar_0           0x0000000000000000 \
    pf0_msi_enabled            false \
    pf0_msix_enabled           true \
    msix_impl_locn             Internal \
    bar_indicator              BAR_5:4 \
    xdma_num_usr_irq           1 \
]
if {$rnic_pcie(bar_regs) != 0 || $rnic_pcie(bar_rings) != 2} {
    error "rnic-abi moved the BARs (regs=$rnic_pcie(bar_regs) rings=$rnic_pcie(bar_rings)); update ip_xdma.tcl and rnic_bar_split.v"
}
