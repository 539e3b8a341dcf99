//! RoCE v2 RX header parser (Ethernet + IPv4 without options + UDP + BTH + RETH / AETH /
//! ImmDt) for the 512-bit datapath.
//!
//! Interface: an AXI4-Stream tap that is always ready (no `tready`): `tdata` little-endian
//! (byte 0 = bits 7:0), `tkeep` contiguous from bit 0 and non-zero on the last beat, `tlast`,
//! `tvalid`. The frame is the Ethernet frame without FCS, ending with the 4-byte ICRC (and any
//! Ethernet padding). Frames may follow each other back to back.
//!
//! Latency: if the last beat of a frame is presented in cycle `t` (accepted by the edge ending
//! `t`), `hdr_valid` is high for exactly cycle `t + 3`, with every field, `drop`,
//! `drop_reason` and the counters (already incremented for this frame) valid in that cycle.
//! Fields hold until the next result. Stage 1 (edge ending `t`) captures the header bytes
//! and the frame length (and, from beat 0, the IPv4 header's word sum as an adder tree and
//! the payload length); stage
//! 2, the check stage (edge ending `t + 1`), registers every drop condition on its own and
//! the fields; stage 3,
//! the result stage (edge ending `t + 2`), registers the first condition that holds as the
//! reason, and the fields (a logic depth of at most 8 LUTs per stage on UltraScale+, yosys).
//!
//! Header capture: bytes 0..63 come from beat 0 and bytes 64..81 from beat 1, so every field
//! up to the end of RETH + ImmDt (WRITE_ONLY_IMM: ImmDt at bytes 70..73) and of the AtomicETH
//! (bytes 54..81) is parsed; there is no one-beat limitation. The AtomicETH of COMPARE_SWAP /
//! FETCH_ADD (0x13 / 0x14) is output as `reth_va` (VA, bytes 54..61), `reth_rkey` (R_Key,
//! 62..65; `has_reth` stays 0 and `reth_len` 0), `atom_swap` (swap or add data, 66..73) and
//! `atom_cmp` (compare data, 74..81). The AtomicAckETH of an ATOMIC ACKNOWLEDGE (0x12) is not
//! output (ext = AETH + AtomicAckETH, payload 0: the responder reads its bytes 58..65 from the
//! packet buffer).
//!
//! Field conventions: all multi-byte fields are the big-endian (network order) value. RETH
//! fields are zero unless `has_reth` (VA and R_Key also set on the two atomic requests), AETH
//! fields zero unless `has_aeth`, `immdt` zero unless `has_immdt`, `atom_swap` / `atom_cmp`
//! zero on every opcode but 0x13 / 0x14. `pay_off` is the frame offset of the payload (Eth + IPv4 + UDP + BTH + the
//! opcode's extension headers), `pay_len` = IPv4 total length - IPv4 - UDP - BTH - extension
//! headers - ICRC: it excludes Ethernet padding and includes the BTH pad bytes (`pad_cnt`).
//! On a dropped frame the fields are whatever the bytes say and must be ignored.
//!
//! Drop reasons, checked in this priority order (the first one that applies is reported):
//! see [`Reason`]. "Frame length" is the number of bytes the stream delivered.
//! Each reason has a 32-bit wrapping counter output `cnt_<reason>`.

use rnic_abi::roce::{self, opcode};
use rust_hdl::prelude::*;
use std::fmt::Write;

/// Frame offsets.
pub const IP_OFF: usize = roce::ETH_HDR_BYTES;
pub const UDP_OFF: usize = IP_OFF + roce::IPV4_HDR_BYTES;
pub const BTH_OFF: usize = UDP_OFF + roce::UDP_HDR_BYTES;
pub const EXT_OFF: usize = BTH_OFF + roce::BTH_BYTES;
/// Captured header bytes (beat 0 and the first 18 bytes of beat 1: up to the end of the
/// AtomicETH, which is longer than RETH + ImmDt).
pub const CAP_BYTES: usize = EXT_OFF + roce::ATOMIC_ETH_BYTES;
const _: () = assert!(CAP_BYTES >= EXT_OFF + roce::RETH_BYTES + roce::IMMDT_BYTES);

/// Drop reasons (`drop_reason`; 0 = not dropped), in priority order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Reason {
    /// Frame length < 14, or (after the ethertype check) frame length < Eth + IPv4 + UDP +
    /// BTH + the opcode's extension headers + ICRC (opcode known to be in the frame then).
    Short = 1,
    /// Ethertype != 0x0800 (checked right after the 14-byte test: ARP, IPv6 land here).
    Ethertype = 2,
    /// IPv4 version/IHL byte != 0x45.
    IpHdr = 3,
    /// IPv4 header checksum wrong (ones-complement sum of the 20 bytes != 0xFFFF).
    IpCsum = 4,
    /// IPv4 total length > frame length - 14; or (checked after the UDP port, before TVer)
    /// UDP length != IPv4 total length - 20 (the UDP datagram runs past the IPv4 payload, or
    /// leaves part of it uncovered). Ethernet padding after the IPv4 datagram is allowed.
    IpLen = 5,
    /// MF set or fragment offset != 0.
    Frag = 6,
    /// IPv4 protocol != UDP.
    NotUdp = 7,
    /// UDP destination port != 4791.
    UdpPort = 8,
    /// BTH TVer != 0.
    Tver = 9,
    /// Opcode neither an RC opcode (<= 0x14) nor the RoCE v2 CNP (0x81).
    Opcode = 10,
    /// Payload length inconsistent with the opcode: IPv4 total length shorter than the
    /// headers + ICRC (negative payload), payload (with pad) not a multiple of 4, non-zero
    /// payload on READ_REQUEST / ACKNOWLEDGE / ATOMIC_ACKNOWLEDGE / COMPARE_SWAP / FETCH_ADD,
    /// or on a FIRST / MIDDLE packet an empty payload or a non-zero pad count, or a pad count
    /// larger than the payload (an empty payload with pad bytes: payload minus pad < 0).
    Payload = 11,
}

