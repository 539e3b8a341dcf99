# Alveo U55C board parameters for hw/fpga/build.tcl
set board(name)          au55c
set board(part)          xcu55c-fsvh2892-2L-e
set board(top)           rnic_au55c_top
set board(top_file)      au55c/rnic_au55c_top.v
set board(xdc)           au55c/rnic_au55c.xdc
# XDMA: integrated block (PCIE4C) and GT quad of the x16 edge connector (quads 224..227)
set board(pcie_blk_locn) PCIE4C_X1Y1
set board(pcie_quad)     GTY_Quad_227
# CMAC: hard block next to QSFP0 (GTY quad 130 = X0Y40..X0Y43)
set board(cmac_core)     CMACE4_X0Y6
set board(cmac_gt_group) X0Y40~X0Y43
set board(cmac_lanes)    {X0Y40 X0Y41 X0Y42 X0Y43}
