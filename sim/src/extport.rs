//! An external Ethernet port: NIC 0's MAC port attached to a socket outside the simulator, in
//! the framing of QEMU's `-netdev stream` / `-netdev dgram` (and the legacy `socket`) backends,
//! so frames flow between the Verilated RTL and a real kernel (Linux rdma_rxe in a VM) or a
//! second simulator process.
//!
//! Endpoints ([`PortEndpoint::parse`]):
//! * `unix:PATH`: listen on a Unix stream socket; every frame is a 4-byte big-endian length and
//!   the frame (QEMU `-netdev stream,server=off,addr.type=unix,addr.path=PATH`);
//! * `unix-connect:PATH`: the same, connecting to QEMU listening there
//!   (`-netdev stream,server=on,addr.type=unix,addr.path=PATH`): lossless, the stream pauses
//!   while QEMU is slow to read (a datagram socket drops when its buffer overflows);
//! * `tcp:PORT`: the same on 127.0.0.1:PORT (`-netdev stream,...,addr.type=inet`);
//! * `udp:LPORT:RPORT`: one frame a datagram, bound to 127.0.0.1:LPORT, sent to 127.0.0.1:RPORT
//!   (`-netdev dgram,...,local.port=RPORT,remote.port=LPORT`, or two simulators facing each
//!   other).
//!
//! The host side of the port: a reader thread answers ARP requests for the port's IPv4 address
//! (as the host's network stack would for the NIC's address; the engine itself has no ARP) and
//! learns neighbours from ARP and IPv4 frames ([`PortHandle::resolve`] asks by ARP when one is
//! unknown). Other frames addressed to the port's MAC go to the NIC, padded to the Ethernet
//! minimum of 60 bytes as a MAC would deliver them. Frames the NIC sends shorter than 60 bytes
//! are padded too. Every frame on the port, both directions, goes to a pcap (wall-clock
//! timestamps: the guest is not deterministic).
//!
//! Time: the simulator runs as fast as it can. When nothing moved on the port for
//! [`IDLE_CYCLES`] and the NIC's links and MMIO are quiet, each further [`IDLE_STEP`] cycles
//! wait up to [`IDLE_WAIT`] for a frame from outside (woken at once by one): simulated time
//! then crawls instead of burning a core while the guest thinks.

use crate::eth::{Link, LinkConfig};
use crate::world::{Attachment, CLOCK_HZ, World};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, UdpSocket};
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The `to`/`from` index of the links that end outside the world.
pub const EXT: usize = usize::MAX;
/// Cycles without a frame on the port before the simulator starts waiting for the outside.
pub const IDLE_CYCLES: u64 = 4096;
/// Cycles simulated between two waits while idle.
pub const IDLE_STEP: u64 = 256;
/// Longest wait for a frame from outside while idle.
pub const IDLE_WAIT: Duration = Duration::from_millis(1);
/// Ethernet minimum frame without FCS.
pub const ETH_MIN: usize = 60;

/// Where the port's far side is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortEndpoint {
    Unix(PathBuf),
    /// Connect to a listening Unix stream socket (QEMU `-netdev stream,server=on`), retried
    /// for 60 s: a lossless cable (the stream pauses when QEMU is slow to read).
    UnixConnect(PathBuf),
    Tcp(u16),
    Udp {
        local: u16,
        remote: u16,
    },
}

impl PortEndpoint {
    /// `unix:PATH`, `tcp:PORT` or `udp:LPORT:RPORT`.
    pub fn parse(s: &str) -> Result<PortEndpoint, String> {
        let (kind, rest) = s.split_once(':').ok_or_else(|| {
            format!("port endpoint {s:?}: expected unix:PATH, tcp:PORT or udp:LPORT:RPORT")
        })?;
        let port = |p: &str| {
            p.parse::<u16>()
                .map_err(|e| format!("port endpoint {s:?}: bad port {p:?}: {e}"))
        };
        match kind {
            "unix" if !rest.is_empty() => Ok(PortEndpoint::Unix(rest.into())),
            "unix-connect" if !rest.is_empty() => Ok(PortEndpoint::UnixConnect(rest.into())),
            "tcp" => Ok(PortEndpoint::Tcp(port(rest)?)),
            "udp" => {
                let (l, r) = rest
                    .split_once(':')
                    .ok_or_else(|| format!("port endpoint {s:?}: expected udp:LPORT:RPORT"))?;
                Ok(PortEndpoint::Udp {
                    local: port(l)?,
                    remote: port(r)?,
                })
            }
            _ => Err(format!(
                "port endpoint {s:?}: expected unix:PATH, tcp:PORT or udp:LPORT:RPORT"
            )),
        }
    }
}

