//! Writes `<outdir>/rnic_top.v` (default outdir: build/verilog).
use std::process::ExitCode;

fn main() -> ExitCode {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "build/verilog".into());
    let v = match rnic_rtl::top_verilog() {
        Ok(v) => v,
        Err(e) => {
            eprintln!("Verilog generation failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    let path = std::path::Path::new(&dir).join(format!("{}.v", rnic_rtl::TOP));
    if let Err(e) = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&path, &v)) {
        eprintln!("cannot write {}: {e}", path.display());
        return ExitCode::FAILURE;
    }
    println!("wrote {} ({} lines, {} modules)", path.display(), v.lines().count(), v.matches("\nmodule ").count() + usize::from(v.starts_with("module ")));
    ExitCode::SUCCESS
}
