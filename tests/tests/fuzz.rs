//! The receive-path fuzz test (`rnic_sim::fuzz`): mutated valid RoCE v2 frames, half of the
//! mutated ones with a recomputed ICRC, fed into one NIC; no hang, no DMA outside the
//! writable MR, the atomic-only MR (only atomics' 8-byte results there), the receive buffers
//! and the CQ ring, and a valid WRITE still works afterwards.

use rnic_sim::fuzz;

/// Frames per run in `make test`: about 15 s on an idle 2-core machine (~540 frames/s),
/// about 30 s while other tests run beside it.
const FRAMES: usize = 8000;

#[test]
fn fuzz_rx_path() {
    let t = std::time::Instant::now();
    let o = fuzz::run(1, FRAMES).unwrap_or_else(|e| panic!("{e}"));
    let s = t.elapsed().as_secs_f64();
    println!("{}", o.summary());
    println!("{:.1} s wall, {:.0} frames/s", s, o.frames as f64 / s);
    assert_eq!(o.frames, FRAMES);
    assert!(o.recomputed > FRAMES / 5, "{}", o.summary());
    // the fuzz reached the transport: messages executed and requests refused
    assert!(o.counter("rx_req") > 0, "{}", o.summary());
    // and the atomics: executed, duplicates looked up in the saved results (seed 1: 3
    // executed, 1 answered from a saved result, 7 without one)
    assert!(o.counter("rx_atomic") > 0, "{}", o.summary());
    assert!(
        o.counter("atom_dup") + o.counter("atom_miss") > 0,
        "{}",
        o.summary()
    );
}

/// The fuzzer's ICRC is the spec implementation's.
#[test]
fn fuzz_icrc_matches_the_rtl_model() {
    let h = fuzz::Hdr {
        dmac: [2, 0, 0, 0, 0, 2],
        smac: [2, 0, 0, 0, 0, 1],
        sip: [10, 0, 0, 1].into(),
        dip: [10, 0, 0, 2].into(),
        sport: 0xC000,
    };
    for len in [0usize, 1, 3, 64, 1000, 4096] {
        let p = rnic_tests::pattern(len as u64, len);
        let f = fuzz::frame(&h, 0x0A, 2, 7, true, &fuzz::reth(0x1000, 5, len as u32), &p);
        let body = &f[..f.len() - 4];
        assert_eq!(fuzz::icrc(body), rnic_rtl::net::icrc::icrc(body), "{len}");
        assert!(rnic_rtl::net::icrc::icrc_matches(&f), "{len}");
    }
}

/// More seeds, by hand: `RNIC_FUZZ_SEEDS=1-20 RNIC_FUZZ_FRAMES=10000 cargo test -p rnic-tests
/// --test fuzz fuzz_seeds -- --ignored --nocapture`. Runs every seed, then fails naming the
/// ones that failed.
#[test]
#[ignore]
fn fuzz_seeds() {
    let seeds = std::env::var("RNIC_FUZZ_SEEDS").unwrap_or_else(|_| "1-4".into());
    let (a, b) = seeds.split_once('-').unwrap_or((&seeds, &seeds));
    let (a, b): (u64, u64) = (a.parse().unwrap(), b.parse().unwrap());
    let frames = std::env::var("RNIC_FUZZ_FRAMES")
        .ok()
        .map_or(FRAMES, |f| f.parse().unwrap());
    let mut failed = Vec::new();
    for seed in a..=b {
        let t = std::time::Instant::now();
        match fuzz::run(seed, frames) {
            Ok(o) => println!("{}\n  {:.1} s", o.summary(), t.elapsed().as_secs_f64()),
            Err(e) => {
                println!("seed {seed} FAILED: {e}");
                failed.push(seed);
            }
        }
    }
    assert!(failed.is_empty(), "failing seeds {failed:?}");
}
