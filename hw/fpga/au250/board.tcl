# Alveo U250 board parameters for hw/fpga/build.tcl
set board(name)          au250
set board(part)          xcu250-figd2104-2L-e
set board(top)           rnic_au250_top
set board(top_file)      au250/rnic_au250_top.v
set board(xdc)           au250/rnic_au250.xdc
# XDMA: integrated block and GT quad of the x16 edge connector (lanes in quads 224..227)
set board(pcie_blk_locn) X1Y2
set board(pcie_quad)     GTY_Quad_227
# CMAC: hard block next to QSFP0 (GTY quad 231 = X1Y48..X1Y51)
set board(cmac_core)     CMACE4_X0Y7
set board(cmac_gt_group) X1Y48~X1Y51
set board(cmac_lanes)    {X1Y48 X1Y49 X1Y50 X1Y51}
