//! Replay a capture into one simulated NIC: `rnic-sim replay --pcap IN --out OUT [--config F]`.
//!
//! One NIC is set up through the verbs API from a [`ReplayConfig`] (JSON; [`Default`] when no
//! file is given): its port address, RC QPs (numbers from [`rnic::verbs::FIRST_QPN`] on, in
//! order) connected to one peer with the given PSNs and path MTU, receive WQEs posted from a
//! buffer per QP, and memory regions whose IOVAs and rkeys are printed ([`Setup`]). Its port is
//! cabled to the replay ([`World::detach_port`]): every frame of the capture goes into the
//! NIC's receive port in capture order, back to back at line rate (the capture's timestamps are
//! not kept; frames shorter than 60 bytes are padded as a MAC delivers them), through the
//! configured receive mode (`board` by default: the board's RX FIFO, which drops on overflow).
//! The world then runs until it has been quiet (no MMIO, nothing on the links, no new frame)
//! for `idle_cycles`, and every frame the NIC sent is the output ([`Report::write_pcap`]).
//! Deterministic: the same seed, configuration and capture give the same output bytes.

use crate::error::Error;
use crate::eth::{LinkConfig, RxMode, WireFrame};
use crate::world::{MAX_INJECT_BYTES, NS_PER_CYCLE, WorldConfig};
use crate::{SimNic, world};
use rnic::Rnic;
use rnic::verbs::{
    AccessFlags, ConnectAttr, Context, CqAttr, Endpoint, MemoryRegion, Mtu, PortAddr, QpCaps,
    RecvWr,
};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::net::Ipv4Addr;
use std::path::Path;
use std::time::Duration;

/// An access right, as written in the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    LocalWrite,
    RemoteWrite,
    RemoteRead,
    RemoteAtomic,
}

fn flags(a: &[Access]) -> AccessFlags {
    a.iter().fold(AccessFlags::empty(), |f, x| {
        f | match x {
            Access::LocalWrite => AccessFlags::LOCAL_WRITE,
            Access::RemoteWrite => AccessFlags::REMOTE_WRITE,
            Access::RemoteRead => AccessFlags::REMOTE_READ,
            Access::RemoteAtomic => AccessFlags::REMOTE_ATOMIC,
        }
    })
}

const ALL_ACCESS: [Access; 4] = [
    Access::LocalWrite,
    Access::RemoteWrite,
    Access::RemoteRead,
    Access::RemoteAtomic,
];

/// The receive side of the replayed port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RxSetting {
    /// The board's RX FIFO ([`LinkConfig::board`]): a frame that does not fit is dropped.
    Board,
    /// The link pauses while the NIC is not ready: nothing is lost.
    Pfc,
}

/// One RC QP, connected to the peer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QpConfig {
    /// The peer's QP number (the destination QP of what this QP sends).
    pub peer_qpn: u32,
    /// The first PSN the peer sends (the PSN this QP expects first).
    pub peer_psn: u32,
    /// The first PSN this QP sends.
    pub local_psn: u32,
    /// Path MTU in bytes (256, 512, 1024, 2048, 4096).
    pub mtu: u32,
    /// Remote access the QP grants.
    pub access: Vec<Access>,
    /// Receive WQEs posted (1..=rq_depth), each of `recv_bytes`.
    pub recv_wqes: u32,
    pub recv_bytes: u32,
}

impl Default for QpConfig {
    fn default() -> Self {
        QpConfig {
            peer_qpn: 0x11,
            peer_psn: 0,
            local_psn: 0,
            mtu: 4096,
            access: ALL_ACCESS.to_vec(),
            recv_wqes: 16,
            recv_bytes: 4096,
        }
    }
}

/// One memory region.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MrConfig {
    pub bytes: usize,
    pub access: Vec<Access>,
}

impl Default for MrConfig {
    fn default() -> Self {
        MrConfig {
            bytes: 64 * 1024,
            access: ALL_ACCESS.to_vec(),
        }
    }
}

