//! `rnic-sim replay` on bad input: a clear error and a failing exit status, never a panic.
//! (The replay itself is tested in `tests/tests/replay.rs`.)

use std::process::Command;

fn rnic_sim(args: &[&str]) -> (bool, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_rnic-sim"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn replay_bad_input_is_a_clear_error() {
    let dir = std::env::temp_dir().join(format!("rnic-replay-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("out.pcap");
    let out = out.to_str().unwrap();
    let junk = dir.join("junk.pcap");
    std::fs::write(&junk, b"this is not a capture").unwrap();
    let cfg = dir.join("bad.json");
    std::fs::write(&cfg, r#"{"qps":[{"mtu":4000}], "colour":"red"}"#).unwrap();
    let cases: [(Vec<&str>, &str); 3] = [
        (
            vec!["replay", "--pcap", "/nonexistent/in.pcap", "--out", out],
            "/nonexistent/in.pcap",
        ),
        (
            vec!["replay", "--pcap", junk.to_str().unwrap(), "--out", out],
            "not a pcap",
        ),
        (
            vec![
                "replay",
                "--config",
                cfg.to_str().unwrap(),
                "--print-config",
            ],
            "unknown field `colour`",
        ),
    ];
    for (args, want) in cases {
        let (ok, _, err) = rnic_sim(&args);
        assert!(!ok, "{args:?} succeeded");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    let (ok, json, err) = rnic_sim(&["replay", "--print-config"]);
    assert!(ok, "{err}");
    assert!(json.contains("\"peer_qpn\": 17"), "{json}");
    assert!(!std::path::Path::new(out).exists());
    std::fs::remove_dir_all(&dir).ok();
}