/// Counters of the port.
#[derive(Debug, Clone, Copy, Default)]
pub struct PortStats {
    /// Frames from outside handed to the NIC.
    pub to_nic: u64,
    /// Frames the NIC sent out.
    pub from_nic: u64,
    /// ARP requests for our address answered.
    pub arp_replies: u64,
    /// ARP requests the port sent (resolving a neighbour).
    pub arp_requests: u64,
    /// Frames from outside not for the NIC (other MACs, IPv6 neighbour discovery, ...).
    pub ignored: u64,
    /// Frames the NIC sent while nothing was connected.
    pub unsent: u64,
}

enum Writer {
    Stream(Box<dyn Write + Send>),
    Udp(UdpSocket, SocketAddr),
}

struct Shared {
    writer: Option<Writer>,
    pcap: Option<BufWriter<File>>,
    neigh: HashMap<Ipv4Addr, [u8; 6]>,
    stats: PortStats,
    connected: bool,
    error: Option<String>,
}

impl Shared {
    fn capture(&mut self, f: &[u8]) {
        if let Some(p) = &mut self.pcap {
            let ts = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default();
            let _ = crate::pcap::write_frame(p, ts, f);
        }
    }

    /// Put a frame on the wire (and in the capture). False when nothing is connected.
    fn send(&mut self, f: &[u8]) -> bool {
        self.capture(f);
        match &mut self.writer {
            Some(Writer::Stream(w)) => {
                let mut b = Vec::with_capacity(f.len() + 4);
                b.extend_from_slice(&(f.len() as u32).to_be_bytes());
                b.extend_from_slice(f);
                if w.write_all(&b).and_then(|_| w.flush()).is_err() {
                    self.writer = None;
                    self.connected = false;
                    return false;
                }
                true
            }
            Some(Writer::Udp(s, to)) => s.send_to(f, *to).is_ok(),
            None => false,
        }
    }

    fn learn(&mut self, ip: Ipv4Addr, mac: [u8; 6]) {
        if !ip.is_unspecified() && mac[0] & 1 == 0 && mac != [0; 6] {
            self.neigh.insert(ip, mac);
        }
    }
}

/// The port's identity on the wire.
#[derive(Debug, Clone, Copy)]
pub struct PortIdentity {
    pub mac: [u8; 6],
    pub ipv4: Ipv4Addr,
}

/// What a user of the port keeps: neighbour resolution, counters, the capture.
#[derive(Clone)]
pub struct PortHandle {
    shared: Arc<Mutex<Shared>>,
    id: PortIdentity,
}

fn arp(op: u16, src: &PortIdentity, dst_mac: [u8; 6], tha: [u8; 6], tpa: Ipv4Addr) -> Vec<u8> {
    let mut f = Vec::with_capacity(ETH_MIN);
    f.extend_from_slice(&dst_mac);
    f.extend_from_slice(&src.mac);
    f.extend_from_slice(&[0x08, 0x06, 0, 1, 0x08, 0x00, 6, 4]);
    f.extend_from_slice(&op.to_be_bytes());
    f.extend_from_slice(&src.mac);
    f.extend_from_slice(&src.ipv4.octets());
    f.extend_from_slice(&tha);
    f.extend_from_slice(&tpa.octets());
    f.resize(ETH_MIN, 0);
    f
}

fn ip_at(f: &[u8], at: usize) -> Ipv4Addr {
    Ipv4Addr::new(f[at], f[at + 1], f[at + 2], f[at + 3])
}

fn mac_at(f: &[u8], at: usize) -> [u8; 6] {
    let mut m = [0u8; 6];
    m.copy_from_slice(&f[at..at + 6]);
    m
}

/// Pad a frame to the Ethernet minimum (a MAC does this on transmit).
pub fn pad(mut f: Vec<u8>) -> Vec<u8> {
    if f.len() < ETH_MIN {
        f.resize(ETH_MIN, 0);
    }
    f
}