/// What `rnic-sim replay` sets up. The default: port 02:00:00:00:00:02 / 10.0.0.2, peer
/// 02:00:00:00:00:01 / 10.0.0.1, two QPs (2 and 3) connected to peer QPs 0x11 and 0x12, PSNs
/// 0, path MTU 4096, all access rights, 16 receive WQEs of 4096 bytes each; one 64 KiB MR with
/// all access rights; the board's receive side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReplayConfig {
    /// This NIC's MAC ("02:00:00:00:00:02") and IPv4 address.
    pub mac: String,
    pub ipv4: Ipv4Addr,
    /// The peer every QP is connected to.
    pub peer_mac: String,
    pub peer_ipv4: Ipv4Addr,
    pub rx: RxSetting,
    pub qps: Vec<QpConfig>,
    pub mrs: Vec<MrConfig>,
    /// Cycles the world must stay quiet before the replay ends.
    pub idle_cycles: u64,
    /// The replay fails if the world is not quiet after this many cycles.
    pub max_cycles: u64,
}

impl Default for ReplayConfig {
    fn default() -> Self {
        ReplayConfig {
            mac: "02:00:00:00:00:02".into(),
            ipv4: Ipv4Addr::new(10, 0, 0, 2),
            peer_mac: "02:00:00:00:00:01".into(),
            peer_ipv4: Ipv4Addr::new(10, 0, 0, 1),
            rx: RxSetting::Board,
            qps: vec![
                QpConfig::default(),
                QpConfig {
                    peer_qpn: 0x12,
                    ..QpConfig::default()
                },
            ],
            mrs: vec![MrConfig::default()],
            idle_cycles: 20_000,
            max_cycles: 50_000_000,
        }
    }
}

impl ReplayConfig {
    /// Parse a JSON configuration (fields left out keep their defaults).
    pub fn from_json(text: &str) -> Result<ReplayConfig, Error> {
        serde_json::from_str(text).map_err(|e| Error::Input(format!("replay configuration: {e}")))
    }

    /// Read a JSON configuration file.
    pub fn load(path: &Path) -> Result<ReplayConfig, Error> {
        let text = std::fs::read_to_string(path).map_err(|err| Error::Io {
            path: path.display().to_string(),
            err,
        })?;
        Self::from_json(&text).map_err(|e| Error::Input(format!("{}: {e}", path.display())))
    }

    /// The configuration as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// Parse "02:00:00:00:00:01".
pub fn parse_mac(s: &str) -> Result<[u8; 6], Error> {
    let bad = || {
        Error::Input(format!(
            "MAC address {s:?}: expected six hex bytes a:b:c:d:e:f"
        ))
    };
    let mut m = [0u8; 6];
    let mut parts = s.split(':');
    for b in m.iter_mut() {
        let p = parts.next().ok_or_else(bad)?;
        if p.is_empty() || p.len() > 2 {
            return Err(bad());
        }
        *b = u8::from_str_radix(p, 16).map_err(|_| bad())?;
    }
    if parts.next().is_some() {
        return Err(bad());
    }
    Ok(m)
}

/// One QP as set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QpSetup {
    pub qpn: u32,
    pub peer_qpn: u32,
    /// The PSN the QP expects first.
    pub peer_psn: u32,
    pub local_psn: u32,
    pub mtu: u32,
}

/// One memory region as registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MrSetup {
    pub iova: u64,
    pub bytes: usize,
    pub lkey: u32,
    pub rkey: u32,
    pub access: u32,
}

/// What the replay set up: what a capture must address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setup {
    pub port: PortAddr,
    pub peer: PortAddr,
    pub qps: Vec<QpSetup>,
    /// The configured MRs, in configuration order.
    pub mrs: Vec<MrSetup>,
    /// The receive buffer of each QP (IOVA, bytes).
    pub recv_bufs: Vec<(u64, usize)>,
}

