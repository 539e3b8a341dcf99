//! rnic-perf: perftest for this NIC. It speaks perftest's out-of-band TCP exchange
//! ([`oob`]) so either side can be an unmodified `ib_write_bw`, `ib_send_bw`, `ib_read_bw`,
//! `ib_atomic_bw`, `ib_write_lat`, `ib_send_lat`, `ib_read_lat` or `ib_atomic_lat` (e.g. Linux
//! rdma_rxe), or another rnic-perf. The traffic loops are in
//! [`engine`], the only module that uses the verbs API.

pub mod engine;
pub mod oob;

use std::fmt::Write as _;

/// The tests, named like perftest's binaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestKind {
    WriteBw,
    SendBw,
    ReadBw,
    AtomicBw,
    WriteLat,
    SendLat,
    ReadLat,
    AtomicLat,
}

/// perftest's `-A`: which atomic the atomic tests post (FETCH_AND_ADD by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomicType {
    /// FETCH & ADD of 1 (perftest's ATOMIC_ADD_VALUE)
    FetchAdd,
    /// COMPARE & SWAP with compare 0, swap 0 (perftest's values; `--verify` chains them)
    CmpSwap,
}

impl AtomicType {
    pub fn parse(s: &str) -> Option<AtomicType> {
        match s {
            "FETCH_AND_ADD" => Some(AtomicType::FetchAdd),
            "CMP_AND_SWAP" => Some(AtomicType::CmpSwap),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            AtomicType::FetchAdd => "FETCH_AND_ADD",
            AtomicType::CmpSwap => "CMP_AND_SWAP",
        }
    }
}

/// perftest's atomic message size (DEF_SIZE_ATOMIC).
pub const ATOMIC_SIZE: u64 = 8;

