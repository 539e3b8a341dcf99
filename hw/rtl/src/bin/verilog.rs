//! Writes `<outdir>/rnic_top.v` and the board CDC blocks (default outdir: build/verilog).
//! `--waivers` prints the Verilator lint waiver flags (see `rnic_rtl::vlt::LINT_WAIVERS`).
use std::process::ExitCode;

fn main() -> ExitCode {
    let arg = std::env::args().nth(1);
    if arg.as_deref() == Some("--waivers") {
        println!("{}", rnic_rtl::vlt::waiver_flags().join(" "));
        return ExitCode::SUCCESS;
    }
    let dir = std::path::PathBuf::from(arg.unwrap_or_else(|| "build/verilog".into()));
    let v = match rnic_rtl::top_verilog() {
        Ok(v) => v,
        Err(e) => {
            eprintln!("Verilog generation failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    let path = dir.join(format!("{}.v", rnic_rtl::TOP));
    let written = std::fs::create_dir_all(&dir)
        .and_then(|_| std::fs::write(&path, &v))
        .and_then(|_| rnic_rtl::cdc_fifo::write_board_cdc_verilog(&dir));
    if let Err(e) = written {
        eprintln!("cannot write into {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    let modules = v.lines().filter(|l| l.starts_with("module ")).count();
    println!(
        "wrote {} ({} lines, {modules} modules) and the board CDC blocks",
        path.display(),
        v.lines().count()
    );
    ExitCode::SUCCESS
}
