# shellcheck shell=bash
# Sourced by scripts/synth.sh and scripts/depth.sh: yosys 0.23's synth_xilinx for UltraScale+
# (-family xcup) with its memory step run on a fixed LUT-RAM table.
#
# yosys 0.23's UltraScale LUT-RAM table (share/xilinx/lutrams_xcu.txt) offers single-port
# LUT RAM of 2^16 x 1 ("ABITS" 16), a shape its own mapping file (lutrams_xc5v_map.v) does not
# know: a memory it picks that shape for fails with "invalid OPTION_ABITS/WIDTH combination"
# (seen with -flatten on ctxstore, so on rnic_top). The primitive meant is RAM512X1S (512 x 1,
# which the mapping file maps): the table is used with that one option changed to 9 address
# bits. Unchanged where yosys ships it fixed.

# xcup_lutlib DIR: writes the fixed table into DIR and prints its path
xcup_lutlib() {
    local share lib=$1/lutrams_xcu.txt
    share=$(dirname "$(command -v yosys)")/../share/yosys
    sed '/option "ABITS" 16 {/,/}/s/\<16\>/9/' "$share/xilinx/lutrams_xcu.txt" >"$lib"
    echo "$lib"
}

# xcup_synth LUTLIB SYNTH_XILINX_ARGS...: prints the yosys commands of
# `synth_xilinx -family xcup ARGS`, with its memory mapping (map_memory) run on LUTLIB: the same
# commands yosys 0.23 runs there for xcup, the steps before and after left to synth_xilinx
xcup_synth() {
    local lib=$1 s
    shift
    s="synth_xilinx -family xcup $*"
    echo -n "$s -run :map_memory"
    echo -n "; memory_libmap -logic-cost-rom 0.015625 -lib $lib -lib +/xilinx/brams_xc4v.txt"
    echo -n " -D HAS_SIZE_36 -D HAS_MIXWIDTH_SDP -D HAS_ADDRCE -lib +/xilinx/urams.txt -no-auto-huge"
    echo -n "; techmap -map +/xilinx/lutrams_xc5v_map.v; techmap -map +/xilinx/brams_xcu_map.v"
    echo "; techmap -map +/xilinx/urams_map.v; $s -run map_ffram:"
}
