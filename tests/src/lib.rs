//! Shared helpers for the host-driver tests against the simulated RTL.

use rnic::device::{Bar, Device, DmaRegion};
use rnic::{Result, Rnic};
use rnic_sim::{SharedWorld, SimNic, WorldConfig, world};
use std::path::PathBuf;
use std::process::Command;

/// The SoftRoCE capture kept in the repository (`tests/vectors/rxe-perftest-mtu1024.pcap`,
/// described in `tests/vectors/README.md`).
pub fn vectors() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("vectors/rxe-perftest-mtu1024.pcap")
}

/// A command running the project's Python (`.venv/bin/python`, made by scripts/setup.sh with
/// the pinned scapy), the one way the tests run Python. Panics with the remedy when the
/// environment is missing.
pub fn python() -> Command {
    let py = rnic_rtl::vlt::venv().join("bin/python");
    assert!(
        py.is_file(),
        "no Python environment at {}: run `make setup` (scripts/setup.sh)",
        py.display()
    );
    Command::new(py)
}

/// A two-NIC world with both NICs opened through the driver.
pub fn pair(cfg: WorldConfig) -> (SharedWorld, Rnic<SimNic>, Rnic<SimNic>) {
    let w = world(cfg);
    let a = Rnic::open(SimNic::new(&w, 0).expect("nic 0")).expect("open NIC A");
    let b = Rnic::open(SimNic::new(&w, 1).expect("nic 1")).expect("open NIC B");
    (w, a, b)
}

/// The configurations every system test runs under: plain, and with random idle and
/// backpressure on every valid/ready interface the world drives.
pub fn configs() -> Vec<(&'static str, WorldConfig)> {
    vec![
        ("plain", WorldConfig::default()),
        (
            "stressed",
            WorldConfig {
                seed: 7,
                ..WorldConfig::default()
            }
            .stressed(0.3),
        ),
    ]
}

/// A device wrapper that replaces the value read at one BAR0 offset: a stand-in for a wrong
/// card (wrong magic, unknown major version) in front of the real simulated one.
pub struct PatchedDevice<D: Device> {
    pub inner: D,
    pub off: u64,
    pub value: u32,
}

impl<D: Device> Device for PatchedDevice<D> {
    fn describe(&self) -> String {
        format!("patched({})", self.inner.describe())
    }
    fn bar_len(&self, bar: Bar) -> u64 {
        self.inner.bar_len(bar)
    }
    fn read32(&mut self, bar: Bar, off: u64) -> Result<u32> {
        let v = self.inner.read32(bar, off)?;
        Ok(if bar == Bar::Regs && off == self.off {
            self.value
        } else {
            v
        })
    }
    fn write32(&mut self, bar: Bar, off: u64, val: u32) -> Result<()> {
        self.inner.write32(bar, off, val)
    }
    fn push_wqe(&mut self, off: u64, wqe: &[u8; 64]) -> Result<()> {
        self.inner.push_wqe(off, wqe)
    }
    fn dma_alloc(&mut self, len: usize) -> Result<DmaRegion> {
        self.inner.dma_alloc(len)
    }
    fn dma_free(&mut self, buf: DmaRegion) -> Result<()> {
        self.inner.dma_free(buf)
    }
    fn dma_read(&mut self, buf: &DmaRegion, off: usize, out: &mut [u8]) -> Result<()> {
        self.inner.dma_read(buf, off, out)
    }
    fn dma_write(&mut self, buf: &DmaRegion, off: usize, data: &[u8]) -> Result<()> {
        self.inner.dma_write(buf, off, data)
    }
    fn relax(&mut self) {
        self.inner.relax()
    }
    fn now_ns(&mut self) -> u64 {
        self.inner.now_ns()
    }
    fn wait_irq(&mut self, vector: u32, timeout_ns: u64) -> Result<bool> {
        self.inner.wait_irq(vector, timeout_ns)
    }
}

// ---- verbs helpers (tests/tests/rdma.rs, the demo's twin)

use rnic::verbs::{ConnectAttr, Context, Endpoint, PortAddr, QueuePair};

/// A two-NIC world with a verbs context on each NIC: NIC A is 10.0.0.1 / 02:00:00:00:00:01,
/// NIC B 10.0.0.2 / 02:00:00:00:00:02.
pub fn verbs_pair(cfg: WorldConfig) -> (SharedWorld, Context<SimNic>, Context<SimNic>) {
    let (w, a, b) = pair(cfg);
    let a = Context::new(a, PortAddr::sim(1).expect("addr A")).expect("context A");
    let b = Context::new(b, PortAddr::sim(2).expect("addr B")).expect("context B");
    (w, a, b)
}

