//! The independent packet oracles (`tests/oracle/`: a scapy + zlib ICRC check and a tshark
//! malformed-frame check) on the SoftRoCE vectors (`tests/vectors`), and on a copy with one
//! payload byte flipped (the ICRC oracle must flag exactly that frame). The data-path tests run
//! the same oracles on every capture our NICs write.

use rnic_tests::oracle::{icrc as icrc_oracle, show, tshark as tshark_oracle, verdicts};
use std::path::PathBuf;

fn vectors() -> PathBuf {
    let p = rnic_tests::vectors();
    assert!(
        p.exists(),
        "the SoftRoCE vectors are missing: {}",
        p.display()
    );
    p
}

/// Byte ranges of the frames in a little-endian microsecond pcap file.
fn frames(pcap: &[u8]) -> Vec<std::ops::Range<usize>> {
    assert_eq!(pcap[..4], [0xd4, 0xc3, 0xb2, 0xa1], "little-endian pcap");
    let mut off = 24;
    let mut out = vec![];
    while off + 16 <= pcap.len() {
        let incl = u32::from_le_bytes(pcap[off + 8..off + 12].try_into().unwrap()) as usize;
        out.push(off + 16..off + 16 + incl);
        off += 16 + incl;
    }
    assert_eq!(off, pcap.len());
    out
}

