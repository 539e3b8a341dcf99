//! `rnic-sim`: the simulator's command line.
use anyhow::Context;
use clap::{Parser, Subcommand};
use rnic::{Device, Rnic};
use rnic_sim::{SimNic, WorldConfig, world};

#[derive(Parser)]
#[command(
    version,
    about = "rnic: the Verilated RoCE v2 engine in a simulated world"
)]
struct Cli {
    /// Seed of the world (same seed, same cycles, same pcap).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(subcommand)]
    cmd: Option<Cmd>,
}

#[derive(Subcommand)]
enum Cmd {
    /// The default job: two NICs through the verbs API, an RDMA SEND/WRITE showcase and a
    /// perftest-like table (sizes x MTUs, data verified), a pcap of the wire.
    Run {
        /// Where to write the capture of the wire.
        #[arg(long, default_value = "out/rnic-sim.pcap")]
        pcap: std::path::PathBuf,
    },
    /// Open a simulated NIC through the driver and print what it reports.
    Info,
    /// Benchmarks in simulated cycles, and the simulator's speed: the report on stdout
    /// (Markdown), `bench.json` and `goodput.svg` in `--out`.
    Bench {
        /// Where bench.json and goodput.svg go (made if missing).
        #[arg(long, default_value = "out")]
        out: std::path::PathBuf,
    },
    /// The simulator's speed on this machine: simulated cycles per second of the two-NIC world
    /// during RDMA traffic and idle (a few seconds; `bench` reports the same after its run).
    Speed,
    /// Feed a capture into one NIC's receive port and capture what it sends (see README).
    Replay {
        /// The frames to feed, in order (pcap, Ethernet link type).
        #[arg(long, required_unless_present = "print_config")]
        pcap: Option<std::path::PathBuf>,
        /// Where to write the frames the NIC sends (pcap).
        #[arg(long, required_unless_present = "print_config")]
        out: Option<std::path::PathBuf>,
        /// The NIC's set-up (JSON; fields left out keep the defaults of --print-config).
        #[arg(long)]
        config: Option<std::path::PathBuf>,
        /// Print the configuration in use (the default without --config) and exit.
        #[arg(long)]
        print_config: bool,
    },
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let cfg = WorldConfig {
        seed: cli.seed,
        ..Default::default()
    };
    match cli.cmd.unwrap_or(Cmd::Run {
        pcap: "out/rnic-sim.pcap".into(),
    }) {
        Cmd::Run { pcap } => {
            // prints as it goes
            let r = rnic_sim::demo::run(cfg)?;
            if let Some(dir) = pcap.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
            }
            std::fs::write(&pcap, &r.pcap)
                .with_context(|| format!("writing {}", pcap.display()))?;
            println!("pcap: {} ({} bytes)", pcap.display(), r.pcap.len());
        }
        Cmd::Replay {
            pcap,
            out,
            config,
            print_config,
        } => {
            use rnic_sim::replay;
            let rc = match &config {
                Some(p) => replay::ReplayConfig::load(p)?,
                None => replay::ReplayConfig::default(),
            };
            if print_config {
                println!("{}", rc.to_json());
                return Ok(());
            }
            let (Some(pcap), Some(out)) = (pcap, out) else {
                anyhow::bail!("replay needs --pcap IN and --out OUT");
            };
            // the capture is checked before the simulation starts
            let frames = replay::read_pcap(&pcap)?;
            let r = replay::run(&rc, cli.seed, |setup| {
                print!("{}", setup.describe());
                Ok(frames)
            })?;
            if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
            }
            let mut buf = Vec::new();
            r.write_pcap(&mut buf)?;
            std::fs::write(&out, &buf).with_context(|| format!("writing {}", out.display()))?;
            print!("{}", r.summary());
            println!("out: {} ({} bytes)", out.display(), buf.len());
        }
        Cmd::Speed => {
            let s = rnic_sim::bench::sim_speed(cfg)?;
            println!(
                "two-NIC world: {:.0} simulated cycles/s during RDMA (4 KiB and 64 B WRITEs, 4 KiB READs; {} cycles), {:.0} idle ({} cycles)",
                s.rdma, s.rdma_cycles, s.idle, s.idle_cycles
            );
        }
        Cmd::Bench { out } => {
            let (report, json) = rnic_sim::bench::run(cfg)?;
            print!("{report}");
            std::fs::create_dir_all(&out).with_context(|| format!("making {}", out.display()))?;
            let jp = out.join("bench.json");
            std::fs::write(&jp, serde_json::to_string_pretty(&json)? + "\n")
                .with_context(|| format!("writing {}", jp.display()))?;
            let sp = out.join("goodput.svg");
            rnic_sim::bench::plot_sweep(&json.sweep, &sp)?;
            println!("\nwrote {} and {}", jp.display(), sp.display());
        }
        Cmd::Info => {
            let w = world(WorldConfig { nics: 1, ..cfg });
            let mut nic = Rnic::open(SimNic::new(&w, 0)?)?;
            println!("{}", nic.device().describe());
            println!("{}", nic.info());
        }
    }
    Ok(())
}
