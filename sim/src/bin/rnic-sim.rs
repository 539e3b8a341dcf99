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
    /// Benchmarks in simulated cycles, and the simulator's speed.
    Bench,
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
        Cmd::Bench => print!("{}", rnic_sim::bench::run(cfg)?),
        Cmd::Info => {
            let w = world(WorldConfig { nics: 1, ..cfg });
            let mut nic = Rnic::open(SimNic::new(&w, 0)?)?;
            println!("{}", nic.device().describe());
            println!("{}", nic.info());
        }
    }
    Ok(())
}