impl PortHandle {
    /// The MAC of `ip`: known already, or asked by ARP (every 200 ms) for up to `timeout`.
    pub fn resolve(&self, ip: Ipv4Addr, timeout: Duration) -> Option<[u8; 6]> {
        let t0 = Instant::now();
        let mut last: Option<Instant> = None;
        loop {
            {
                let mut s = self.shared.lock().expect("port lock");
                if let Some(m) = s.neigh.get(&ip) {
                    return Some(*m);
                }
                if last.is_none_or(|l| l.elapsed() > Duration::from_millis(200)) {
                    let req = arp(1, &self.id, [0xff; 6], [0; 6], ip);
                    if s.send(&req) {
                        s.stats.arp_requests += 1;
                    }
                    last = Some(Instant::now());
                }
            }
            if t0.elapsed() > timeout {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Port counters.
    pub fn stats(&self) -> PortStats {
        self.shared.lock().expect("port lock").stats
    }

    /// True once the far side is connected (always for UDP).
    pub fn connected(&self) -> bool {
        self.shared.lock().expect("port lock").connected
    }

    /// The reader thread's fatal error, if any.
    pub fn error(&self) -> Option<String> {
        self.shared.lock().expect("port lock").error.clone()
    }

    /// Flush the capture.
    pub fn flush(&self) {
        if let Some(p) = &mut self.shared.lock().expect("port lock").pcap {
            let _ = p.flush();
        }
    }

    pub fn identity(&self) -> PortIdentity {
        self.id
    }
}

/// The world side of the port (an [`Attachment`]).
pub struct ExtPort {
    shared: Arc<Mutex<Shared>>,
    rx: Receiver<Vec<u8>>,
    link_out: usize,
    link_in: usize,
    last_active: u64,
}

impl ExtPort {
    /// Cable NIC 0 of `w` to `ep` (replacing its links; the world must have one NIC), start the
    /// reader thread and capture to `pcap`.
    pub fn attach(
        w: &mut World,
        ep: &PortEndpoint,
        id: PortIdentity,
        pcap: Option<PathBuf>,
    ) -> std::io::Result<PortHandle> {
        if w.nics.len() != 1 {
            return Err(std::io::Error::other(
                "an external port needs a world of one NIC",
            ));
        }
        let pcap = match pcap {
            Some(p) => {
                if let Some(d) = p.parent() {
                    std::fs::create_dir_all(d)?;
                }
                // the simulator's capture format (crate::pcap), streamed frame by frame
                let mut w = BufWriter::new(File::create(&p)?);
                crate::pcap::header()
                    .write_to(&mut w)
                    .map_err(std::io::Error::other)?;
                Some(w)
            }
            None => None,
        };
        let shared = Arc::new(Mutex::new(Shared {
            writer: None,
            pcap,
            neigh: HashMap::new(),
            stats: PortStats::default(),
            connected: false,
            error: None,
        }));
        let (tx, rx) = mpsc::channel();
        match ep {
            PortEndpoint::Unix(path) => {
                let _ = std::fs::remove_file(path);
                let l = UnixListener::bind(path)?;
                let sh = shared.clone();
                std::thread::spawn(move || {
                    loop {
                        let Ok((s, _)) = l.accept() else { return };
                        let Ok(w) = s.try_clone() else { return };
                        stream_reader(s, Box::new(w), &sh, &tx, id);
                    }
                });
            }
            PortEndpoint::UnixConnect(path) => {
                let t0 = Instant::now();
                let s = loop {
                    match std::os::unix::net::UnixStream::connect(path) {
                        Ok(s) => break s,
                        Err(e) if t0.elapsed() < Duration::from_secs(60) => {
                            let _ = e;
                            std::thread::sleep(Duration::from_millis(100));
                        }
                        Err(e) => return Err(e),
                    }
                };
                let w = s.try_clone()?;
                {
                    let mut g = shared.lock().expect("port lock");
                    g.writer = Some(Writer::Stream(Box::new(w.try_clone()?)));
                    g.connected = true;
                }
                let sh = shared.clone();
                std::thread::spawn(move || {
                    stream_reader(s, Box::new(w), &sh, &tx, id);
                });
            }
            PortEndpoint::Tcp(port) => {
                let l = TcpListener::bind(("127.0.0.1", *port))?;
                let sh = shared.clone();
                std::thread::spawn(move || {
                    loop {
                        let Ok((s, _)) = l.accept() else { return };
                        let _ = s.set_nodelay(true);
                        let Ok(w) = s.try_clone() else { return };
                        stream_reader(s, Box::new(w), &sh, &tx, id);
                    }
                });
            }
            PortEndpoint::Udp { local, remote } => {
                let s = UdpSocket::bind(("127.0.0.1", *local))?;
                let to: SocketAddr = ([127, 0, 0, 1], *remote).into();
                {
                    let mut g = shared.lock().expect("port lock");
                    g.writer = Some(Writer::Udp(s.try_clone()?, to));
                    g.connected = true;
                }
                let sh = shared.clone();
                std::thread::spawn(move || {
                    let mut buf = vec![0u8; 65536];
                    loop {
                        match s.recv_from(&mut buf) {
                            Ok((n, _)) => {
                                if !from_outside(buf[..n].to_vec(), &sh, &tx, id) {
                                    return;
                                }
                            }
                            Err(e) => {
                                sh.lock().expect("port lock").error = Some(e.to_string());
                                return;
                            }
                        }
                    }
                });
            }
        }
        // NIC 0 -> outside, outside -> NIC 0
        let cfg: LinkConfig = w.cfg.link;
        w.links = vec![
            Link::new(cfg, 0, EXT, CLOCK_HZ),
            Link::new(cfg, EXT, 0, CLOCK_HZ),
        ];
        let now = w.cycle;
        w.attached.push(Box::new(ExtPort {
            shared: shared.clone(),
            rx,
            link_out: 0,
            link_in: 1,
            last_active: now,
        }));
        Ok(PortHandle { shared, id })
    }
}

/// Read length-prefixed frames until the stream ends.
fn stream_reader(
    mut s: impl Read,
    w: Box<dyn Write + Send>,
    sh: &Arc<Mutex<Shared>>,
    tx: &Sender<Vec<u8>>,
    id: PortIdentity,
) {
    {
        let mut g = sh.lock().expect("port lock");
        g.writer = Some(Writer::Stream(w));
        g.connected = true;
    }
    loop {
        let mut len = [0u8; 4];
        if s.read_exact(&mut len).is_err() {
            break;
        }
        let n = u32::from_be_bytes(len) as usize;
        if n > 65536 {
            sh.lock().expect("port lock").error = Some(format!("frame length {n} on the stream"));
            break;
        }
        let mut f = vec![0u8; n];
        if s.read_exact(&mut f).is_err() {
            break;
        }
        if !from_outside(f, sh, tx, id) {
            break;
        }
    }
    let mut g = sh.lock().expect("port lock");
    g.writer = None;
    g.connected = false;
}

/// A frame from outside: ARP is answered here, frames for our MAC go to the NIC. False when
/// the world is gone.
fn from_outside(
    f: Vec<u8>,
    sh: &Arc<Mutex<Shared>>,
    tx: &Sender<Vec<u8>>,
    id: PortIdentity,
) -> bool {
    let mut g = sh.lock().expect("port lock");
    let f = pad(f);
    g.capture(&f);
    let etype = u16::from_be_bytes([f[12], f[13]]);
    if etype == 0x0806 && f.len() >= 42 {
        let op = u16::from_be_bytes([f[20], f[21]]);
        let (sha, spa, tpa) = (mac_at(&f, 22), ip_at(&f, 28), ip_at(&f, 38));
        g.learn(spa, sha);
        if op == 1 && tpa == id.ipv4 {
            let reply = arp(2, &id, sha, sha, spa);
            if g.send(&reply) {
                g.stats.arp_replies += 1;
            }
        }
        return true;
    }
    if etype == 0x0800 && f.len() >= 34 {
        let src = mac_at(&f, 6);
        let sip = ip_at(&f, 26);
        g.learn(sip, src);
    }
    if mac_at(&f, 0) == id.mac && etype == 0x0800 {
        g.stats.to_nic += 1;
        drop(g);
        return tx.send(f).is_ok();
    }
    g.stats.ignored += 1;
    true
}

impl Attachment for ExtPort {
    fn cycle(&mut self, w: &mut World) {
        let now = w.cycle;
        // the port keeps its own capture; the world's would only grow
        if !w.wire.is_empty() {
            w.wire.clear();
        }
        while let Some(f) = w.links[self.link_out].take_arrived(now) {
            let mut g = self.shared.lock().expect("port lock");
            g.stats.from_nic += 1;
            if !g.send(&pad(f)) {
                g.stats.unsent += 1;
            }
            self.last_active = now;
        }
        if now.is_multiple_of(32) {
            while let Ok(f) = self.rx.try_recv() {
                w.links[self.link_in].inject(now, f);
                self.last_active = now;
            }
        }
        let quiet = !w.links[self.link_in].busy()
            && !w.links[self.link_out].busy()
            && w.nics.iter().all(|n| n.mmio.idle());
        if !quiet {
            self.last_active = now;
        } else if now - self.last_active > IDLE_CYCLES && now.is_multiple_of(IDLE_STEP) {
            match self.rx.recv_timeout(IDLE_WAIT) {
                Ok(f) => {
                    w.links[self.link_in].inject(now, f);
                    self.last_active = now;
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => std::thread::sleep(IDLE_WAIT),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::WorldConfig;

    #[test]
    fn endpoints_parse() {
        assert_eq!(
            PortEndpoint::parse("udp:1:2"),
            Ok(PortEndpoint::Udp {
                local: 1,
                remote: 2
            })
        );
        assert_eq!(
            PortEndpoint::parse("unix-connect:/x"),
            Ok(PortEndpoint::UnixConnect("/x".into()))
        );
        assert!(PortEndpoint::parse("udp:1").is_err());
        assert!(PortEndpoint::parse("serial:1").is_err());
    }

    /// The port's host side answers ARP for its address (padded to 60 bytes), learns the
    /// asker, ignores frames for other MACs, and captures both directions.
    #[test]
    fn arp_is_answered_and_captured() {
        let mut w = World::new(WorldConfig {
            nics: 1,
            ..WorldConfig::default()
        });
        let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
        peer.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let pport = peer.local_addr().unwrap().port();
        let probe = UdpSocket::bind("127.0.0.1:0").unwrap();
        let local = probe.local_addr().unwrap().port();
        drop(probe);
        let pcap = std::env::temp_dir().join(format!("rnic-extport-{}.pcap", std::process::id()));
        let id = PortIdentity {
            mac: [2, 0, 0, 0, 0, 2],
            ipv4: Ipv4Addr::new(10, 0, 0, 2),
        };
        let h = ExtPort::attach(
            &mut w,
            &PortEndpoint::Udp {
                local,
                remote: pport,
            },
            id,
            Some(pcap.clone()),
        )
        .unwrap();
        let asker = PortIdentity {
            mac: [0x52, 0x54, 0, 0x12, 0x34, 1],
            ipv4: Ipv4Addr::new(10, 0, 0, 1),
        };
        let mut req = arp(1, &asker, [0xff; 6], [0; 6], id.ipv4);
        req.truncate(42); // as a guest sends it, unpadded
        peer.send_to(&req, ("127.0.0.1", local)).unwrap();
        let mut buf = [0u8; 128];
        let (n, _) = peer.recv_from(&mut buf).unwrap();
        assert_eq!(n, ETH_MIN);
        assert_eq!(&buf[0..6], &asker.mac);
        assert_eq!(&buf[12..14], &[0x08, 0x06]);
        assert_eq!(u16::from_be_bytes([buf[20], buf[21]]), 2, "an ARP reply");
        assert_eq!(&buf[22..28], &id.mac);
        assert_eq!(&buf[28..32], &id.ipv4.octets());
        assert_eq!(
            h.resolve(asker.ipv4, Duration::from_secs(1)),
            Some(asker.mac)
        );
        // a frame for another MAC is not the NIC's
        let mut other = req.clone();
        other[0..6].copy_from_slice(&[2, 9, 9, 9, 9, 9]);
        other[12..14].copy_from_slice(&[0x08, 0x00]);
        other.resize(64, 0);
        peer.send_to(&other, ("127.0.0.1", local)).unwrap();
        let t0 = Instant::now();
        while h.stats().ignored == 0 && t0.elapsed() < Duration::from_secs(5) {
            w.run(64);
        }
        let st = h.stats();
        assert_eq!((st.arp_replies, st.ignored, st.to_nic), (1, 1, 0));
        h.flush();
        let cap = std::fs::read(&pcap).unwrap();
        let _ = std::fs::remove_file(&pcap);
        // header + three records (request padded to 60, reply, the other frame)
        assert_eq!(cap.len(), 24 + (16 + 60) * 2 + 16 + 64);
    }
}