/// All reasons, in code order, with their counter port names.
pub const REASONS: [(Reason, &str); 11] = [
    (Reason::Short, "cnt_short"),
    (Reason::Ethertype, "cnt_ethertype"),
    (Reason::IpHdr, "cnt_ip_hdr"),
    (Reason::IpCsum, "cnt_ip_csum"),
    (Reason::IpLen, "cnt_ip_len"),
    (Reason::Frag, "cnt_frag"),
    (Reason::NotUdp, "cnt_not_udp"),
    (Reason::UdpPort, "cnt_udp_port"),
    (Reason::Tver, "cnt_tver"),
    (Reason::Opcode, "cnt_opcode"),
    (Reason::Payload, "cnt_payload"),
];

/// Reserved bytes after the BTH of a RoCE v2 CNP (Annex A17.9.3: BTH, 16 reserved bytes, ICRC).
pub const CNP_RSVD_BYTES: usize = 16;

/// What an RC opcode (or the CNP) carries after the BTH.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpInfo {
    /// Bytes of extension headers after the BTH.
    pub ext: usize,
    pub reth: bool,
    pub aeth: bool,
    pub immdt: bool,
    /// The packet carries no payload.
    pub no_payload: bool,
    /// FIRST or MIDDLE packet: payload non-empty, pad count 0.
    pub first_middle: bool,
}

/// The RC opcode table (IBTA Vol. 1 9.2, table 38) plus the RoCE v2 CNP (A17.9.3: no payload,
/// 16 reserved bytes after the BTH). `None`: neither.
pub fn op_info(op: u8) -> Option<OpInfo> {
    use opcode::*;
    let i = |reth: bool, aeth: bool, immdt: bool, extra: usize| OpInfo {
        ext: reth as usize * roce::RETH_BYTES
            + aeth as usize * roce::AETH_BYTES
            + immdt as usize * roce::IMMDT_BYTES
            + extra,
        reth,
        aeth,
        immdt,
        no_payload: false,
        first_middle: false,
    };
    let fm = |mut o: OpInfo| {
        o.first_middle = true;
        o
    };
    let np = |mut o: OpInfo| {
        o.no_payload = true;
        o
    };
    Some(match op {
        SEND_FIRST | SEND_MIDDLE | WRITE_MIDDLE | READ_RESPONSE_MIDDLE => {
            fm(i(false, false, false, 0))
        }
        SEND_LAST | SEND_ONLY => i(false, false, false, 0),
        SEND_LAST_IMM | SEND_ONLY_IMM | WRITE_LAST_IMM => i(false, false, true, 0),
        WRITE_FIRST => fm(i(true, false, false, 0)),
        WRITE_LAST => i(false, false, false, 0),
        WRITE_ONLY => i(true, false, false, 0),
        WRITE_ONLY_IMM => i(true, false, true, 0),
        READ_REQUEST => np(i(true, false, false, 0)),
        READ_RESPONSE_FIRST => fm(i(false, true, false, 0)),
        READ_RESPONSE_LAST | READ_RESPONSE_ONLY => i(false, true, false, 0),
        ACKNOWLEDGE => np(i(false, true, false, 0)),
        ATOMIC_ACKNOWLEDGE => np(i(false, true, false, roce::ATOMIC_ACK_ETH_BYTES)),
        COMPARE_SWAP | FETCH_ADD => np(i(false, false, false, roce::ATOMIC_ETH_BYTES)),
        CNP => np(i(false, false, false, CNP_RSVD_BYTES)),
        _ => return None,
    })
}

/// The block: see the module documentation.
#[derive(LogicBlock, Default)]
pub struct RxParse {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub tdata: Signal<In, Bits<512>>,
    pub tkeep: Signal<In, Bits<64>>,
    pub tlast: Signal<In, Bit>,
    pub tvalid: Signal<In, Bit>,
    pub hdr_valid: Signal<Out, Bit>,
    pub drop: Signal<Out, Bit>,
    pub drop_reason: Signal<Out, Bits<4>>,
    pub opcode: Signal<Out, Bits<8>>,
    pub dest_qpn: Signal<Out, Bits<24>>,
    pub psn: Signal<Out, Bits<24>>,
    pub ack_req: Signal<Out, Bit>,
    pub se: Signal<Out, Bit>,
    pub pad_cnt: Signal<Out, Bits<2>>,
    pub pkey: Signal<Out, Bits<16>>,
    pub src_ip: Signal<Out, Bits<32>>,
    pub dst_ip: Signal<Out, Bits<32>>,
    /// Destination MAC, first octet in bits 47:40.
    pub dst_mac: Signal<Out, Bits<48>>,
    pub udp_sport: Signal<Out, Bits<16>>,
    pub has_reth: Signal<Out, Bit>,
    pub reth_va: Signal<Out, Bits<64>>,
    pub reth_rkey: Signal<Out, Bits<32>>,
    pub reth_len: Signal<Out, Bits<32>>,
    /// AtomicETH swap (CMP_SWAP) or add (FETCH_ADD) data, and compare data (0x13 / 0x14).
    pub atom_swap: Signal<Out, Bits<64>>,
    pub atom_cmp: Signal<Out, Bits<64>>,
    pub has_aeth: Signal<Out, Bit>,
    pub aeth_syndrome: Signal<Out, Bits<8>>,
    pub aeth_msn: Signal<Out, Bits<24>>,
    pub has_immdt: Signal<Out, Bit>,
    pub immdt: Signal<Out, Bits<32>>,
    pub pay_off: Signal<Out, Bits<16>>,
    pub pay_len: Signal<Out, Bits<16>>,
    pub cnt_short: Signal<Out, Bits<32>>,
    pub cnt_ethertype: Signal<Out, Bits<32>>,
    pub cnt_ip_hdr: Signal<Out, Bits<32>>,
    pub cnt_ip_csum: Signal<Out, Bits<32>>,
    pub cnt_ip_len: Signal<Out, Bits<32>>,
    pub cnt_frag: Signal<Out, Bits<32>>,
    pub cnt_not_udp: Signal<Out, Bits<32>>,
    pub cnt_udp_port: Signal<Out, Bits<32>>,
    pub cnt_tver: Signal<Out, Bits<32>>,
    pub cnt_opcode: Signal<Out, Bits<32>>,
    pub cnt_payload: Signal<Out, Bits<32>>,
}

