//! perftest's out-of-band exchange over TCP (port 18515 by default), as perftest 4.5 / 6.x
//! speaks it without rdma_cm: every exchange is the client writing first and then reading the
//! server's answer of the same size, the server reading first. Our own implementation from the
//! protocol's facts:
//!
//! 1. versions: 16 bytes, a NUL-terminated version string ("6.06" in Debian 12's perftest);
//! 2. system data (remote version >= 5.32): cycle buffer, then cache line size, 4 bytes each,
//!    big-endian; each side takes the larger;
//! 3. path MTU (remote version >= 5.1): the `ibv_mtu` enum as decimal text, 2 bytes
//!    (>= 5.31); each side takes the smaller;
//! 4. one key message per QP: 108 bytes, `LID:OUT_READS:QPN:PSN:RKEY:VADDR:` in hex
//!    (`%04x:%04x:%06x:%06x:%08x:%016llx:`), the 16 GID bytes as `%02x:` each and the
//!    SRQ number `%08x:`, NUL-padded; the same message again is the "hand shake" that
//!    synchronises the two sides at each step;
//! 5. bandwidth reports (`xchg_bw_reports`): size, iterations (8 bytes from remote version
//!    5.33), peak, average Gb/s and message rate, each 8 bytes big-endian (doubles by their
//!    bit pattern);
//! 6. close: a last hand shake, then each side writes "done\0" and closes.

use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, Shutdown, TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// The version we announce.
pub const VERSION: &str = "6.06";
/// Size of the version field.
pub const VERSION_BYTES: usize = 16;
/// Size of a key message with GID.
pub const KEY_MSG_SIZE_GID: usize = 108;
/// Default TCP port.
pub const DEFAULT_PORT: u16 = 18515;

/// With RNIC_PERF_TRACE set: every message received on stderr.
fn trace(what: &str, b: &[u8]) {
    if std::env::var_os("RNIC_PERF_TRACE").is_some() {
        let t: String = b
            .iter()
            .map(|c| {
                if c.is_ascii_graphic() {
                    *c as char
                } else {
                    '.'
                }
            })
            .collect();
        eprintln!("rnic-perf: oob {what} {} bytes: {t}", b.len());
    }
}

/// One side's connection data (perftest's `pingpong_dest`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Dest {
    pub lid: u32,
    pub out_reads: u32,
    pub qpn: u32,
    pub psn: u32,
    pub rkey: u32,
    pub vaddr: u64,
    pub gid: [u8; 16],
    pub srqn: u32,
}

impl Dest {
    /// The RoCE v2 GID of an IPv4 address (::ffff:a.b.c.d).
    pub fn gid_v4(ip: Ipv4Addr) -> [u8; 16] {
        let mut g = [0u8; 16];
        g[10] = 0xff;
        g[11] = 0xff;
        g[12..].copy_from_slice(&ip.octets());
        g
    }

    /// The IPv4 address of an IPv4-mapped GID.
    pub fn ipv4(&self) -> Option<Ipv4Addr> {
        let g = &self.gid;
        (g[..10].iter().all(|b| *b == 0) && g[10] == 0xff && g[11] == 0xff)
            .then(|| Ipv4Addr::new(g[12], g[13], g[14], g[15]))
    }

    pub fn encode(&self) -> [u8; KEY_MSG_SIZE_GID] {
        let mut s = format!(
            "{:04x}:{:04x}:{:06x}:{:06x}:{:08x}:{:016x}:",
            self.lid & 0xffff,
            self.out_reads & 0xffff,
            self.qpn,
            self.psn,
            self.rkey,
            self.vaddr
        );
        for b in self.gid {
            s.push_str(&format!("{b:02x}:"));
        }
        s.push_str(&format!("{:08x}:", self.srqn));
        let mut m = [0u8; KEY_MSG_SIZE_GID];
        let n = s.len().min(KEY_MSG_SIZE_GID - 1);
        m[..n].copy_from_slice(&s.as_bytes()[..n]);
        m
    }