impl Setup {
    /// One line per object.
    pub fn describe(&self) -> String {
        let mac = |m: [u8; 6]| {
            m.iter()
                .map(|b| format!("{b:02x}"))
                .collect::<Vec<_>>()
                .join(":")
        };
        let mut s = format!(
            "port {} / {}, peer {} / {}\n",
            self.port.ipv4,
            mac(self.port.mac),
            self.peer.ipv4,
            mac(self.peer.mac)
        );
        for q in &self.qps {
            let _ = writeln!(
                s,
                "QP {} -> peer QP {:#x}: expects PSN {:#x}, sends from PSN {:#x}, MTU {}",
                q.qpn, q.peer_qpn, q.peer_psn, q.local_psn, q.mtu
            );
        }
        for (k, m) in self.mrs.iter().enumerate() {
            let _ = writeln!(
                s,
                "MR {k}: IOVA {:#x}, {} bytes, rkey {:#010x}, lkey {:#010x}, access {:#x}",
                m.iova, m.bytes, m.rkey, m.lkey, m.access
            );
        }
        s
    }
}

/// What came out of a replay.
#[derive(Debug, Clone)]
pub struct Report {
    pub setup: Setup,
    pub frames_in: usize,
    /// Every frame the NIC sent, in order.
    pub frames_out: Vec<WireFrame>,
    /// Engine counters that changed: (name, before, after).
    pub counters: Vec<(&'static str, u32, u32)>,
    /// Frames the receive FIFO dropped.
    pub rx_fifo_drops: u64,
    /// Cycles from the first frame fed to the end.
    pub cycles: u64,
}

impl Report {
    /// The summary `rnic-sim replay` prints.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "frames in {}, frames out {}, RX FIFO drops {}, {} cycles ({:.1} us)\n",
            self.frames_in,
            self.frames_out.len(),
            self.rx_fifo_drops,
            self.cycles,
            self.cycles as f64 * NS_PER_CYCLE / 1000.0
        );
        if self.counters.is_empty() {
            s.push_str("engine counters: none changed\n");
        } else {
            s.push_str("engine counters:");
            for (n, a, b) in &self.counters {
                let _ = write!(s, " {n} +{}", b.wrapping_sub(*a));
            }
            s.push('\n');
        }
        s
    }

    /// The frames the NIC sent as a pcap (simulated-time timestamps).
    pub fn write_pcap(&self, w: &mut impl std::io::Write) -> Result<(), Error> {
        crate::pcap::header().write_to(w)?;
        for f in &self.frames_out {
            let ns = (f.sent_at as f64 * NS_PER_CYCLE) as u64;
            crate::pcap::write_frame(w, Duration::from_nanos(ns), &f.data)?;
        }
        Ok(())
    }
}

/// The frames of a pcap capture (bytes): Ethernet link type only, every frame whole (not cut
/// by the snap length), 1..=9000 bytes.
pub fn parse_pcap(bytes: &[u8]) -> Result<Vec<Vec<u8>>, Error> {
    use pcap_file::pcap::PcapReader;
    let mut r = PcapReader::new(bytes).map_err(|e| {
        Error::Input(format!(
            "not a pcap capture ({e}); pcapng is not read, convert with `editcap -F pcap`"
        ))
    })?;
    let dl = r.header().datalink;
    if dl != pcap_file::DataLink::ETHERNET {
        return Err(Error::Input(format!(
            "capture link type {dl:?}: replay takes Ethernet captures"
        )));
    }
    let mut frames = Vec::new();
    while let Some(p) = r.next_packet() {
        let n = frames.len() + 1;
        let p = p.map_err(|e| Error::Input(format!("capture frame {n}: {e}")))?;
        if p.orig_len as usize != p.data.len() {
            return Err(Error::Input(format!(
                "capture frame {n}: {} of {} bytes captured (cut by the snap length)",
                p.data.len(),
                p.orig_len
            )));
        }
        if p.data.is_empty() || p.data.len() > MAX_INJECT_BYTES {
            return Err(Error::Input(format!(
                "capture frame {n}: {} bytes, a NIC port takes 1..={MAX_INJECT_BYTES}",
                p.data.len()
            )));
        }
        frames.push(p.data.into_owned());
    }
    Ok(frames)
}

/// Read a pcap file ([`parse_pcap`]).
pub fn read_pcap(path: &Path) -> Result<Vec<Vec<u8>>, Error> {
    let bytes = std::fs::read(path).map_err(|err| Error::Io {
        path: path.display().to_string(),
        err,
    })?;
    parse_pcap(&bytes).map_err(|e| Error::Input(format!("{}: {e}", path.display())))
}