#[test]
fn oracles_pass_on_the_softroce_vectors() {
    let v = vectors();
    let o = icrc_oracle(&v);
    assert!(o.status.success(), "{}", show(&o));
    let got = verdicts(&o);
    assert_eq!(got.len(), 204, "{}", show(&o));
    assert_eq!(got.iter().filter(|x| x.1 == "ok").count(), 180);
    assert_eq!(got.iter().filter(|x| x.1 == "skip").count(), 24);

    let o = tshark_oracle(&v);
    assert!(o.status.success(), "{}", show(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.lines().any(|l| l == "frames 204 roce 180 malformed 0"),
        "{}",
        show(&o)
    );
}

#[test]
fn icrc_oracle_flags_exactly_the_corrupted_frame() {
    let mut pcap = std::fs::read(vectors()).unwrap();
    let fr = frames(&pcap);
    // the first RoCE frame with at least 64 bytes after the headers (Ethernet+IPv4+UDP+BTH)
    let (idx, range) = fr
        .iter()
        .enumerate()
        .find(|(_, r)| {
            let f = &pcap[(*r).clone()];
            f.len() >= 54 + 64 + 4 && f[12..14] == [8, 0] && f[36..38] == 4791u16.to_be_bytes()
        })
        .map(|(i, r)| (i, r.clone()))
        .expect("a RoCE frame with payload");
    pcap[range.start + 54 + 40] ^= 0x10;
    let dir = std::env::temp_dir().join(format!("rnic-oracles-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("flipped.pcap");
    std::fs::write(&path, &pcap).unwrap();

    let o = icrc_oracle(&path);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let bad: Vec<usize> = verdicts(&o)
        .into_iter()
        .filter(|x| x.1 == "bad")
        .map(|x| x.0)
        .collect();
    assert_eq!(bad, vec![idx + 1], "{}", show(&o));
    // the frame is still well-formed: tshark does not check the ICRC
    let t = tshark_oracle(&path);
    assert!(t.status.success(), "{}", show(&t));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn tshark_oracle_flags_a_truncated_frame() {
    let pcap = std::fs::read(vectors()).unwrap();
    let fr = frames(&pcap);
    // rewrite the capture with one RoCE frame cut inside its BTH (lengths fixed up)
    let cut = fr
        .iter()
        .position(|r| pcap[r.start + 36..r.start + 38] == 4791u16.to_be_bytes())
        .unwrap();
    let mut out = pcap[..24].to_vec();
    for (i, r) in fr.iter().enumerate() {
        let mut hdr = pcap[r.start - 16..r.start].to_vec();
        let mut f = &pcap[r.clone()];
        if i == cut {
            f = &f[..48];
            hdr[8..12].copy_from_slice(&48u32.to_le_bytes());
            hdr[12..16].copy_from_slice(&48u32.to_le_bytes());
        }
        out.extend_from_slice(&hdr);
        out.extend_from_slice(f);
    }
    let dir = std::env::temp_dir().join(format!("rnic-oracles-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cut.pcap");
    std::fs::write(&path, &out).unwrap();
    let t = tshark_oracle(&path);
    assert_eq!(t.status.code(), Some(1), "{}", show(&t));
    let o = icrc_oracle(&path);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let bad: Vec<usize> = verdicts(&o)
        .into_iter()
        .filter(|x| x.1 == "bad")
        .map(|x| x.0)
        .collect();
    assert_eq!(bad, vec![cut + 1]);
    std::fs::remove_dir_all(&dir).ok();
}

/// Our own frames with a non-zero traffic class (requests from NIC A: a SEND and an RDMA
/// WRITE spanning several packets; ACKs from NIC B) pass both oracles (the IPv4 header
/// checksum and the ICRC, which masks the TOS byte, stay right), and tshark reads the DSCP
/// of the traffic class with ECN ECT(0) in every RoCE frame either NIC sent.
#[test]
fn our_frames_with_a_traffic_class_pass_the_oracles_and_carry_dscp_ecn() {
    use rnic::verbs::{AccessFlags, ConnectAttr, Mtu, QpCaps, RecvWr, SendOp, SendWr, WcStatus};
    use rnic_sim::WorldConfig;
    // DSCP 46 (EF) with a stray low bit set, which must not reach the ECN field
    const TC: u8 = (46 << 2) | 1;
    let (w, ca, cb) = rnic_tests::verbs_pair(WorldConfig::default());
    let (pa, pb) = (ca.alloc_pd().unwrap(), cb.alloc_pd().unwrap());
    let (cqa, cqb) = (ca.create_cq(16).unwrap(), cb.create_cq(16).unwrap());
    let sbuf = ca.alloc_buf(8192).unwrap();
    let dbuf = cb.alloc_buf(8192).unwrap();
    let src = pa.reg_mr(&sbuf, AccessFlags::empty()).unwrap();
    let dst = pb
        .reg_mr(&dbuf, AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE)
        .unwrap();
    let qa = pa.create_qp(&cqa, &cqa, QpCaps::default()).unwrap();
    let qb = pb.create_qp(&cqb, &cqb, QpCaps::default()).unwrap();
    let attr = ConnectAttr {
        path_mtu: Mtu::Mtu1024,
        traffic_class: TC,
        ..ConnectAttr::default()
    };
    rnic_tests::connect_qps(&qa, &qb, &attr).unwrap();
    src.write(0, &rnic_tests::pattern(5, 8192)).unwrap();
    qb.post_recv(&[RecvWr::new(1, dst.sge(0, 2000).unwrap())])
        .unwrap();
    qa.post_send(&[
        SendWr::new(2, SendOp::Send).sge(src.sge(0, 1500).unwrap()),
        SendWr::new(
            3,
            SendOp::RdmaWrite {
                remote_addr: dst.remote_addr(4096).unwrap(),
                rkey: dst.rkey(),
            },
        )
        .sge(src.sge(100, 3000).unwrap()),
    ])
    .unwrap();
    let wa = cqa.wait(2, 4_000_000).unwrap();
    assert!(
        wa.len() == 2 && wa.iter().all(|c| c.status == WcStatus::Success),
        "{wa:?}"
    );
    assert_eq!(cqb.wait(1, 4_000_000).unwrap()[0].status, WcStatus::Success);
    let pcap = {
        let w = w.borrow();
        rnic_sim::pcap::to_pcap(w.wire.iter().map(|(_, f)| f)).unwrap()
    };
    let roce = rnic_tests::oracle::check_capture("tclass", &pcap);
    // 5 request packets (SEND 2 at MTU 1024, WRITE 3) and the ACK of the WRITE, which covers
    // the SEND too (ACK coalescing: the SEND is not the last WQE posted, so it asks for none)
    assert!(roce >= 6, "RoCE frames: {roce}");
    // tshark's reading of the DS field of every IPv4 frame
    let dir = std::env::temp_dir().join(format!("rnic-tclass-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tclass.pcap");
    std::fs::write(&path, &pcap).unwrap();
    let o = std::process::Command::new("tshark")
        .args(["-r", path.to_str().unwrap(), "-Y", "udp.dstport == 4791"])
        .args(["-T", "fields", "-E", "separator=/t"])
        .args(["-e", "ip.dsfield.dscp", "-e", "ip.dsfield.ecn"])
        .args(["-e", "infiniband.bth.opcode"])
        .output()
        .expect("tshark");
    assert!(o.status.success(), "{}", show(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), roce, "{text}");
    assert!(
        rows.iter().any(|r| r[2] == "17"),
        "ACKs in the capture: {text}"
    );
    for r in &rows {
        assert_eq!(&r[..2], ["46", "2"], "DSCP 46, ECN ECT(0): {text}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