    pub fn decode(m: &[u8]) -> Result<Dest, String> {
        let end = m.iter().position(|b| *b == 0).unwrap_or(m.len());
        let s = std::str::from_utf8(&m[..end]).map_err(|e| format!("key message: {e}"))?;
        let f: Vec<&str> = s.split(':').collect();
        if f.len() < 22 {
            return Err(format!(
                "key message {s:?}: {} fields, expected 22 or more",
                f.len()
            ));
        }
        let h32 = |i: usize| {
            u32::from_str_radix(f[i], 16)
                .map_err(|e| format!("key message field {i} {:?}: {e}", f[i]))
        };
        let mut gid = [0u8; 16];
        for (k, g) in gid.iter_mut().enumerate() {
            *g = u8::from_str_radix(f[6 + k], 16)
                .map_err(|e| format!("key message GID byte {k} {:?}: {e}", f[6 + k]))?;
        }
        Ok(Dest {
            lid: h32(0)?,
            out_reads: h32(1)?,
            qpn: h32(2)?,
            psn: h32(3)?,
            rkey: h32(4)?,
            vaddr: u64::from_str_radix(f[5], 16)
                .map_err(|e| format!("key message vaddr {:?}: {e}", f[5]))?,
            gid,
            srqn: if f.len() > 22 && !f[22].is_empty() {
                h32(22)?
            } else {
                0
            },
        })
    }
}

/// A bandwidth report as perftest exchanges it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BwReport {
    pub size: u64,
    pub iters: u64,
    pub bw_peak: f64,
    pub bw_avg: f64,
    pub msg_rate: f64,
}

/// What the client sent that the serving side did not wait for in lockstep.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A key message / hand shake.
    Keys(Dest),
    /// "done": the peer closes.
    Done,
    /// Any other message (its bytes).
    Other(Vec<u8>),
    /// The peer closed the connection.
    Closed,
}

/// The TCP connection to the other perftest.
pub struct Oob {
    s: TcpStream,
    pub client: bool,
    pub remote_version: String,
    /// After the preamble: the negotiated cycle buffer and ibv_mtu enum.
    pub cycle_buffer: u32,
    pub mtu_enum: u32,
    /// Seconds to wait for the peer in a lockstep read.
    pub timeout: Duration,
    versions_done: bool,
    /// Called while a read waits (the simulator: advance the world, so the NIC keeps
    /// answering the wire, e.g. ACKing, while we wait for the peer's TCP message).
    pump: Option<Box<dyn FnMut()>>,
}

