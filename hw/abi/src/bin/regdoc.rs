//! Writes docs/REGISTERS.md (or checks it with --check).
use std::process::ExitCode;

fn main() -> ExitCode {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/REGISTERS.md");
    let want = rnic_abi::regdoc::markdown();
    if std::env::args().any(|a| a == "--check") {
        match std::fs::read_to_string(&path) {
            Ok(have) if have == want => ExitCode::SUCCESS,
            _ => {
                eprintln!("{} is stale: run `make regdoc`", path.display());
                ExitCode::FAILURE
            }
        }
    } else if let Err(e) = std::fs::write(&path, want) {
        eprintln!("cannot write {}: {e}", path.display());
        ExitCode::FAILURE
    } else {
        println!("wrote {}", path.display());
        ExitCode::SUCCESS
    }
}