/// Set up one NIC from `cfg` in a world of seed `seed`, feed it the frames `input` returns for
/// that setup (in order, back to back), run until quiet, and report what it sent.
pub fn run(
    cfg: &ReplayConfig,
    seed: u64,
    input: impl FnOnce(&Setup) -> Result<Vec<Vec<u8>>, Error>,
) -> Result<Report, Error> {
    let port = PortAddr::new(parse_mac(&cfg.mac)?, cfg.ipv4)?;
    let peer = PortAddr::new(parse_mac(&cfg.peer_mac)?, cfg.peer_ipv4)?;
    let link = match cfg.rx {
        RxSetting::Board => LinkConfig::board(),
        RxSetting::Pfc => LinkConfig {
            rx: RxMode::Pfc,
            ..LinkConfig::default()
        },
    };
    let w = world(WorldConfig {
        seed,
        nics: 1,
        link,
        ..WorldConfig::default()
    });
    let (_, rx_link) = w.borrow_mut().detach_port(0)?;
    let ctx = Context::new(Rnic::open(SimNic::new(&w, 0)?)?, port)?;
    let pd = ctx.alloc_pd()?;
    // room for every receive completion (an absurd total is refused by create_cq_with)
    let recv_total = cfg
        .qps
        .iter()
        .fold(64u32, |n, q| n.saturating_add(q.recv_wqes));
    let cq = ctx.create_cq_with(CqAttr {
        entries: recv_total.checked_next_power_of_two().unwrap_or(u32::MAX),
        irq: false,
        irq_vector: 0,
    })?;
    let mut mrs: Vec<MemoryRegion<'_, SimNic>> = Vec::new();
    for m in &cfg.mrs {
        mrs.push(pd.reg_mr(&ctx.alloc_buf(m.bytes)?, flags(&m.access))?);
    }
    let mut recv_mrs = Vec::new();
    let mut qps = Vec::new();
    let mut setup = Setup {
        port,
        peer,
        qps: Vec::new(),
        mrs: mrs
            .iter()
            .map(|m| MrSetup {
                iova: m.iova(),
                bytes: m.len(),
                lkey: m.lkey(),
                rkey: m.rkey(),
                access: m.access().bits(),
            })
            .collect(),
        recv_bufs: Vec::new(),
    };
    for q in &cfg.qps {
        let path_mtu = Mtu::from_bytes(q.mtu)?;
        let qp = pd.create_qp(
            &cq,
            &cq,
            QpCaps {
                max_recv_wr: q.recv_wqes.max(1),
                ..QpCaps::default()
            },
        )?;
        qp.set_local_psn(q.local_psn)?;
        qp.connect(
            &Endpoint {
                qpn: q.peer_qpn,
                psn: q.peer_psn,
                ipv4: peer.ipv4,
                mac: peer.mac,
            },
            &ConnectAttr {
                access: flags(&q.access),
                path_mtu,
                ..ConnectAttr::default()
            },
        )?;
        let bytes = (q.recv_wqes as usize * q.recv_bytes as usize).max(64);
        let rmr = pd.reg_mr(&ctx.alloc_buf(bytes)?, AccessFlags::LOCAL_WRITE)?;
        let wrs = (0..q.recv_wqes)
            .map(|k| {
                let off = k as usize * q.recv_bytes as usize;
                Ok(RecvWr::new(k as u64, rmr.sge(off, q.recv_bytes as usize)?))
            })
            .collect::<Result<Vec<_>, rnic::Error>>()?;
        if !wrs.is_empty() {
            qp.post_recv(&wrs)?;
        }
        setup.qps.push(QpSetup {
            qpn: qp.qpn(),
            peer_qpn: q.peer_qpn,
            peer_psn: q.peer_psn,
            local_psn: q.local_psn,
            mtu: q.mtu,
        });
        setup.recv_bufs.push((rmr.iova(), rmr.len()));
        recv_mrs.push(rmr);
        qps.push(qp);
    }
    let before = ctx.engine_counters()?;
    let frames = input(&setup)?;
    let frames_in = frames.len();
    let (start, mark) = {
        let mut w = w.borrow_mut();
        let mark = w.wire.len();
        for (k, f) in frames.into_iter().enumerate() {
            if f.len() > MAX_INJECT_BYTES || f.is_empty() {
                return Err(Error::Input(format!(
                    "frame {}: {} bytes, a NIC port takes 1..={MAX_INJECT_BYTES}",
                    k + 1,
                    f.len()
                )));
            }
            w.inject_rx(0, crate::extport::pad(f))?;
        }
        (w.cycle, mark)
    };
    {
        let mut w = w.borrow_mut();
        let mut idle = 0u64;
        let mut seen = w.wire.len();
        while idle < cfg.idle_cycles {
            if w.cycle - start > cfg.max_cycles {
                return Err(Error::Check(format!(
                    "the NIC was still busy after {} cycles (max_cycles)",
                    cfg.max_cycles
                )));
            }
            w.step();
            if w.quiet() && w.wire.len() == seen {
                idle += 1;
            } else {
                idle = 0;
                seen = w.wire.len();
            }
        }
    }
    let after = ctx.engine_counters()?;
    let counters = after
        .iter()
        .filter_map(|&(n, v)| {
            let b = before.iter().find(|x| x.0 == n).map_or(0, |x| x.1);
            (b != v).then_some((n, b, v))
        })
        .collect();
    let w = w.borrow();
    Ok(Report {
        setup,
        frames_in,
        frames_out: w.sent_by(0, mark).into_iter().cloned().collect(),
        counters,
        rx_fifo_drops: w.links[rx_link].stats.rx_fifo_drops,
        cycles: w.cycle - start,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_defaults_and_errors() {
        let c = ReplayConfig::from_json(r#"{"qps":[{"peer_qpn":5}]}"#).unwrap();
        assert_eq!(c.qps.len(), 1);
        assert_eq!(c.qps[0].mtu, 4096);
        assert_eq!(c.mac, ReplayConfig::default().mac);
        assert_eq!(
            ReplayConfig::from_json(&ReplayConfig::default().to_json()).unwrap(),
            ReplayConfig::default()
        );
        assert!(ReplayConfig::from_json(r#"{"qpz":[]}"#).is_err());
        assert!(ReplayConfig::from_json(r#"{"rx":"lossy"}"#).is_err());
        assert_eq!(parse_mac("2:0:0:0:0:ff").unwrap(), [2, 0, 0, 0, 0, 0xff]);
        for bad in [
            "",
            "02:00:00:00:00",
            "02:00:00:00:00:00:00",
            "0g:00:00:00:00:00",
        ] {
            assert!(parse_mac(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn bad_captures_are_clear_errors() {
        let e = read_pcap(Path::new("/nonexistent/x.pcap")).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/x.pcap"), "{e}");
        let e = parse_pcap(b"not a capture at all, really").unwrap_err();
        assert!(e.to_string().contains("not a pcap"), "{e}");
        // a header with another link type
        let mut h = crate::pcap::header();
        h.datalink = pcap_file::DataLink::RAW;
        let mut b = Vec::new();
        h.write_to(&mut b).unwrap();
        let e = parse_pcap(&b).unwrap_err();
        assert!(e.to_string().contains("Ethernet"), "{e}");
        // an oversized frame, a truncated record
        let mut b = Vec::new();
        crate::pcap::header().write_to(&mut b).unwrap();
        crate::pcap::write_frame(&mut b, Duration::ZERO, &[0u8; 60]).unwrap();
        crate::pcap::write_frame(&mut b, Duration::ZERO, &vec![0u8; 9001]).unwrap();
        let e = parse_pcap(&b).unwrap_err();
        assert!(e.to_string().contains("frame 2: 9001 bytes"), "{e}");
        let mut b = Vec::new();
        crate::pcap::header().write_to(&mut b).unwrap();
        crate::pcap::write_frame(&mut b, Duration::ZERO, &[0u8; 60]).unwrap();
        b.truncate(b.len() - 10);
        assert!(parse_pcap(&b).is_err());
        // a good one
        let mut b = Vec::new();
        crate::pcap::header().write_to(&mut b).unwrap();
        crate::pcap::write_frame(&mut b, Duration::ZERO, &[7u8; 64]).unwrap();
        assert_eq!(parse_pcap(&b).unwrap(), vec![vec![7u8; 64]]);
    }
}