/// Connect two QPs (RESET -> RTS on both), exchanging endpoints as bytes, as an application
/// would over a socket.
pub fn connect_qps(
    a: &QueuePair<'_, SimNic>,
    b: &QueuePair<'_, SimNic>,
    attr: &ConnectAttr,
) -> Result<()> {
    let ea = Endpoint::from_bytes(&a.endpoint()?.to_bytes())?;
    let eb = Endpoint::from_bytes(&b.endpoint()?.to_bytes())?;
    a.connect(&eb, attr)?;
    b.connect(&ea, attr)
}

/// Deterministic test bytes (xorshift64*), different for every seed (the demo's generator).
pub use rnic_sim::demo::pattern;

/// The host-memory audit of NIC `nic` from audit record `from` on (the simulator's
/// [`rnic_sim::World::audit_dma_writes`]): every byte the device wrote lies inside one of
/// `allowed` (IOVA, length), and the IOMMU model saw no fault. Returns a description of the
/// first violations.
pub fn audit_dma_writes(
    w: &SharedWorld,
    nic: usize,
    from: usize,
    allowed: &[(u64, usize)],
) -> std::result::Result<u64, String> {
    w.borrow()
        .audit_dma_writes(nic, from, allowed)
        .map_err(|e| e.to_string())
}