impl Oob {
    /// Client: connect to `host:port` and exchange versions, retried for `wait` (the server
    /// may start later; behind QEMU's user-mode forwarding a connect succeeds and is then
    /// closed while nothing listens in the guest).
    pub fn connect(host: &str, port: u16, wait: Duration) -> std::io::Result<Oob> {
        let t0 = Instant::now();
        loop {
            let r = TcpStream::connect((host, port)).and_then(|s| {
                s.set_nodelay(true)?;
                let mut o = Oob::new(s, true);
                o.timeout = Duration::from_secs(30);
                o.versions()?;
                o.timeout = Duration::from_secs(600);
                Ok(o)
            });
            match r {
                Ok(o) => return Ok(o),
                Err(e) if t0.elapsed() < wait => {
                    let _ = e;
                    std::thread::sleep(Duration::from_millis(500));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Server: accept one client on `port` (all addresses).
    pub fn accept(port: u16) -> std::io::Result<Oob> {
        let l = TcpListener::bind(("0.0.0.0", port))?;
        let (s, _) = l.accept()?;
        s.set_nodelay(true)?;
        Ok(Oob::new(s, false))
    }

    fn new(s: TcpStream, client: bool) -> Oob {
        Oob {
            s,
            client,
            remote_version: String::new(),
            cycle_buffer: 4096,
            mtu_enum: 5,
            timeout: Duration::from_secs(600),
            versions_done: false,
            pump: None,
        }
    }

    /// Something to run while waiting for the peer (see the field).
    pub fn set_pump(&mut self, pump: Box<dyn FnMut()>) {
        self.pump = Some(pump);
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> std::io::Result<()> {
        let Some(pump) = self.pump.as_mut() else {
            self.s.set_read_timeout(Some(self.timeout))?;
            return self.s.read_exact(buf);
        };
        let t0 = Instant::now();
        let mut got = 0;
        self.s.set_nonblocking(true)?;
        let r = loop {
            if got == buf.len() {
                break Ok(());
            }
            match self.s.read(&mut buf[got..]) {
                Ok(0) => {
                    break Err(std::io::Error::new(
                        ErrorKind::UnexpectedEof,
                        "failed to fill whole buffer",
                    ));
                }
                Ok(n) => got += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    if t0.elapsed() > self.timeout {
                        break Err(std::io::Error::new(
                            ErrorKind::TimedOut,
                            "the peer said nothing",
                        ));
                    }
                    pump();
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        self.s.set_nonblocking(false)?;
        r
    }

    /// One lockstep exchange of `mine.len()` bytes.
    pub fn xchg(&mut self, mine: &[u8]) -> std::io::Result<Vec<u8>> {
        let mut rem = vec![0u8; mine.len()];
        if self.client {
            self.s.write_all(mine)?;
            self.read_exact(&mut rem)?;
        } else {
            self.read_exact(&mut rem)?;
            self.s.write_all(mine)?;
        }
        trace("xchg", &rem);
        Ok(rem)
    }

    fn remote_version_at_least(&self, v: f64) -> bool {
        self.remote_version.parse::<f64>().is_ok_and(|r| r >= v)
    }

    fn versions(&mut self) -> std::io::Result<()> {
        let mut v = [0u8; VERSION_BYTES];
        v[..VERSION.len()].copy_from_slice(VERSION.as_bytes());
        let rv = self.xchg(&v)?;
        let end = rv.iter().position(|b| *b == 0).unwrap_or(rv.len());
        self.remote_version = String::from_utf8_lossy(&rv[..end]).into_owned();
        self.versions_done = true;
        Ok(())
    }

    /// Versions (unless done at connect), system data and MTU (`mtu_enum`: ibv_mtu 1..=5 we want); returns the MTU
    /// both use.
    pub fn preamble(&mut self, mtu_enum: u32) -> std::io::Result<u32> {
        if !self.versions_done {
            self.versions()?;
        }
        if self.remote_version_at_least(5.32) {
            let cb = self.xchg(&self.cycle_buffer.to_be_bytes())?;
            let rcb = u32::from_be_bytes([cb[0], cb[1], cb[2], cb[3]]);
            self.cycle_buffer = self.cycle_buffer.max(rcb);
            let _cl = self.xchg(&64u32.to_be_bytes())?;
        }
        self.mtu_enum = mtu_enum;
        if self.remote_version_at_least(5.1) {
            let mine = format!("{mtu_enum}");
            let n = if self.remote_version_at_least(5.31) {
                2
            } else {
                4
            };
            let mut m = vec![0u8; n];
            m[..mine.len().min(n)].copy_from_slice(&mine.as_bytes()[..mine.len().min(n)]);
            let r = self.xchg(&m)?;
            let end = r.iter().position(|b| *b == 0).unwrap_or(r.len());
            let rm: u32 = std::str::from_utf8(&r[..end])
                .ok()
                .and_then(|t| t.parse().ok())
                .unwrap_or(mtu_enum);
            if (1..=5).contains(&rm) && rm < mtu_enum {
                self.mtu_enum = rm;
            }
        }
        Ok(self.mtu_enum)
    }

    /// Exchange key messages (also the hand shake).
    pub fn keys(&mut self, mine: &Dest) -> std::io::Result<Dest> {
        let r = self.xchg(&mine.encode())?;
        Dest::decode(&r).map_err(|e| std::io::Error::new(ErrorKind::InvalidData, e))
    }

    /// Bandwidth reports, in perftest's order (report_per_port off).
    pub fn bw_reports(&mut self, mine: &BwReport) -> std::io::Result<BwReport> {
        let u = |r: Vec<u8>| {
            let mut b = [0u8; 8];
            b[..r.len().min(8)].copy_from_slice(&r[..r.len().min(8)]);
            u64::from_be_bytes(b)
        };
        let size = u(self.xchg(&mine.size.to_be_bytes())?);
        let iters = if self.remote_version_at_least(5.33) {
            u(self.xchg(&mine.iters.to_be_bytes())?)
        } else {
            let r = self.xchg(&(mine.iters as u32).to_be_bytes())?;
            u32::from_be_bytes([r[0], r[1], r[2], r[3]]) as u64
        };
        let bw_peak = f64::from_bits(u(self.xchg(&mine.bw_peak.to_bits().to_be_bytes())?));
        let bw_avg = f64::from_bits(u(self.xchg(&mine.bw_avg.to_bits().to_be_bytes())?));
        let msg_rate = f64::from_bits(u(self.xchg(&mine.msg_rate.to_bits().to_be_bytes())?));
        Ok(BwReport {
            size,
            iters,
            bw_peak,
            bw_avg,
            msg_rate,
        })
    }

    /// The closing hand shake and "done". `tolerant`: perftest's latency servers may say
    /// "done" (or close) instead of answering the hand shake; that ends the test normally.
    pub fn close(mut self, mine: &Dest, tolerant: bool) -> std::io::Result<()> {
        if tolerant {
            self.s.write_all(&mine.encode())?;
            let mut got = Vec::new();
            self.s.set_read_timeout(Some(self.timeout))?;
            let mut buf = [0u8; KEY_MSG_SIZE_GID];
            while got.len() < KEY_MSG_SIZE_GID {
                match self.read_exact(&mut buf[..1]) {
                    Ok(()) => got.push(buf[0]),
                    Err(e) if e.kind() == ErrorKind::UnexpectedEof => break,
                    Err(e) => return Err(e),
                }
                if got.starts_with(b"done") {
                    break;
                }
            }
            trace("close", &got);
            if !(got.len() == KEY_MSG_SIZE_GID || got.starts_with(b"done") || got.is_empty()) {
                return Err(std::io::Error::new(
                    ErrorKind::InvalidData,
                    format!("closing: {} unexpected bytes", got.len()),
                ));
            }
        } else {
            self.keys(mine)?;
        }
        let _ = self.s.write_all(b"done\0");
        let _ = self.s.shutdown(Shutdown::Write);
        Ok(())
    }

    /// Serving side: the next message from the client if one is there (non-blocking).
    /// Lockstep makes each read one whole message: the client waits for our answer.
    pub fn poll_incoming(&mut self) -> std::io::Result<Option<Incoming>> {
        self.s.set_nonblocking(true)?;
        let mut buf = vec![0u8; 4096];
        let r = self.s.read(&mut buf);
        self.s.set_nonblocking(false)?;
        let n = match r {
            Ok(0) => return Ok(Some(Incoming::Closed)),
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(None),
            Err(e) => return Err(e),
        };
        buf.truncate(n);
        trace("incoming", &buf);
        if n < KEY_MSG_SIZE_GID && buf.starts_with(b"done") {
            return Ok(Some(Incoming::Done));
        }
        if n < KEY_MSG_SIZE_GID && n > 8 {
            // a key message split by TCP: wait for the rest
            let mut rest = vec![0u8; KEY_MSG_SIZE_GID - n];
            self.read_exact(&mut rest)?;
            buf.extend_from_slice(&rest);
        }
        if buf.len() == KEY_MSG_SIZE_GID {
            return Ok(Some(match Dest::decode(&buf) {
                Ok(d) => Incoming::Keys(d),
                Err(_) => Incoming::Other(buf),
            }));
        }
        Ok(Some(Incoming::Other(buf)))
    }

    /// Serving side: answer a message received with [`Oob::poll_incoming`].
    pub fn answer(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.s.write_all(b)
    }

    /// Serving side: write "done" and close.
    pub fn finish(mut self) {
        let _ = self.s.write_all(b"done\0");
        let _ = self.s.shutdown(Shutdown::Both);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_message_round_trip_and_layout() {
        let d = Dest {
            lid: 0,
            out_reads: 1,
            qpn: 0x11,
            psn: 0xabcdef,
            rkey: 0x1234,
            vaddr: 0x5566_7788_99aa,
            gid: Dest::gid_v4(Ipv4Addr::new(10, 0, 0, 1)),
            srqn: 0,
        };
        let m = d.encode();
        let s = std::str::from_utf8(&m[..m.iter().position(|b| *b == 0).unwrap()]).unwrap();
        assert_eq!(
            s,
            "0000:0001:000011:abcdef:00001234:00005566778899aa:00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00:01:00000000:"
        );
        assert_eq!(s.len(), KEY_MSG_SIZE_GID - 1);
        assert_eq!(Dest::decode(&m).unwrap(), d);
        assert_eq!(d.ipv4(), Some(Ipv4Addr::new(10, 0, 0, 1)));
    }
}
