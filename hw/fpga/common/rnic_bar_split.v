// rnic_bar_split: splits the PCIe bridge's BAR master (AXI4, 512-bit) into
//   * BAR0 (AXI address bit RNIC_RING_ADDR_BITS = 0) -> rnic_top's AXI4-Lite register slave
//     (32-bit), and
//   * BAR2 (that bit = 1) -> rnic_top's AXI4 WQE slave (512-bit, RNIC_RING_ADDR_BITS-bit
//     address: 23, 8 MiB of rings, in the default build).
// The bridge maps BAR0 to AXI 0x0000_0000 and BAR2 to AXI 1 << RNIC_RING_ADDR_BITS
// (rnic_pcie(bar_rings_axi), see ip_xdma.tcl). RNIC_RING_ADDR_BITS comes from the generated
// rnic_board_params.vh (rnic-abi's BAR2 size), written by rnic-verilog beside rnic_top.v.
// One write and one read transaction in flight at a time (each channel routed by a select
// register). BAR0 accesses must be single-beat and at most 32 bits wide (the driver uses
// 32-bit MMIO); a BAR0 burst gets its first beat applied and SLVERR on the response.
`include "rnic_board_params.vh"
`default_nettype none
module rnic_bar_split (
    input  wire         clk,
    input  wire         rst,
    // ---- from the PCIe bridge (AXI4 master side)
    input  wire [3:0]   s_awid,   input wire [63:0] s_awaddr, input wire [7:0] s_awlen,
    input  wire [2:0]   s_awsize, input wire [1:0]  s_awburst,
    input  wire         s_awvalid, output wire s_awready,
    input  wire [511:0] s_wdata,  input wire [63:0] s_wstrb, input wire s_wlast,
    input  wire         s_wvalid, output wire s_wready,
    output wire [3:0]   s_bid,    output wire [1:0] s_bresp, output wire s_bvalid, input wire s_bready,
    input  wire [3:0]   s_arid,   input wire [63:0] s_araddr, input wire [7:0] s_arlen,
    input  wire [2:0]   s_arsize, input wire [1:0]  s_arburst,
    input  wire         s_arvalid, output wire s_arready,
    output wire [3:0]   s_rid,    output wire [511:0] s_rdata, output wire [1:0] s_rresp,
    output wire         s_rlast,  output wire s_rvalid, input wire s_rready,
    // ---- to rnic_top s_axil_* (AXI4-Lite, 16-bit address, 32-bit data)
    output reg  [15:0]  l_awaddr, output reg l_awvalid, input wire l_awready,
    output reg  [31:0]  l_wdata,  output reg [3:0] l_wstrb, output reg l_wvalid, input wire l_wready,
    input  wire [1:0]   l_bresp,  input wire l_bvalid, output wire l_bready,
    output reg  [15:0]  l_araddr, output reg l_arvalid, input wire l_arready,
    input  wire [31:0]  l_rdata,  input wire [1:0] l_rresp, input wire l_rvalid, output wire l_rready,
    // ---- to rnic_top s_axi_wqe_* (AXI4, RNIC_RING_ADDR_BITS-bit address, 512-bit data)
    output wire [3:0]   w_awid,   output wire [`RNIC_RING_ADDR_BITS-1:0] w_awaddr, output wire [7:0] w_awlen,
    output wire [2:0]   w_awsize, output wire [1:0]  w_awburst,
    output wire         w_awvalid, input wire w_awready,
    output wire [511:0] w_wdata,  output wire [63:0] w_wstrb, output wire w_wlast,
    output wire         w_wvalid, input wire w_wready,
    input  wire [3:0]   w_bid,    input wire [1:0] w_bresp, input wire w_bvalid, output wire w_bready,
    output wire [3:0]   w_arid,   output wire [`RNIC_RING_ADDR_BITS-1:0] w_araddr, output wire [7:0] w_arlen,
    output wire [2:0]   w_arsize, output wire [1:0]  w_arburst,
    output wire         w_arvalid, input wire w_arready,
    input  wire [3:0]   w_rid,    input wire [511:0] w_rdata, input wire [1:0] w_rresp,
    input  wire         w_rlast,  input wire w_rvalid, output wire w_rready
);
    // ================= write channel =================
    // wst: 0 idle, 1 WQE burst in flight, 2 BAR0: address/data phase, 3 BAR0: waiting for B,
    //      4 BAR0: B response to the bridge
    reg [2:0]  wst = 3'd0;
    reg [3:0]  wid_q = 4'd0;
    reg        wbad_q = 1'b0;   // BAR0 burst: answer SLVERR
    reg        wdrain = 1'b0;   // BAR0 burst: swallow the remaining beats
    reg [1:0]  bresp_q = 2'b00;
    wire aw_is_wqe = s_awaddr[`RNIC_RING_ADDR_BITS];

    assign w_awid    = s_awid;
    assign w_awaddr  = s_awaddr[`RNIC_RING_ADDR_BITS-1:0];
    assign w_awlen   = s_awlen;
    assign w_awsize  = s_awsize;
    assign w_awburst = s_awburst;
    assign w_awvalid = (wst == 3'd0) && s_awvalid && aw_is_wqe;
    assign w_wdata   = s_wdata;
    assign w_wstrb   = s_wstrb;
    assign w_wlast   = s_wlast;
    assign w_wvalid  = (wst == 3'd1) && s_wvalid;
    assign w_bready  = (wst == 3'd1) && s_bready;

    assign s_awready = (wst == 3'd0) && (aw_is_wqe ? w_awready : 1'b1);
    assign s_wready  = (wst == 3'd1) ? w_wready : ((wst == 3'd2) && (!l_wgot || wdrain));
    assign s_bvalid  = (wst == 3'd1) ? w_bvalid : (wst == 3'd4);
    assign s_bid     = (wst == 3'd1) ? w_bid : wid_q;
    assign s_bresp   = (wst == 3'd1) ? w_bresp : bresp_q;
    assign l_bready  = (wst == 3'd3);

    reg l_wgot = 1'b0;  // the single BAR0 data beat has been captured
    always @(posedge clk) begin
        if (rst) begin
            wst <= 3'd0; l_awvalid <= 1'b0; l_wvalid <= 1'b0; wdrain <= 1'b0; l_wgot <= 1'b0;
        end else begin
            case (wst)
            3'd0: if (s_awvalid) begin
                if (aw_is_wqe) begin
                    if (w_awready) wst <= 3'd1;
                end else begin
                    wid_q <= s_awid;
                    wbad_q <= (s_awlen != 8'd0) || (s_awsize > 3'd2);
                    l_awaddr <= {s_awaddr[15:2], 2'b00};
                    l_awvalid <= 1'b1;
                    l_wgot <= 1'b0;
                    wst <= 3'd2;
                end
            end
            3'd1: if (w_bvalid && s_bready) wst <= 3'd0;
            3'd2: begin
                if (l_awvalid && l_awready) l_awvalid <= 1'b0;
                if (!l_wgot && s_wvalid) begin
                    l_wdata <= s_wdata[{l_awaddr[5:2], 5'd0} +: 32];
                    l_wstrb <= s_wstrb[{l_awaddr[5:2], 2'd0} +: 4];
                    l_wvalid <= 1'b1;
                    l_wgot <= 1'b1;
                    wdrain <= !s_wlast;
                end
                else if (wdrain && s_wvalid && s_wlast) wdrain <= 1'b0;
                if (l_wvalid && l_wready) l_wvalid <= 1'b0;
                if (l_wgot && !l_awvalid && !l_wvalid && !wdrain)
                    wst <= 3'd3;
            end
            3'd3: if (l_bvalid) begin
                bresp_q <= wbad_q ? 2'b10 : l_bresp;
                wst <= 3'd4;
            end
            3'd4: if (s_bready) wst <= 3'd0;
            default: wst <= 3'd0;
            endcase
        end
    end

    // ================= read channel =================
    // rst_: 0 idle, 1 WQE burst in flight, 2 BAR0 address, 3 BAR0 wait data, 4 BAR0 beats out
    reg [2:0]  rstate = 3'd0;
    reg [3:0]  rid_q = 4'd0;
    reg [7:0]  rleft = 8'd0;
    reg        rbad_q = 1'b0;
    reg [31:0] rdata_q = 32'd0;
    reg [1:0]  rresp_q = 2'b00;
    wire ar_is_wqe = s_araddr[`RNIC_RING_ADDR_BITS];

    assign w_arid    = s_arid;
    assign w_araddr  = s_araddr[`RNIC_RING_ADDR_BITS-1:0];
    assign w_arlen   = s_arlen;
    assign w_arsize  = s_arsize;
    assign w_arburst = s_arburst;
    assign w_arvalid = (rstate == 3'd0) && s_arvalid && ar_is_wqe;
    assign w_rready  = (rstate == 3'd1) && s_rready;
    assign s_arready = (rstate == 3'd0) && (ar_is_wqe ? w_arready : 1'b1);
    assign s_rvalid  = (rstate == 3'd1) ? w_rvalid : (rstate == 3'd4);
    assign s_rid     = (rstate == 3'd1) ? w_rid : rid_q;
    assign s_rdata   = (rstate == 3'd1) ? w_rdata : {16{rdata_q}};
    assign s_rresp   = (rstate == 3'd1) ? w_rresp : rresp_q;
    assign s_rlast   = (rstate == 3'd1) ? w_rlast : (rleft == 8'd0);
    assign l_rready  = (rstate == 3'd3);

    always @(posedge clk) begin
        if (rst) begin
            rstate <= 3'd0; l_arvalid <= 1'b0;
        end else begin
            case (rstate)
            3'd0: if (s_arvalid) begin
                if (ar_is_wqe) begin
                    if (w_arready) rstate <= 3'd1;
                end else begin
                    rid_q <= s_arid;
                    rleft <= s_arlen;
                    rbad_q <= (s_arlen != 8'd0) || (s_arsize > 3'd2);
                    l_araddr <= {s_araddr[15:2], 2'b00};
                    l_arvalid <= 1'b1;
                    rstate <= 3'd2;
                end
            end
            3'd1: if (w_rvalid && s_rready && w_rlast) rstate <= 3'd0;
            3'd2: if (l_arready) begin l_arvalid <= 1'b0; rstate <= 3'd3; end
            3'd3: if (l_rvalid) begin
                rdata_q <= l_rdata;
                rresp_q <= rbad_q ? 2'b10 : l_rresp;
                rstate <= 3'd4;
            end
            3'd4: if (s_rready) begin
                if (rleft == 8'd0) rstate <= 3'd0;
                else rleft <= rleft - 8'd1;
            end
            default: rstate <= 3'd0;
            endcase
        end
    end
endmodule
`default_nettype wire
