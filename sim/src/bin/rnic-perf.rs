//! `rnic-perf`: perftest for the rnic NIC, interoperable with perftest's `ib_*` tools.
//!
//! ```text
//! rnic-perf write_bw --ext unix:/tmp/nic.sock --ip 10.0.0.2            # server, simulated NIC
//! rnic-perf write_bw 127.0.0.1 -s 4096 -n 100 --ext udp:11000:11001 ... # client
//! rnic-perf send_lat 10.0.0.1 --device 0000:01:00.0 --ip ... --mac ...  # a board through VFIO
//! ```
use anyhow::{Context as _, anyhow, bail};
use clap::Parser;
use rnic::verbs::PortAddr;
use rnic_sim::extport::{ExtPort, PortEndpoint, PortIdentity};
use rnic_sim::perf::engine;
use rnic_sim::perf::oob::{DEFAULT_PORT, Oob};
use rnic_sim::perf::{ATOMIC_SIZE, AtomicType, Params, TestKind};
use rnic_sim::{SimNic, WorldConfig, world};
use std::net::Ipv4Addr;
use std::time::Duration;

#[derive(Parser)]
#[command(
    version,
    about = "perftest for the rnic NIC (simulated or through VFIO); speaks perftest's TCP exchange, so the other side can be an unmodified ib_write_bw / ib_send_bw / ib_read_bw / ib_atomic_bw / ib_write_lat / ib_send_lat / ib_read_lat / ib_atomic_lat"
)]
struct Cli {
    /// write_bw | send_bw | read_bw | atomic_bw | write_lat | send_lat | read_lat | atomic_lat
    test: String,
    /// The server to connect to (client mode); none: be the server.
    server: Option<String>,
    /// Message size in bytes.
    #[arg(short = 's', long)]
    size: Option<u64>,
    /// Run all sizes 2 B .. 8 MiB (capped by --max-size).
    #[arg(short = 'a', long)]
    all: bool,
    /// Largest size with -a.
    #[arg(long, default_value_t = 1 << 23)]
    max_size: u64,
    /// Iterations per QP.
    #[arg(short = 'n', long)]
    iters: Option<u64>,
    /// Number of QPs.
    #[arg(short = 'q', long, default_value_t = 1)]
    qps: u32,
    /// Path MTU in bytes (256..4096).
    #[arg(short = 'm', long, default_value_t = 4096)]
    mtu: u32,
    /// Send queue depth (capped by the NIC's SQ depth).
    #[arg(short = 't', long, default_value_t = 128)]
    tx_depth: u32,
    /// Post for this many wall-clock seconds instead of -n (bandwidth tests).
    #[arg(short = 'D', long)]
    duration: Option<f64>,
    /// TCP port of the out-of-band exchange.
    #[arg(short = 'p', long, default_value_t = DEFAULT_PORT)]
    port: u16,
    /// perftest's GID index (accepted for compatibility; our GID is the IPv4-mapped one).
    #[arg(short = 'x', long)]
    gid_index: Option<u32>,
    /// Atomic tests: FETCH_AND_ADD (default) or CMP_AND_SWAP.
    #[arg(short = 'A', long, default_value = "FETCH_AND_ADD")]
    atomic_type: String,
    /// Server: compare every received SEND byte by byte with the pattern rnic-perf sends.
    /// Client: compare READ data with the pattern; check every atomic's original value and the
    /// final values.
    #[arg(long)]
    verify: bool,
    /// Print the result as JSON too.
    #[arg(long)]
    json: bool,
    /// Simulated NIC: its MAC port on this socket (unix:PATH, tcp:PORT, udp:LPORT:RPORT).
    #[arg(long)]
    ext: Option<String>,
    /// Our IPv4 address.
    #[arg(long, default_value = "10.0.0.2")]
    ip: Ipv4Addr,
    /// Our MAC (default 02:00:00:00:00:<last octet of --ip>).
    #[arg(long)]
    mac: Option<String>,
    /// Capture of the simulated port.
    #[arg(long)]
    pcap: Option<std::path::PathBuf>,
    /// A real NIC through VFIO at this PCI address instead of the simulator.
    #[arg(long)]
    device: Option<String>,
    /// The peer's MAC (VFIO: else from /proc/net/arp).
    #[arg(long)]
    peer_mac: Option<String>,
    /// Seconds to wait for the peer's TCP server (client mode).
    #[arg(long, default_value_t = 120)]
    connect_wait: u64,
}

fn parse_mac(s: &str) -> anyhow::Result<[u8; 6]> {
    let v: Vec<u8> = s
        .split(':')
        .map(|h| u8::from_str_radix(h, 16))
        .collect::<Result<_, _>>()
        .with_context(|| format!("MAC {s:?}"))?;
    v.try_into()
        .map_err(|_| anyhow!("MAC {s:?}: six bytes expected"))
}