impl Logic for RxParse {
    /// No rust-hdl model: the block is Verilog text, checked in Verilator by the tests.
    fn update(&mut self) {}
    fn connect(&mut self) {
        self.hdr_valid.connect();
        self.drop.connect();
        self.drop_reason.connect();
        self.opcode.connect();
        self.dest_qpn.connect();
        self.psn.connect();
        self.ack_req.connect();
        self.se.connect();
        self.pad_cnt.connect();
        self.pkey.connect();
        self.src_ip.connect();
        self.dst_ip.connect();
        self.dst_mac.connect();
        self.udp_sport.connect();
        self.has_reth.connect();
        self.reth_va.connect();
        self.reth_rkey.connect();
        self.reth_len.connect();
        self.atom_swap.connect();
        self.atom_cmp.connect();
        self.has_aeth.connect();
        self.aeth_syndrome.connect();
        self.aeth_msn.connect();
        self.has_immdt.connect();
        self.immdt.connect();
        self.pay_off.connect();
        self.pay_len.connect();
        self.cnt_short.connect();
        self.cnt_ethertype.connect();
        self.cnt_ip_hdr.connect();
        self.cnt_ip_csum.connect();
        self.cnt_ip_len.connect();
        self.cnt_frag.connect();
        self.cnt_not_udp.connect();
        self.cnt_udp_port.connect();
        self.cnt_tver.connect();
        self.cnt_opcode.connect();
        self.cnt_payload.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(rxparse_verilog())
    }
}

/// `n` captured bytes from frame offset `k`, big-endian, as a Verilog concatenation.
fn be(k: usize, n: usize) -> String {
    be_in("hdr", k, n)
}