impl TestKind {
    pub fn parse(s: &str) -> Option<TestKind> {
        Some(match s {
            "write_bw" => TestKind::WriteBw,
            "send_bw" => TestKind::SendBw,
            "read_bw" => TestKind::ReadBw,
            "atomic_bw" => TestKind::AtomicBw,
            "write_lat" => TestKind::WriteLat,
            "send_lat" => TestKind::SendLat,
            "read_lat" => TestKind::ReadLat,
            "atomic_lat" => TestKind::AtomicLat,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            TestKind::WriteBw => "write_bw",
            TestKind::SendBw => "send_bw",
            TestKind::ReadBw => "read_bw",
            TestKind::AtomicBw => "atomic_bw",
            TestKind::WriteLat => "write_lat",
            TestKind::SendLat => "send_lat",
            TestKind::ReadLat => "read_lat",
            TestKind::AtomicLat => "atomic_lat",
        }
    }
    pub fn is_lat(self) -> bool {
        matches!(
            self,
            TestKind::WriteLat | TestKind::SendLat | TestKind::ReadLat | TestKind::AtomicLat
        )
    }
    pub fn is_atomic(self) -> bool {
        matches!(self, TestKind::AtomicBw | TestKind::AtomicLat)
    }
    /// perftest's default message size and iterations.
    pub fn defaults(self) -> (u64, u64) {
        if self == TestKind::AtomicBw {
            (ATOMIC_SIZE, 5000)
        } else if self == TestKind::AtomicLat {
            (ATOMIC_SIZE, 1000)
        } else if self.is_lat() {
            (2, 1000)
        } else {
            (65536, 5000)
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Server,
    Client,
}

/// What to run (perftest's main flags).
#[derive(Debug, Clone)]
pub struct Params {
    pub test: TestKind,
    /// `-s`
    pub size: u64,
    /// `-a`: 2 B .. 8 MiB (capped by `max_size`)
    pub all: bool,
    pub max_size: u64,
    /// `-n`, per QP
    pub iters: u64,
    /// `-q`
    pub qps: u32,
    /// `-m`, bytes
    pub mtu: u32,
    /// `-t`
    pub tx_depth: u32,
    /// `-D`, wall-clock seconds of posting (bandwidth tests)
    pub duration: Option<f64>,
    /// the server's address (client mode)
    pub server: Option<String>,
    /// `-p`
    pub port: u16,
    /// Server: compare every received SEND with the pattern the peer (rnic-perf or
    /// tests/interop's rxe-check) sends. Client: check READ data, and every atomic's original
    /// value and the final values (see `engine`).
    pub verify: bool,
    /// `-A` (atomic tests)
    pub atomic: AtomicType,
}

impl Params {
    pub fn mode(&self) -> Mode {
        if self.server.is_some() {
            Mode::Client
        } else {
            Mode::Server
        }
    }
}

/// One line of the result table.
#[derive(Debug, Clone, Default)]
pub struct Row {
    pub bytes: u64,
    pub iters: u64,
    pub msgs: u64,
    pub bytes_total: u64,
    /// simulated (device) time of the run
    pub device_ns: u64,
    pub wall_seconds: f64,
    pub gbps: f64,
    pub mpps: f64,
    /// latency, one way (half the round trip), device time, microseconds
    pub t_min: f64,
    pub t_max: f64,
    pub t_typical: f64,
    pub t_avg: f64,
    /// round trip in wall-clock microseconds (median): what the far side's speed costs
    pub rtt_wall_typical: f64,
}

impl Row {
    pub fn bw(bytes: u64, iters: u64, msgs: u64, ns: u64, wall: f64) -> Row {
        let total = bytes * msgs;
        Row {
            bytes,
            iters,
            msgs,
            bytes_total: total,
            device_ns: ns,
            wall_seconds: wall,
            gbps: total as f64 * 8.0 / ns as f64,
            mpps: msgs as f64 * 1e3 / ns as f64,
            ..Row::default()
        }
    }

    pub fn lat(bytes: u64, iters: u64, ns: &mut [u64], wall_us: &mut [f64], wall: f64) -> Row {
        ns.sort_unstable();
        wall_us.sort_by(|a, b| a.total_cmp(b));
        let us = |v: u64| v as f64 / 2.0 / 1e3;
        let n = ns.len().max(1);
        Row {
            bytes,
            iters,
            msgs: iters,
            wall_seconds: wall,
            t_min: ns.first().map(|v| us(*v)).unwrap_or(0.0),
            t_max: ns.last().map(|v| us(*v)).unwrap_or(0.0),
            t_typical: ns.get(ns.len() / 2).map(|v| us(*v)).unwrap_or(0.0),
            t_avg: ns.iter().map(|v| us(*v)).sum::<f64>() / n as f64,
            rtt_wall_typical: wall_us.get(wall_us.len() / 2).copied().unwrap_or(0.0),
            ..Row::default()
        }
    }
}

/// What a run measured.
#[derive(Debug, Clone)]
pub struct Report {
    pub test: TestKind,
    pub mode: Mode,
    pub mtu: u32,
    pub qps: u32,
    pub tx_depth: u32,
    pub remote_version: String,
    pub peer: String,
    pub rows: Vec<Row>,
    /// successful completions (every completion is checked; an error fails the run)
    pub completions: u64,
    pub wall_seconds: f64,
    /// messages compared byte by byte with the pattern (`--verify`), or atomics whose
    /// original value was checked
    pub verified: u64,
    /// atomic tests: the atomic posted, and what `--verify` checked
    pub atomic_note: Option<String>,
}

impl Report {
    /// perftest's table.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let line = "---------------------------------------------------------------------------------------\n";
        let _ = writeln!(
            s,
            " RDMA_{} {} test (rnic-perf, {} side)",
            self.test.name(),
            if self.test.is_lat() { "Latency" } else { "BW" },
            if self.mode == Mode::Server {
                "server"
            } else {
                "client"
            }
        );
        let _ = writeln!(
            s,
            " Connection type : RC   Number of qps : {}   MTU : {}[B]   TX depth : {}",
            self.qps, self.mtu, self.tx_depth
        );
        let _ = writeln!(
            s,
            " Peer : {}   peer perftest version : {}",
            self.peer, self.remote_version
        );
        s.push_str(line);
        if self.test.is_lat() {
            s.push_str(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]   rtt_wall_typical[usec]\n");
            for r in &self.rows {
                let _ = writeln!(
                    s,
                    " {:<6} {:<10} {:>14.3} {:>14.3} {:>16.3} {:>14.3} {:>16.1}",
                    r.bytes, r.iters, r.t_min, r.t_max, r.t_typical, r.t_avg, r.rtt_wall_typical
                );
            }
        } else {
            s.push_str(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n");
            for r in &self.rows {
                let _ = writeln!(
                    s,
                    " {:<10} {:<10} {:>16.2} {:>20.2} {:>15.6}",
                    r.bytes, r.iters, r.gbps, r.gbps, r.mpps
                );
            }
        }
        s.push_str(line);
        let _ = writeln!(
            s,
            " completions ok: {}   wall: {:.1} s   (rates in device time at the nominal clock; the peer's speed bounds them)",
            self.completions, self.wall_seconds
        );
        if let Some(n) = &self.atomic_note {
            let _ = writeln!(s, " {n}");
        } else if self.verified > 0 {
            let _ = writeln!(
                s,
                " data: {} messages compared byte by byte: ok",
                self.verified
            );
        }
        s
    }

    /// The same as JSON (serde_json: the peer's strings come from the wire and are escaped).
    pub fn json(&self) -> String {
        let rows: Vec<serde_json::Value> = self
            .rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "bytes": r.bytes,
                    "iterations": r.iters,
                    "messages": r.msgs,
                    "bytes_total": r.bytes_total,
                    "device_ns": r.device_ns,
                    "wall_seconds": r.wall_seconds,
                    "bw_gbps": r.gbps,
                    "msg_rate_mpps": r.mpps,
                    "t_min_us": r.t_min,
                    "t_max_us": r.t_max,
                    "t_typical_us": r.t_typical,
                    "t_avg_us": r.t_avg,
                    "rtt_wall_typical_us": r.rtt_wall_typical,
                })
            })
            .collect();
        serde_json::json!({
            "test": self.test.name(),
            "side": if self.mode == Mode::Server { "server" } else { "client" },
            "mtu": self.mtu,
            "qps": self.qps,
            "tx_depth": self.tx_depth,
            "peer": self.peer,
            "peer_version": self.remote_version,
            "completions_ok": self.completions,
            "wall_seconds": self.wall_seconds,
            "verified": self.verified,
            "atomic": self.atomic_note,
            "rows": rows,
        })
        .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--json` is valid JSON with the fields a script reads, whatever the peer sent as its
    /// perftest version (a wire string: quotes, backslashes, control characters).
    #[test]
    fn json_report_parses_and_escapes_wire_strings() {
        let r = Report {
            test: TestKind::WriteBw,
            mode: Mode::Client,
            mtu: 4096,
            qps: 2,
            tx_depth: 64,
            remote_version: "6.06\"\\\n\u{1}".into(),
            peer: "10.0.0.1".into(),
            rows: vec![Row {
                bytes: 4096,
                iters: 200,
                gbps: 95.08,
                ..Row::default()
            }],
            completions: 200,
            wall_seconds: 0.25,
            verified: 0,
            atomic_note: None,
        };
        let v: serde_json::Value = serde_json::from_str(&r.json()).expect("valid JSON");
        assert_eq!(v["test"], "write_bw");
        assert_eq!(v["side"], "client");
        assert_eq!(v["peer_version"], "6.06\"\\\n\u{1}");
        assert_eq!(v["completions_ok"], 200);
        assert_eq!(v["rows"][0]["bytes"], 4096);
        assert_eq!(v["rows"][0]["bw_gbps"], 95.08);
    }
}