fn proc_net_arp(ip: Ipv4Addr) -> Option<[u8; 6]> {
    let t = std::fs::read_to_string("/proc/net/arp").ok()?;
    t.lines().skip(1).find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.first()? == &ip.to_string()).then(|| parse_mac(f.get(3)?).ok())?
    })
}

fn main() {
    match real_main() {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("rnic-perf: error: {e:#}");
            std::process::exit(1);
        }
    }
}

fn real_main() -> anyhow::Result<i32> {
    let cli = Cli::parse();
    let test = TestKind::parse(&cli.test).ok_or_else(|| {
        anyhow!(
            "unknown test {:?}: write_bw, send_bw, read_bw, atomic_bw, write_lat, send_lat, read_lat, atomic_lat",
            cli.test
        )
    })?;
    let atomic = AtomicType::parse(&cli.atomic_type)
        .ok_or_else(|| anyhow!("-A {:?}: FETCH_AND_ADD or CMP_AND_SWAP", cli.atomic_type))?;
    if test.is_atomic() {
        // perftest: "Message size cannot be changed for Atomic tests"
        if cli.size.is_some_and(|s| s != ATOMIC_SIZE) || cli.all {
            bail!(
                "{}: the message size of atomics is {ATOMIC_SIZE} bytes (no -s, no -a)",
                test.name()
            );
        }
    }
    let (dsize, diters) = test.defaults();
    let p = Params {
        test,
        size: cli.size.unwrap_or(dsize),
        all: cli.all,
        max_size: cli.max_size,
        iters: cli.iters.unwrap_or(diters),
        qps: cli.qps.max(1),
        mtu: cli.mtu,
        tx_depth: cli.tx_depth,
        duration: cli.duration,
        server: cli.server.clone(),
        port: cli.port,
        verify: cli.verify,
        atomic,
    };
    let _ = cli.gid_index;
    let mac = match &cli.mac {
        Some(m) => parse_mac(m)?,
        None => [0x02, 0, 0, 0, 0, cli.ip.octets()[3]],
    };
    let port = PortAddr::new(mac, cli.ip)?;
    let oob = |p: &Params| -> anyhow::Result<Oob> {
        Ok(match &p.server {
            Some(h) => Oob::connect(h, p.port, Duration::from_secs(cli.connect_wait))
                .with_context(|| format!("connecting to {h}:{}", p.port))?,
            None => {
                eprintln!("rnic-perf: waiting for a client on TCP port {}", p.port);
                Oob::accept(p.port).with_context(|| format!("listening on TCP port {}", p.port))?
            }
        })
    };
    let report = if let Some(bdf) = &cli.device {
        let addr = rnic::vfio::sysfs::PciAddr::parse(bdf)?;
        let dev = rnic::vfio::VfioDevice::open(&addr, rnic::vfio::VfioOptions::rnic())?;
        let peer_mac = cli.peer_mac.as_deref().map(parse_mac).transpose()?;
        let resolve = move |ip: Ipv4Addr| peer_mac.or_else(|| proc_net_arp(ip));
        engine::run(dev, port, &p, oob(&p)?, &resolve)?
    } else {
        let ext = cli
            .ext
            .as_deref()
            .ok_or_else(|| anyhow!("the simulated NIC needs --ext (unix:PATH, tcp:PORT or udp:LPORT:RPORT): where its Ethernet port is cabled"))?;
        let ep = PortEndpoint::parse(ext).map_err(|e| anyhow!(e))?;
        let w = world(WorldConfig {
            nics: 1,
            ..WorldConfig::default()
        });
        let handle = ExtPort::attach(
            &mut w.borrow_mut(),
            &ep,
            PortIdentity { mac, ipv4: cli.ip },
            cli.pcap.clone(),
        )
        .with_context(|| format!("attaching the port to {ext}"))?;
        let h2 = handle.clone();
        let resolve = move |ip: Ipv4Addr| h2.resolve(ip, Duration::from_secs(30));
        let dev = SimNic::new(&w, 0)?;
        let mut o = oob(&p)?;
        // the simulated NIC keeps running (ACKing, answering) while we wait for TCP
        let wp = w.clone();
        o.set_pump(Box::new(move || wp.borrow_mut().run(64)));
        let r = engine::run(dev, port, &p, o, &resolve);
        handle.flush();
        let st = handle.stats();
        eprintln!(
            "rnic-perf: port: {} frames to the NIC, {} from it, {} ARP replies, {} ARP requests, {} ignored, {} unsent; {} cycles simulated",
            st.to_nic,
            st.from_nic,
            st.arp_replies,
            st.arp_requests,
            st.ignored,
            st.unsent,
            w.borrow().cycle
        );
        if let Some(e) = handle.error() {
            bail!("port: {e}");
        }
        r?
    };
    print!("{}", report.table());
    if cli.json {
        println!("{}", report.json());
    }
    Ok(0)
}