/// `n` bytes of the byte vector `v` from offset `k`, big-endian, as a Verilog concatenation.
fn be_in(v: &str, k: usize, n: usize) -> String {
    let parts: Vec<String> = (k..k + n)
        .map(|j| format!("{v}[{}:{}]", 8 * j + 7, 8 * j))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// The output fields: (output port, width, value in the check stage). The check stage
/// registers each value into `s_<port>`; the result stage copies it to the port.
fn out_fields() -> Vec<(&'static str, usize, String)> {
    let padc = format!("hdr[{}:{}]", 8 * (BTH_OFF + 1) + 5, 8 * (BTH_OFF + 1) + 4);
    vec![
        ("opcode", 8, "opc".into()),
        ("dest_qpn", 24, be(BTH_OFF + 5, 3)),
        ("psn", 24, be(BTH_OFF + 9, 3)),
        ("ack_req", 1, format!("hdr[{}]", 8 * (BTH_OFF + 8) + 7)),
        ("se", 1, format!("hdr[{}]", 8 * (BTH_OFF + 1) + 7)),
        ("pad_cnt", 2, padc),
        ("pkey", 16, be(BTH_OFF + 2, 2)),
        ("src_ip", 32, be(IP_OFF + 12, 4)),
        ("dst_ip", 32, be(IP_OFF + 16, 4)),
        ("dst_mac", 48, be(0, 6)),
        ("udp_sport", 16, be(UDP_OFF, 2)),
        ("has_reth", 1, "x_reth".into()),
        (
            "reth_va",
            64,
            format!("(x_reth | x_atom) ? {} : 64'd0", be(EXT_OFF, 8)),
        ),
        (
            "reth_rkey",
            32,
            format!("(x_reth | x_atom) ? {} : 32'd0", be(EXT_OFF + 8, 4)),
        ),
        (
            "reth_len",
            32,
            format!("x_reth ? {} : 32'd0", be(EXT_OFF + 12, 4)),
        ),
        (
            "atom_swap",
            64,
            format!("x_atom ? {} : 64'd0", be(EXT_OFF + 12, 8)),
        ),
        (
            "atom_cmp",
            64,
            format!("x_atom ? {} : 64'd0", be(EXT_OFF + 20, 8)),
        ),
        ("has_aeth", 1, "x_aeth".into()),
        (
            "aeth_syndrome",
            8,
            format!("x_aeth ? {} : 8'd0", be(EXT_OFF, 1)),
        ),
        (
            "aeth_msn",
            24,
            format!("x_aeth ? {} : 24'd0", be(EXT_OFF + 1, 3)),
        ),
        ("has_immdt", 1, "x_imm".into()),
        ("immdt", 32, "x_imm ? immv : 32'd0".into()),
        ("pay_off", 16, format!("16'd{EXT_OFF} + {{9'd0, ext}}")),
        ("pay_len", 16, "pay[15:0]".into()),
    ]
}

/// The generated module body: three stages (see the module documentation). The check
/// stage computes each drop condition on its own and registers them; the result stage
/// picks the first one in priority order. The `VERILATOR`-only idle guard spares the
/// simulator the check logic on cycles without a frame end; synthesis does not see it.
pub fn rxparse_verilog() -> String {
    let cap = 8 * CAP_BYTES;
    let fields = out_fields();
    let base = EXT_OFF + roce::ICRC_BYTES;
    let tver_bits = format!("hdr[{}:{}]", 8 * (BTH_OFF + 1) + 3, 8 * (BTH_OFF + 1));
    let pad_bits = format!("hdr[{}:{}]", 8 * (BTH_OFF + 1) + 5, 8 * (BTH_OFF + 1) + 4);
    let eth = roce::ETH_HDR_BYTES;
    // the drop conditions in priority order: (condition, reason)
    let conds: Vec<(String, u8)> = vec![
        (format!("flen < 32'd{eth}"), Reason::Short as u8),
        (
            format!("ethertype != 16'h{:04x}", roce::ETHERTYPE_IPV4),
            Reason::Ethertype as u8,
        ),
        ("flen < {15'd0, need}".into(), Reason::Short as u8),
        (
            format!("{} != 8'h{:02x}", be(IP_OFF, 1), roce::IPV4_VER_IHL),
            Reason::IpHdr as u8,
        ),
        ("fold2 != 16'hffff".into(), Reason::IpCsum as u8),
        (
            format!("{{16'd0, tot}} > flen - 32'd{eth}"),
            Reason::IpLen as u8,
        ),
        (
            format!("({} & 16'h3fff) != 16'd0", be(IP_OFF + 6, 2)),
            Reason::Frag as u8,
        ),
        (
            format!("{} != 8'd{}", be(IP_OFF + 9, 1), roce::IPV4_PROTO_UDP),
            Reason::NotUdp as u8,
        ),
        (
            format!("{} != 16'd{}", be(UDP_OFF + 2, 2), roce::UDP_PORT_ROCEV2),
            Reason::UdpPort as u8,
        ),
        (
            format!(
                "{{1'b0, {}}} + 17'd{} != {{1'b0, tot}}",
                be(UDP_OFF + 4, 2),
                roce::IPV4_HDR_BYTES
            ),
            Reason::IpLen as u8,
        ),
        (
            format!("{tver_bits} != 4'd{}", roce::BTH_TVER),
            Reason::Tver as u8,
        ),
        ("!op_ok".into(), Reason::Opcode as u8),
        (
            format!(
                "pay[16] || pay[1:0] != 2'd0 || (x_np && pay != 17'd0) || ({{15'd0, {pad_bits}}} > pay) || (x_fm && (pay == 17'd0 || {pad_bits} != 2'd0))"
            ),
            Reason::Payload as u8,
        ),
    ];
    let nk = conds.len();
    let mut s = format!(
        "// generated by rnic_rtl::rxparse: see rxparse.rs
reg first;
reg [31:0] nbytes;
reg [{c1}:0] hdr;
reg [31:0] flen;
reg p1_v;
reg p2_v;
reg [{k1}:0] kq;
reg [{k1}:0] kc;
reg [6:0] n;
reg [15:0] ethertype;
reg [15:0] tot;
reg [17:0] cs_a;
reg [17:0] cs_b;
reg [17:0] cs_c;
reg [17:0] cs_d;
reg [17:0] cs_e;
reg [19:0] cs_t;
reg [19:0] csum;
reg [19:0] csum_q;
reg [16:0] exth_t;
reg [16:0] pay_t;
reg [16:0] pay_q;
reg [16:0] fold1;
reg [15:0] fold2;
reg [7:0] opc;
reg op_ok;
reg [6:0] ext;
reg x_reth;
reg x_aeth;
reg x_imm;
reg x_np;
reg x_fm;
reg x_atom;
reg [16:0] need;
reg [16:0] pay;
reg [3:0] reason;
reg [31:0] immv;
",
        c1 = cap - 1,
        k1 = nk - 1
    );
    for (f, w, _) in &fields {
        let _ = writeln!(s, "reg [{}:0] s_{f};", w - 1);
    }
    s.push_str(
        "always @(*) begin
    n = 7'd0;
    cs_a = 18'd0; cs_b = 18'd0; cs_c = 18'd0; cs_d = 18'd0; cs_e = 18'd0; cs_t = 20'd0;
    exth_t = 17'd0; pay_t = 17'd0;
`ifdef VERILATOR
    if (tvalid) begin
`else
    begin
`endif
",
    );
    for k in 0..64 {
        let _ = writeln!(s, "    if (tkeep[{k}]) n = 7'd{};", k + 1);
    }
    // the IPv4 header checksum of beat 0 (ten 16-bit words, all in beat 0), summed as a tree
    // (pairs, then sums of sums) before the capture register: the check stage only folds it
    let w = |k: usize| format!("{{2'd0, {}}}", be_in("tdata", IP_OFF + 2 * k, 2));
    const _: () = assert!(roce::IPV4_HDR_BYTES == 20 && IP_OFF + 20 <= 64);
    let _ = writeln!(s, "    cs_a = {} + {};", w(0), w(1));
    let _ = writeln!(s, "    cs_b = {} + {};", w(2), w(3));
    let _ = writeln!(s, "    cs_c = {} + {};", w(4), w(5));
    let _ = writeln!(s, "    cs_d = {} + {};", w(6), w(7));
    let _ = writeln!(s, "    cs_e = {} + {};", w(8), w(9));
    s.push_str(
        "    cs_t = (({2'd0, cs_a} + {2'd0, cs_b}) + ({2'd0, cs_c} + {2'd0, cs_d})) + {2'd0, cs_e};
",
    );
    // the payload length (IPv4 total length - the opcode's headers and ICRC) of beat 0,
    // also before the capture register
    let hdrs = roce::IPV4_HDR_BYTES + roce::UDP_HDR_BYTES + roce::BTH_BYTES + roce::ICRC_BYTES;
    let ob = 8 * BTH_OFF;
    let _ = writeln!(
        s,
        "    exth_t = 17'd{hdrs};\n    case (tdata[{}:{ob}])",
        ob + 7
    );
    for op in 0..=255u8 {
        if let Some(o) = op_info(op) {
            let _ = writeln!(s, "        8'h{op:02x}: exth_t = 17'd{};", hdrs + o.ext);
        }
    }
    let _ = writeln!(
        s,
        "        default: ;\n    endcase\n    pay_t = {{1'b0, {}}} - exth_t;",
        be_in("tdata", IP_OFF + 2, 2)
    );
    s.push_str(
        "    end
end
// the check stage: every drop condition and field of the captured header, side by side
always @(*) begin
`ifdef VERILATOR
    if (!p1_v) begin
        ethertype = 16'd0; tot = 16'd0; csum = 20'd0; fold1 = 17'd0; fold2 = 16'd0;
        opc = 8'd0; op_ok = 1'b0; ext = 7'd0; x_reth = 1'b0; x_aeth = 1'b0; x_imm = 1'b0;
        x_np = 1'b0; x_fm = 1'b0; x_atom = 1'b0; immv = 32'd0; need = 17'd0; pay = 17'd0;
        kc = 0;
    end else begin
`else
    begin
`endif
",
    );
    let _ = writeln!(s, "    ethertype = {};", be(12, 2));
    let _ = writeln!(s, "    tot = {};", be(IP_OFF + 2, 2));
    s.push_str(
        "    csum = csum_q;
    fold1 = {1'b0, csum[15:0]} + {13'd0, csum[19:16]};
    fold2 = fold1[15:0] + {15'd0, fold1[16]};
",
    );
    let _ = writeln!(s, "    opc = {};", be(BTH_OFF, 1));
    s.push_str(
        "    op_ok = 1'b0; ext = 7'd0; x_reth = 1'b0; x_aeth = 1'b0; x_imm = 1'b0;
    x_np = 1'b0; x_fm = 1'b0;
",
    );
    // per opcode also the header bytes before the payload (+ ICRC) and the shortest frame, as
    // constants: no adds between the opcode and the length checks
    let _ = writeln!(s, "    need = 17'd{base};\n    case (opc)");
    for op in 0..=255u8 {
        if let Some(o) = op_info(op) {
            let _ = writeln!(
                s,
                "        8'h{op:02x}: begin op_ok = 1'b1; ext = 7'd{}; need = 17'd{}; \
                 x_reth = 1'b{}; x_aeth = 1'b{}; x_imm = 1'b{}; x_np = 1'b{}; x_fm = 1'b{}; end",
                o.ext,
                base + o.ext,
                o.reth as u8,
                o.aeth as u8,
                o.immdt as u8,
                o.no_payload as u8,
                o.first_middle as u8
            );
        }
    }
    let _ = writeln!(
        s,
        "        default: ;
    endcase
    x_atom = (opc == 8'h{cs:02x}) || (opc == 8'h{fa:02x});
    immv = x_reth ? {imm_r} : {imm_n};
    pay = pay_q;",
        cs = opcode::COMPARE_SWAP,
        fa = opcode::FETCH_ADD,
        imm_r = be(EXT_OFF + roce::RETH_BYTES, 4),
        imm_n = be(EXT_OFF, 4),
    );
    for (i, (c, _)) in conds.iter().enumerate() {
        let _ = writeln!(s, "    kc[{i}] = {c};");
    }
    s.push_str(
        "    end
end
// the result stage: the first condition that holds, in priority order
always @(*) begin
",
    );
    for (i, (_, r)) in conds.iter().enumerate() {
        let kw = if i == 0 { "if" } else { "else if" };
        let _ = writeln!(s, "    {kw} (kq[{i}]) reason = 4'd{r};");
    }
    s.push_str(
        "    else reason = 4'd0;
end
always @(posedge clock) begin
    if (rst) begin
        first <= 1'b1;
        nbytes <= 32'd0;
        p1_v <= 1'b0;
        p2_v <= 1'b0;
        hdr_valid <= 1'b0;
        drop <= 1'b0;
",
    );
    for (_, c) in REASONS {
        let _ = writeln!(s, "        {c} <= 32'd0;");
    }
    let b1 = cap - 1;
    let _ = write!(
        s,
        "    end else begin
        p1_v <= tvalid & tlast;
        p2_v <= p1_v;
        if (tvalid) begin
            first <= tlast;
            if (first) begin
                hdr[511:0] <= tdata;
                csum_q <= cs_t;
                pay_q <= pay_t;
                hdr[{b1}:512] <= 0;
                nbytes <= 32'd64;
            end else begin
                if (nbytes == 32'd64) hdr[{b1}:512] <= tdata[{b1m}:0];
                nbytes <= nbytes + 32'd64;
            end
            if (tlast) flen <= (first ? 32'd0 : nbytes) + {{25'd0, n}};
        end
        if (p1_v) begin
            kq <= kc;
",
        b1m = cap - 513,
    );
    for (f, _, e) in &fields {
        let _ = writeln!(s, "            s_{f} <= {e};");
    }
    s.push_str(
        "        end
        hdr_valid <= p2_v;
        drop <= p2_v & (reason != 4'd0);
        if (p2_v) begin
            drop_reason <= reason;
",
    );
    for (f, _, _) in &fields {
        let _ = writeln!(s, "            {f} <= s_{f};");
    }
    s.push_str("            case (reason)\n");
    for (r, c) in REASONS {
        let _ = writeln!(s, "                4'd{}: {c} <= {c} + 32'd1;", r as u8);
    }
    s.push_str(
        "                default: ;
            endcase
        end
    end
end
",
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::*;
    use crate::common::vlt::DynModel;
    use rand::Rng;
    use rand_chacha::ChaCha8Rng;

    /// All frames of the shared vectors, in order.
    fn all_frames() -> Vec<Vec<u8>> {
        vector_frames()
    }

    /// Everything the block reports for one frame.
    #[derive(Clone, Debug, PartialEq, Eq, Default)]
    struct Out {
        reason: u8,
        opcode: u8,
        qpn: u32,
        psn: u32,
        ack_req: bool,
        se: bool,
        pad: u8,
        pkey: u16,
        sip: u32,
        dip: u32,
        sport: u16,
        reth: Option<(u64, u32, u32)>,
        aeth: Option<(u8, u32)>,
        imm: Option<u32>,
        /// AtomicETH of CMP_SWAP / FETCH_ADD: (va, rkey, swap/add, compare).
        atom: Option<(u64, u32, u64, u64)>,
        pay_off: u16,
        pay_len: u16,
    }

    fn be(f: &[u8], at: usize, n: usize) -> u64 {
        f[at..at + n].iter().fold(0, |a, b| a << 8 | *b as u64)
    }

    /// Independent reference parse from the IBTA / RFC 791 / RFC 768 byte layout. Returns the
    /// drop reason code (0 = accepted) and, when accepted, the fields.
    fn reference(f: &[u8]) -> Out {
        let mut o = Out::default();
        let drop = |o: &mut Out, r: Reason| {
            o.reason = r as u8;
            o.clone()
        };
        if f.len() < 14 {
            return drop(&mut o, Reason::Short);
        }
        if f[12] != 0x08 || f[13] != 0x00 {
            return drop(&mut o, Reason::Ethertype);
        }
        // what follows the BTH, by opcode (IBTA table 38): (RETH, AETH, ImmDt, other bytes)
        let hdrs_after_bth = |op: u8| -> Option<(bool, bool, bool, usize)> {
            Some(match op {
                0x00..=0x02 | 0x04 | 0x07 | 0x08 | 0x0E => (false, false, false, 0),
                0x03 | 0x05 | 0x09 => (false, false, true, 0),
                0x06 | 0x0A | 0x0C => (true, false, false, 0),
                0x0B => (true, false, true, 0),
                0x0D | 0x0F | 0x10 | 0x11 => (false, true, false, 0),
                0x12 => (false, true, false, 8),
                0x13 | 0x14 => (false, false, false, 28),
                0x81 => (false, false, false, 16), // CNP (A17.9.3)
                _ => return None,
            })
        };
        let ext_len = |op: u8| {
            hdrs_after_bth(op).map_or(0, |(r, a, i, x)| {
                16 * r as usize + 4 * (a as usize + i as usize) + x
            })
        };
        // 14 Eth + 20 IP + 8 UDP + 12 BTH + 4 ICRC
        if f.len() < 58 || f.len() < 58 + ext_len(f[42]) {
            return drop(&mut o, Reason::Short);
        }
        let ip = &f[14..34];
        if ip[0] != 0x45 {
            return drop(&mut o, Reason::IpHdr);
        }
        let mut sum: u32 = ip
            .chunks(2)
            .map(|w| u16::from_be_bytes([w[0], w[1]]) as u32)
            .sum();
        while sum > 0xFFFF {
            sum = (sum & 0xFFFF) + (sum >> 16);
        }
        if sum != 0xFFFF {
            return drop(&mut o, Reason::IpCsum);
        }
        let tot = u16::from_be_bytes([ip[2], ip[3]]) as usize;
        if tot + 14 > f.len() {
            return drop(&mut o, Reason::IpLen);
        }
        if ip[6] & 0x20 != 0 || (ip[6] & 0x1F) != 0 || ip[7] != 0 {
            return drop(&mut o, Reason::Frag);
        }
        if ip[9] != 17 {
            return drop(&mut o, Reason::NotUdp);
        }
        if f[36..38] != [0x12, 0xB7] {
            return drop(&mut o, Reason::UdpPort);
        }
        if u16::from_be_bytes([f[38], f[39]]) as i64 != tot as i64 - 20 {
            return drop(&mut o, Reason::IpLen);
        }
        let bth = &f[42..54];
        if bth[1] & 0x0F != 0 {
            return drop(&mut o, Reason::Tver);
        }
        let Some((r, a, i, _)) = hdrs_after_bth(bth[0]) else {
            return drop(&mut o, Reason::Opcode);
        };
        o.opcode = bth[0];
        o.se = bth[1] & 0x80 != 0;
        o.pad = (bth[1] >> 4) & 3;
        o.pkey = be(f, 44, 2) as u16;
        o.qpn = be(f, 47, 3) as u32;
        o.ack_req = bth[8] & 0x80 != 0;
        o.psn = be(f, 51, 3) as u32;
        o.sip = be(f, 26, 4) as u32;
        o.dip = be(f, 30, 4) as u32;
        o.sport = be(f, 34, 2) as u16;
        if r {
            o.reth = Some((be(f, 54, 8), be(f, 62, 4) as u32, be(f, 66, 4) as u32));
        }
        if a {
            o.aeth = Some((f[54], be(f, 55, 3) as u32));
        }
        if i {
            o.imm = Some(be(f, if r { 70 } else { 54 }, 4) as u32);
        }
        if matches!(bth[0], 0x13 | 0x14) {
            o.atom = Some((
                be(f, 54, 8),
                be(f, 62, 4) as u32,
                be(f, 66, 8),
                be(f, 74, 8),
            ));
        }
        let ext = ext_len(bth[0]);
        o.pay_off = (54 + ext) as u16;
        let pay = tot as i64 - 20 - 8 - 12 - ext as i64 - 4;
        let no_payload = matches!(bth[0], 0x0C | 0x11..=0x14 | 0x81);
        let first_middle = matches!(bth[0], 0x00 | 0x01 | 0x06 | 0x07 | 0x0D | 0x0E);
        let bad = pay < 0
            || pay % 4 != 0
            || (no_payload && pay != 0)
            || (first_middle && (pay == 0 || o.pad != 0))
            || (o.pad as i64) > pay;
        if bad {
            return drop(&mut o, Reason::Payload);
        }
        o.pay_len = pay as u16;
        o
    }

    /// Recompute the IPv4 header checksum in place.
    fn fix_csum(f: &mut [u8]) {
        f[24] = 0;
        f[25] = 0;
        let mut sum: u32 = f[14..34]
            .chunks(2)
            .map(|w| u16::from_be_bytes([w[0], w[1]]) as u32)
            .sum();
        while sum > 0xFFFF {
            sum = (sum & 0xFFFF) + (sum >> 16);
        }
        f[24..26].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    }

    struct Bench {
        m: DynModel,
        r: ChaCha8Rng,
        /// (cycle of the frame's last beat, cycle in which hdr_valid was seen, outputs)
        results: Vec<(u64, u64, Out)>,
        lasts: Vec<u64>,
    }

    impl Bench {
        fn new(seed: u64) -> Bench {
            Self::of(seed, model(RxParse::default(), "rxparse_block"))
        }
        /// The synthesis form (no simulator-only guards: `model_synth_form`).
        fn synth(seed: u64) -> Bench {
            Self::of(seed, model_synth_form(RxParse::default(), "rxparse_block"))
        }
        fn of(seed: u64, mut m: DynModel) -> Bench {
            reset(&mut m);
            Bench {
                m,
                r: rng(seed),
                results: vec![],
                lasts: vec![],
            }
        }
        fn read(&self) -> Out {
            let m = &self.m;
            let g = |n: &str| m.get(n);
            let atomic = matches!(g("opcode") as u8, opcode::COMPARE_SWAP | opcode::FETCH_ADD);
            if !m.bit("drop") && !atomic {
                // zero on every other opcode (the VA / R_Key also without a RETH)
                assert_eq!((g("atom_swap"), g("atom_cmp")), (0, 0), "AtomicETH fields");
                if !m.bit("has_reth") {
                    assert_eq!((g("reth_va"), g("reth_rkey")), (0, 0), "RETH fields");
                }
            }
            Out {
                reason: if m.bit("drop") {
                    g("drop_reason") as u8
                } else {
                    0
                },
                opcode: g("opcode") as u8,
                qpn: g("dest_qpn") as u32,
                psn: g("psn") as u32,
                ack_req: m.bit("ack_req"),
                se: m.bit("se"),
                pad: g("pad_cnt") as u8,
                pkey: g("pkey") as u16,
                sip: g("src_ip") as u32,
                dip: g("dst_ip") as u32,
                sport: g("udp_sport") as u16,
                reth: m
                    .bit("has_reth")
                    .then(|| (g("reth_va"), g("reth_rkey") as u32, g("reth_len") as u32)),
                aeth: m
                    .bit("has_aeth")
                    .then(|| (g("aeth_syndrome") as u8, g("aeth_msn") as u32)),
                imm: m.bit("has_immdt").then(|| g("immdt") as u32),
                atom: atomic.then(|| {
                    (
                        g("reth_va"),
                        g("reth_rkey") as u32,
                        g("atom_swap"),
                        g("atom_cmp"),
                    )
                }),
                pay_off: g("pay_off") as u16,
                pay_len: g("pay_len") as u16,
            }
        }
        /// One cycle; the outputs sampled are those of the state before this cycle's edge.
        fn cycle(&mut self, data: &[u8; 64], keep: u64, last: bool, valid: bool) {
            self.m.set_bytes("tdata", data);
            self.m.set("tkeep", keep);
            self.m.set("tlast", last as u64);
            self.m.set("tvalid", valid as u64);
            let c = self.m.cycle;
            self.m.tick();
            if self.m.bit("hdr_valid") {
                let last = self
                    .lasts
                    .get(self.results.len())
                    .copied()
                    .unwrap_or(u64::MAX);
                let o = self.read();
                self.results.push((last, c, o));
            }
            if valid && last {
                self.lasts.push(c);
            }
        }
        fn send(&mut self, f: &[u8], idle: f64) {
            let n = f.len().div_ceil(64).max(1);
            for i in 0..n {
                while chance(&mut self.r, idle) {
                    let mut junk = [0u8; 64];
                    self.r.fill(&mut junk[..]);
                    let (k, l) = (self.r.random(), self.r.random());
                    self.cycle(&junk, k, l, false);
                }
                let c = &f[(64 * i).min(f.len())..(64 * i + 64).min(f.len())];
                let mut d = [0u8; 64];
                self.r.fill(&mut d[..]);
                d[..c.len()].copy_from_slice(c);
                let keep = if c.len() == 64 {
                    u64::MAX
                } else {
                    (1u64 << c.len()) - 1
                };
                self.cycle(&d, keep, i + 1 == n, true);
            }
        }
        fn drain(&mut self) {
            for _ in 0..4 {
                self.cycle(&[0; 64], 0, false, false);
            }
        }
        fn counters(&self) -> Vec<u64> {
            REASONS.iter().map(|(_, c)| self.m.get(c)).collect()
        }
        fn check(&self, frames: &[Vec<u8>]) {
            assert_eq!(self.results.len(), frames.len(), "one result per frame");
            for (i, (f, (last, seen, got))) in frames.iter().zip(&self.results).enumerate() {
                assert_eq!(*seen, last + 3, "frame {i}: latency");
                let want = reference(f);
                if want.reason == 0 {
                    assert_eq!(*got, want, "frame {i}");
                } else {
                    assert_eq!(got.reason, want.reason, "frame {i}: drop reason");
                }
            }
        }
    }

    #[test]
    fn vectors_parse_in_rtl() {
        let v = all_frames();
        let roce: Vec<&Vec<u8>> = v.iter().filter(|f| reference(f).reason == 0).collect();
        let other: Vec<&Vec<u8>> = v.iter().filter(|f| reference(f).reason != 0).collect();
        assert_eq!((roce.len(), other.len()), (180, 24));
        assert!(
            other
                .iter()
                .all(|f| reference(f).reason == Reason::Ethertype as u8)
        );
        // the reference sees every opcode class of the capture
        assert!(roce.iter().any(|f| f[42] == opcode::READ_REQUEST));
        assert!(roce.iter().any(|f| f[42] == opcode::ACKNOWLEDGE));
        // the atomics: their AtomicETH fields (bytes 54..81, partly in beat 1) are compared
        for op in [opcode::COMPARE_SWAP, opcode::FETCH_ADD] {
            let n = roce.iter().filter(|f| f[42] == op).count();
            assert!(n > 0, "{op:#x} in the capture");
            assert!(
                roce.iter()
                    .filter(|f| f[42] == op)
                    .all(|f| reference(f).atom.is_some())
            );
        }
        assert!(roce.iter().any(|f| f[42] == opcode::ATOMIC_ACKNOWLEDGE));
        let mut b = Bench::new(41);
        for (i, f) in v.iter().enumerate() {
            b.send(f, [0.0, 0.3, 0.7][i % 3]);
        }
        b.drain();
        b.check(&v);
        let mut want = vec![0u64; REASONS.len()];
        want[Reason::Ethertype as usize - 1] = 24;
        assert_eq!(b.counters(), want);
    }

    #[test]
    fn mutated_frames_in_rtl() {
        mutated_frames(Bench::new(43));
    }

    /// The same frames through the form synthesis builds (`model_synth_form`).
    #[test]
    fn mutated_frames_synthesis_form() {
        mutated_frames(Bench::synth(43));
    }

    fn mutated_frames(mut b: Bench) {
        let v: Vec<Vec<u8>> = all_frames()
            .into_iter()
            .filter(|f| reference(f).reason == 0)
            .collect();
        let mut r = rng(42);
        let mut frames = vec![];
        let mut expect = vec![];
        let mut push = |f: Vec<u8>, want: u8| {
            assert_eq!(reference(&f).reason, want, "reference on the mutated frame");
            frames.push(f);
            expect.push(want);
        };
        for (i, f) in v.iter().enumerate().step_by(3) {
            let mut g = f.clone();
            g[13] = 0xDD;
            push(g, Reason::Ethertype as u8);
            let mut g = f.clone();
            g[14] = 0x46;
            fix_csum(&mut g);
            push(g, Reason::IpHdr as u8);
            let mut g = f.clone();
            g[24] ^= 1 << r.random_range(0..8);
            push(g, Reason::IpCsum as u8);
            let mut g = f.clone();
            g[37] = 0xB6; // 4790
            push(g, Reason::UdpPort as u8);
            let mut g = f.clone();
            g[42] = 0x1F;
            push(g, Reason::Opcode as u8);
            let mut g = f.clone();
            // cut anywhere before the end of BTH + ICRC (a last beat keeps at least 1 byte)
            g.truncate(r.random_range(1..58));
            push(g, Reason::Short as u8);
            let mut g = f.clone();
            let tot = u16::from_be_bytes([g[16], g[17]]) + 1 + (i % 100) as u16;
            g[16..18].copy_from_slice(&tot.to_be_bytes());
            fix_csum(&mut g);
            push(g, Reason::IpLen as u8);
            let mut g = f.clone();
            g[20] |= 0x20; // MF
            fix_csum(&mut g);
            push(g, Reason::Frag as u8);
            let mut g = f.clone();
            g[23] = 6;
            fix_csum(&mut g);
            push(g, Reason::NotUdp as u8);
            let mut g = f.clone();
            g[43] |= 1;
            push(g, Reason::Tver as u8);
            // TTL changed and the checksum recomputed: still parses, same fields
            let mut g = f.clone();
            g[22] = g[22].wrapping_sub(1 + (i % 7) as u8);
            fix_csum(&mut g);
            assert_ne!(g[24..26], f[24..26]);
            push(g, 0);
            // Ethernet padding after the ICRC: stripped by the IPv4 total length
            let mut g = f.clone();
            g.extend(std::iter::repeat_n(0, 1 + i % 70));
            push(g, 0);
        }
        // payload rules: a truncated IPv4 total length (negative payload) and a pad on MIDDLE
        let (mut n_udp, mut n_pad) = (0, 0);
        for f in &v {
            if f[42] == opcode::SEND_MIDDLE {
                let mut g = f.clone();
                g[43] |= 0x10;
                push(g, Reason::Payload as u8);
            }
            // ImmDt variants (not in the capture): WRITE_ONLY_IMM puts ImmDt at bytes 70..73,
            // in beat 1; SEND_ONLY_IMM right after the BTH
            for (from, to, at) in [
                (
                    opcode::WRITE_ONLY,
                    opcode::WRITE_ONLY_IMM,
                    EXT_OFF + roce::RETH_BYTES,
                ),
                (opcode::SEND_ONLY, opcode::SEND_ONLY_IMM, EXT_OFF),
            ] {
                if f[42] == from {
                    let mut g = f.clone();
                    g[42] = to;
                    let imm: [u8; 4] = r.random();
                    g.splice(at..at, imm);
                    let tot = u16::from_be_bytes([g[16], g[17]]) + 4;
                    g[16..18].copy_from_slice(&tot.to_be_bytes());
                    g[38..40].copy_from_slice(&(tot - 20).to_be_bytes());
                    fix_csum(&mut g);
                    let want = reference(&g);
                    assert_eq!(want.imm, Some(u32::from_be_bytes(imm)));
                    push(g, 0);
                }
            }
            // atomics with random AtomicETH contents (the parser does not check the ICRC)
            if f[42] == opcode::COMPARE_SWAP || f[42] == opcode::FETCH_ADD {
                let mut g = f.clone();
                r.fill(&mut g[54..82]);
                let want = reference(&g);
                assert_eq!(want.atom.unwrap().3, be(&g, 74, 8));
                push(g, 0);
            }
            if f[42] == opcode::READ_REQUEST {
                let mut g = f.clone();
                let tot = u16::from_be_bytes([g[16], g[17]]) - 4;
                g[16..18].copy_from_slice(&tot.to_be_bytes());
                let ulen = u16::from_be_bytes([g[38], g[39]]) - 4;
                g[38..40].copy_from_slice(&ulen.to_be_bytes());
                fix_csum(&mut g);
                push(g, Reason::Payload as u8);
            }
            // a UDP length running past the IPv4 payload (issue 10)
            if f[42] == opcode::WRITE_ONLY {
                let mut g = f.clone();
                let ulen = u16::from_be_bytes([g[38], g[39]]) + 4;
                g[38..40].copy_from_slice(&ulen.to_be_bytes());
                push(g, Reason::IpLen as u8);
                // shorter than the IPv4 payload: part of the datagram not covered by UDP
                let mut g = f.clone();
                let ulen = u16::from_be_bytes([g[38], g[39]]) - 4;
                g[38..40].copy_from_slice(&ulen.to_be_bytes());
                push(g, Reason::IpLen as u8);
                n_udp += 1;
                // a CNP (A17.9.3) built from this frame's headers: BTH opcode 0x81, 16
                // reserved bytes, ICRC; accepted. With 4 payload bytes: Payload.
                for (extra, want) in [(0usize, 0u8), (4, Reason::Payload as u8)] {
                    let mut g = f[..54].to_vec();
                    g[42] = opcode::CNP;
                    g[43] &= 0x0F;
                    g.extend(std::iter::repeat_n(0, CNP_RSVD_BYTES + extra + 4));
                    let tot = (g.len() - 14) as u16;
                    g[16..18].copy_from_slice(&tot.to_be_bytes());
                    g[38..40].copy_from_slice(&(tot - 20).to_be_bytes());
                    fix_csum(&mut g);
                    if want == 0 {
                        let o = reference(&g);
                        assert_eq!((o.opcode, o.pay_off, o.pay_len), (opcode::CNP, 70, 0));
                    }
                    push(g, want);
                }
            }
            // a pad count larger than the payload: an empty SEND ONLY / WRITE ONLY with
            // PadCnt 3 (payload minus pad would underflow; issue 10)
            if f[42] == opcode::SEND_ONLY || f[42] == opcode::WRITE_ONLY {
                let ext = if f[42] == opcode::WRITE_ONLY { 16 } else { 0 };
                let mut g = f[..54 + ext].to_vec();
                g[43] = (g[43] & !0x30) | 0x30;
                g.extend([0, 0, 0, 0]); // ICRC position (not checked by the parser)
                let tot = (g.len() - 14) as u16;
                g[16..18].copy_from_slice(&tot.to_be_bytes());
                g[38..40].copy_from_slice(&(tot - 20).to_be_bytes());
                fix_csum(&mut g);
                push(g, Reason::Payload as u8);
                n_pad += 1;
            }
        }
        assert!(n_udp > 0 && n_pad > 0, "the issue-10 cases exercised");
        for (i, f) in frames.iter().enumerate() {
            b.send(f, [0.0, 0.5][i % 2]);
        }
        b.drain();
        b.check(&frames);
        let got: Vec<u8> = b.results.iter().map(|x| x.2.reason).collect();
        assert_eq!(got, expect);
        let want: Vec<u64> = REASONS
            .iter()
            .map(|(r, _)| expect.iter().filter(|e| **e == *r as u8).count() as u64)
            .collect();
        assert!(
            want.iter().all(|c| *c > 0),
            "every reason exercised: {want:?}"
        );
        assert_eq!(b.counters(), want);
    }

    /// The opcode table in the block agrees with the reference's on all 256 opcodes: the RC
    /// opcodes and the CNP.
    #[test]
    fn opcode_table() {
        for op in 0..=255u8 {
            assert_eq!(
                op_info(op).is_some(),
                op <= roce::RC_OPCODE_MAX || op == opcode::CNP,
                "{op:#x}"
            );
        }
    }
}
