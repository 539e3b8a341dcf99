//! `rnic-sim replay` (`rnic_sim::replay`): a capture built here (a WRITE ONLY, a SEND ONLY and
//! a WRITE with a stale rkey, crafted by `rnic_tests::craft`) fed into one NIC set up from the
//! default configuration; the output capture holds the ACKs and the NAK, the same bytes for
//! the same seed.

use rnic_abi::queue::aeth;
use rnic_abi::roce::opcode;
use rnic_sim::replay::{self, ReplayConfig, Setup};
use rnic_tests::{craft, parse_roce};

fn capture(frames: &[Vec<u8>]) -> Vec<u8> {
    let mut b = Vec::new();
    rnic_sim::pcap::header().write_to(&mut b).unwrap();
    for (k, f) in frames.iter().enumerate() {
        rnic_sim::pcap::write_frame(&mut b, std::time::Duration::from_micros(k as u64), f).unwrap();
    }
    b
}

fn frames_for(s: &Setup) -> Vec<Vec<u8>> {
    let q = s.qps[0];
    let mr = s.mrs[0];
    let h = |psn| craft::Hdr {
        dmac: s.port.mac,
        smac: s.peer.mac,
        sip: s.peer.ipv4,
        dip: s.port.ipv4,
        sport: 0xC123,
        dqpn: q.qpn,
        psn,
        ackreq: true,
    };
    let data = rnic_tests::pattern(9, 3000);
    vec![
        craft::frame(
            &h(q.peer_psn),
            opcode::WRITE_ONLY,
            &craft::reth(mr.iova + 64, mr.rkey, 3000),
            &data,
        ),
        craft::frame(&h(q.peer_psn + 1), opcode::SEND_ONLY, &[], &data[..100]),
        craft::frame(
            &h(q.peer_psn + 2),
            opcode::WRITE_ONLY,
            &craft::reth(mr.iova, mr.rkey ^ 0x100, 8),
            &data[..8],
        ),
    ]
}

#[test]
fn replay_acks_a_crafted_capture_deterministically() {
    let dir = std::env::temp_dir().join(format!("rnic-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = ReplayConfig::default();
    let mut outs = Vec::new();
    for _ in 0..2 {
        let input = dir.join("in.pcap");
        let r = replay::run(&cfg, 3, |s| {
            // the capture goes through a file, as with the command
            std::fs::write(&input, capture(&frames_for(s))).unwrap();
            replay::read_pcap(&input)
        })
        .unwrap();
        let mut out = Vec::new();
        r.write_pcap(&mut out).unwrap();
        outs.push((r, out));
    }
    std::fs::remove_dir_all(&dir).ok();
    let (r, out) = &outs[0];
    assert_eq!(out, &outs[1].1, "same seed, same output capture");
    assert_eq!(r.frames_in, 3);
    assert_eq!(r.rx_fifo_drops, 0);
    let q = r.setup.qps[0];
    let mut rd = pcap_file::pcap::PcapReader::new(&out[..]).unwrap();
    let mut got = Vec::new();
    while let Some(p) = rd.next_packet() {
        let p = parse_roce(&p.unwrap().data).expect("a RoCE frame");
        assert_eq!((p.opcode, p.dqpn), (opcode::ACKNOWLEDGE, q.peer_qpn));
        got.push((p.psn, p.ext[0]));
    }
    assert_eq!(
        got,
        [
            (q.peer_psn, aeth::ACK),
            (q.peer_psn + 1, aeth::ACK),
            (q.peer_psn + 2, aeth::NAK_REM_ACCESS)
        ],
        "{}",
        r.summary()
    );
    let changed = |n: &str| {
        r.counters
            .iter()
            .find(|c| c.0 == n)
            .map(|c| c.2 - c.1)
            .unwrap_or(0)
    };
    // the NAKed WRITE is counted under nak_acc, not rx_req
    assert_eq!(changed("rx_req"), 2, "{}", r.summary());
    assert_eq!(changed("tx_acks"), 3, "{}", r.summary());
    assert_eq!(changed("cqe"), 1, "the SEND completed: {}", r.summary());
    assert_eq!(changed("nak_acc"), 1, "{}", r.summary());
    assert!(r.summary().contains("frames in 3, frames out 3"));
}