/// The non-zero engine counters of a NIC as `name=value` pairs, for failure messages.
pub fn counters(ctx: &Context<SimNic>) -> String {
    ctx.engine_counters()
        .map(|c| {
            c.iter()
                .filter(|x| x.1 != 0)
                .map(|(n, v)| format!("{n}={v}"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|e| e.to_string())
}

/// Audit marks of both NICs of a two-NIC world (`audit_mark` of NIC 0 and NIC 1).
pub fn marks(w: &SharedWorld) -> (usize, usize) {
    (audit_mark(w, 0), audit_mark(w, 1))
}

/// Number of audit records of NIC `nic` so far (start of a window for `audit_dma_writes`).
pub fn audit_mark(w: &SharedWorld, nic: usize) -> usize {
    w.borrow().nics[nic].mem.audit.len()
}

/// The RoCE v2 frame parser (one, in the simulator crate).
pub use rnic_sim::frame::{RocePkt, ext_header_bytes, parse_roce};

/// RoCE packets sent by NIC `from` since wire record `since` (NIC k transmits on link k).
pub fn roce_sent(w: &SharedWorld, from: usize, since: usize) -> Vec<RocePkt> {
    w.borrow()
        .wire
        .iter()
        .skip(since)
        .filter(|(l, _)| *l == from)
        .filter_map(|(_, f)| parse_roce(&f.data))
        .collect()
}

/// Frames on the wire so far (start of a window for `roce_sent`).
pub fn wire_mark(w: &SharedWorld) -> usize {
    w.borrow().wire.len()
}

/// The independent packet oracles (`tests/oracle/`), for any capture a test writes.
pub mod oracle {
    use std::path::{Path, PathBuf};
    use std::process::{Command, Output};

    fn root() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    }

    /// scapy + zlib ICRC check: one `N ok|bad|skip` line per frame, exit 1 if any is bad.
    pub fn icrc(pcap: &Path) -> Output {
        crate::python()
            .arg(root().join("oracle/icrc.py"))
            .arg(pcap)
            .output()
            .expect("run the project's Python (scripts/setup.sh makes .venv)")
    }

    /// tshark decode: prints `frames N roce M malformed K`, exit 1 on any malformed frame.
    pub fn tshark(pcap: &Path) -> Output {
        Command::new("bash")
            .arg(root().join("oracle/tshark.sh"))
            .arg(pcap)
            .output()
            .expect("bash")
    }

    /// `(frame number, verdict)` lines of the ICRC oracle.
    pub fn verdicts(o: &Output) -> Vec<(usize, String)> {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| {
                let (n, v) = l.split_once(' ').unwrap_or_else(|| panic!("line {l:?}"));
                (n.parse().unwrap(), v.to_string())
            })
            .collect()
    }

    pub fn show(o: &Output) -> String {
        format!(
            "status {:?}\nstdout:\n{}\nstderr:\n{}",
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    }

    /// Write `pcap` to a temporary file and require both oracles to accept every frame:
    /// every RoCE frame's ICRC right (scapy and the spec implementation agree), no frame
    /// malformed for tshark. Returns the number of RoCE frames checked.
    pub fn check_capture(name: &str, pcap: &[u8]) -> usize {
        let dir = std::env::temp_dir().join(format!("rnic-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.pcap"));
        std::fs::write(&path, pcap).unwrap();
        let o = icrc(&path);
        assert!(o.status.success(), "ICRC oracle on {name}: {}", show(&o));
        let v = verdicts(&o);
        assert!(v.iter().all(|x| x.1 != "bad"), "{}", show(&o));
        let t = tshark(&path);
        assert!(t.status.success(), "tshark on {name}: {}", show(&t));
        std::fs::remove_dir_all(&dir).ok();
        v.iter().filter(|x| x.1 == "ok").count()
    }

    /// Frames crafted by scapy from a JSON spec list (`tests/oracle/craft.py`).
    pub fn craft(spec_json: &str) -> Vec<Vec<u8>> {
        use std::io::Write;
        let mut child = crate::python()
            .arg(root().join("oracle/craft.py"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run the project's Python (scripts/setup.sh makes .venv)");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(spec_json.as_bytes())
            .unwrap();
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "craft.py: {}", show(&o));
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| {
                (0..l.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&l[i..i + 2], 16).unwrap())
                    .collect()
            })
            .collect()
    }
}

/// RoCE v2 RC frames built in Rust (not by scapy): Ethernet, IPv4 (no options, DF, TTL 64,
/// header checksum), UDP to 4791 (checksum 0), BTH (P_Key 0xFFFF), the extended headers, the
/// payload padded to 4 bytes, and the ICRC from the spec implementation
/// (`rnic_rtl::net::icrc::icrc`). For receive paths the MAC-debug window cannot carry
/// (frames over 2048 bytes), fed with `World::inject_rx`.
pub mod craft {
    use std::net::Ipv4Addr;

    /// Addresses and transport fields of one frame.
    #[derive(Debug, Clone, Copy)]
    pub struct Hdr {
        pub dmac: [u8; 6],
        pub smac: [u8; 6],
        pub sip: Ipv4Addr,
        pub dip: Ipv4Addr,
        pub sport: u16,
        pub dqpn: u32,
        pub psn: u32,
        pub ackreq: bool,
    }

    /// A RETH: virtual address, rkey, DMA length.
    pub fn reth(va: u64, rkey: u32, len: u32) -> Vec<u8> {
        let mut r = va.to_be_bytes().to_vec();
        r.extend_from_slice(&rkey.to_be_bytes());
        r.extend_from_slice(&len.to_be_bytes());
        r
    }

    /// The frame (without FCS) of `opcode` with extended headers `ext` and `payload`.
    pub fn frame(h: &Hdr, opcode: u8, ext: &[u8], payload: &[u8]) -> Vec<u8> {
        let pad = (4 - payload.len() % 4) % 4;
        let ip_len = 20 + 8 + 12 + ext.len() + payload.len() + pad + 4;
        let mut f = Vec::with_capacity(14 + ip_len);
        f.extend_from_slice(&h.dmac);
        f.extend_from_slice(&h.smac);
        f.extend_from_slice(&[0x08, 0x00]);
        let mut ip = [0u8; 20];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&(ip_len as u16).to_be_bytes());
        ip[6] = 0x40; // DF
        ip[8] = 64;
        ip[9] = 17;
        ip[12..16].copy_from_slice(&h.sip.octets());
        ip[16..20].copy_from_slice(&h.dip.octets());
        let mut sum: u32 = ip
            .chunks(2)
            .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
            .sum();
        while sum > 0xFFFF {
            sum = (sum & 0xFFFF) + (sum >> 16);
        }
        ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
        f.extend_from_slice(&ip);
        f.extend_from_slice(&h.sport.to_be_bytes());
        f.extend_from_slice(&rnic_abi::roce::UDP_PORT_ROCEV2.to_be_bytes());
        f.extend_from_slice(&((ip_len - 20) as u16).to_be_bytes());
        f.extend_from_slice(&[0, 0]);
        f.push(opcode);
        f.push((pad as u8) << 4);
        f.extend_from_slice(&rnic_abi::roce::DEFAULT_PKEY.to_be_bytes());
        f.push(0);
        f.extend_from_slice(&h.dqpn.to_be_bytes()[1..]);
        f.push(if h.ackreq { 0x80 } else { 0 });
        f.extend_from_slice(&h.psn.to_be_bytes()[1..]);
        f.extend_from_slice(ext);
        f.extend_from_slice(payload);
        f.resize(f.len() + pad, 0);
        let icrc = rnic_rtl::net::icrc::icrc(&f).expect("headers present");
        f.extend_from_slice(&icrc.to_le_bytes());
        f
    }
}
