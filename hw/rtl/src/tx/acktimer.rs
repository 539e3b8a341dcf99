//! Data-path block `acktimer`: one transport timer per QP, in RAM (docs/DATAPATH.md
//! "acktimer").
//!
//! Each QP has one entry `{armed, deadline}` (a 48-bit cycle number) in a simple dual-port RAM
//! of `num_qps` entries, so the block grows by RAM depth, not by registers, with the number of
//! QPs. Two set ports write an entry: `b` (the ACK processor: re-arm on progress, RNR wait)
//! has priority over `a` (the requester: arm when it sends the first outstanding WQE). A set
//! on `a` is taken whenever the one-entry buffer behind it is empty, beside a set on `b` too:
//! it then waits in the buffer and is written in the next cycle without a `b` set (so the
//! requester never waits for the ACK processor's re-arms, which came at random against its
//! own arms once the ACK processor had cycles to spare: 0.25 cycles per 64 B WRITE over 2046
//! QPs). A `b` set of the same QP as the buffered or same-cycle `a` set drops that one: the
//! ACK processor's set is the later decision (an RNR wait must not be cut short by an arm
//! taken before it), and the requester arms only a QP with nothing outstanding, which any
//! `b` set of it leaves armed (or, with timeout code 0 on both, disarmed). A set
//! is registered when taken and writes its entry in the next cycle (an expiry of its QP
//! waiting for the sink is withdrawn then), with the delay from its code: the local ACK
//! timeout 4.096 us x 2^code (`code` 0 = no timer: the entry is disarmed), or for `rnr` the
//! IBTA RNR timer table (`rnic_abi::roce::RNR_TIMER_US`); both in cycles at the build's
//! clock.
//!
//! A scanner reads one entry a cycle, round robin over all QPs (a full round takes `num_qps`
//! cycles: the timer's resolution), and when an armed entry's deadline has passed it disarms it
//! and reports the QP on `exp` (valid/ready; the ACK processor decides what the expiry means:
//! retransmit, end the RNR wait, or nothing when no packet is outstanding). The scanner stays
//! on an expired entry it cannot report yet (sink busy, the write port taken by a set, or read
//! data a same-cycle set may have made stale) and reads it again; a set of a QP whose expiry
//! is still waiting for the sink supersedes that expiry.
//! After reset the scanner first clears every entry (`num_qps` cycles; set ports not ready).

use crate::common::bus::{TimerExpM, TimerSetS};
use rnic_abi::params::{self, BuildParams};
use rnic_abi::roce::{ack_timeout_cycles, rnr_wait_cycles};
use rust_hdl::prelude::*;

/// QPs of the default build (entries of the timer RAM).
pub const NQ: usize = params::DEFAULT.num_qps as usize;
/// Bits of a QP index.
pub const QB: usize = NQ.trailing_zeros() as usize;
// `ev_arm` (a set arms the timer iff RNR or code != 0) relies on every RNR delay being non-zero
const _: () = {
    let mut i = 0;
    while i < 32 {
        assert!(rnic_abi::roce::RNR_TIMER_US[i] > 0);
        i += 1;
    }
};

/// The block: see the module documentation.
#[derive(LogicBlock)]
pub struct AckTimer {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    /// Set port of the requester (arm on the first outstanding WQE).
    pub a: TimerSetS,
    /// Set port of the ACK processor (priority).
    pub b: TimerSetS,
    /// Expired timers.
    pub exp: TimerExpM,
    ram: RAM<Bits<49>, QB>,
    now: DFF<Bits<48>>,
    scan: DFF<Bits<QB>>,
    s_idx: DFF<Bits<QB>>,
    s_ok: DFF<Bit>,
    clr: DFF<Bit>,
    lw_v: DFF<Bit>,
    lw_q: DFF<Bits<QB>>,
    e_v: DFF<Bit>,
    e_q: DFF<Bits<QB>>,
    lfsr: DFF<Bits<32>>,
    unit: Constant<Bits<48>>,
    jmask: Constant<Bits<48>>,
    lfsr_taps: Constant<Bits<32>>,
    lfsr_seed: Constant<Bits<32>>,
    rnr_tab: [Constant<Bits<48>>; 32],
    cidx: [Constant<Bits<5>>; 32],
    /// QPN bits at and above `num_qps` (a power of two): in range when none is set
    c_qhi: Constant<Bits<24>>,
    ev_v: Signal<Local, Bit>,
    ev_q: Signal<Local, Bits<24>>,
    ev_rnr: Signal<Local, Bit>,
    ev_code: Signal<Local, Bits<5>>,
    /// the set arms the timer (a non-zero delay), decided from the code alone
    ev_arm: Signal<Local, Bit>,
    /// the `a` set taken beside a `b` set, waiting for a cycle without one (`a` is not
    /// taken while it is full)
    k_v: DFF<Bit>,
    k_q: DFF<Bits<24>>,
    k_rnr: DFF<Bit>,
    k_code: DFF<Bits<5>>,
    ev_wr: Signal<Local, Bit>,
    /// the set taken, registered: its entry is computed and written a cycle after the
    /// handshake (the delay's shift, table and sum do not sit behind the set ports' senders)
    r_v: DFF<Bit>,
    r_q: DFF<Bits<QB>>,
    r_rnr: DFF<Bit>,
    r_code: DFF<Bits<5>>,
    /// the registered set is of the QP whose expiry waits for the sink: it supersedes it
    r_sup: Signal<Local, Bit>,
    dly: Signal<Local, Bits<48>>,
    dl: Signal<Local, Bits<48>>,
    diff: Signal<Local, Bits<48>>,
    expired: Signal<Local, Bit>,
    fire: Signal<Local, Bit>,
    hold: Signal<Local, Bit>,
}

impl AckTimer {
    pub fn new(p: &BuildParams) -> Self {
        let unit = ack_timeout_cycles(1, p.clock_khz).expect("timeout 1 is finite") / 2;
        AckTimer {
            clock: Default::default(),
            rst: Default::default(),
            a: Default::default(),
            b: Default::default(),
            exp: Default::default(),
            ram: Default::default(),
            now: Default::default(),
            scan: Default::default(),
            s_idx: Default::default(),
            s_ok: Default::default(),
            clr: Default::default(),
            lw_v: Default::default(),
            lw_q: Default::default(),
            e_v: Default::default(),
            e_q: Default::default(),
            lfsr: Default::default(),
            unit: Constant::new(unit.into()),
            jmask: Constant::new(jitter_mask(unit).into()),
            lfsr_taps: Constant::new(0x8020_0003u64.into()),
            lfsr_seed: Constant::new(0x2545_F491u64.into()),
            rnr_tab: std::array::from_fn(|i| {
                Constant::new(rnr_wait_cycles(i as u8, p.clock_khz).into())
            }),
            cidx: std::array::from_fn(|i| Constant::new((i as u64).into())),
            c_qhi: Constant::new((p.qpn_high_mask() as u64).into()),
            ev_v: Default::default(),
            ev_q: Default::default(),
            ev_rnr: Default::default(),
            ev_code: Default::default(),
            ev_arm: Default::default(),
            k_v: Default::default(),
            k_q: Default::default(),
            k_rnr: Default::default(),
            k_code: Default::default(),
            ev_wr: Default::default(),
            r_v: Default::default(),
            r_q: Default::default(),
            r_rnr: Default::default(),
            r_code: Default::default(),
            r_sup: Default::default(),
            dly: Default::default(),
            dl: Default::default(),
            diff: Default::default(),
            expired: Default::default(),
            fire: Default::default(),
            hold: Default::default(),
        }
    }
}

/// The jitter mask of the ACK timeout's unit: all ones below a quarter of the unit's top bit,
/// so `(lfsr & mask) << code` lies in [0, timeout / 2).
pub fn jitter_mask(unit: u64) -> u64 {
    let bits = 64 - unit.leading_zeros();
    (1u64 << bits.saturating_sub(2)) - 1
}

impl Default for AckTimer {
    fn default() -> Self {
        AckTimer::new(&params::DEFAULT)
    }
}

impl Logic for AckTimer {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, now, scan, s_idx, s_ok, clr, lw_v, lw_q, e_v, e_q, lfsr
        );
        dff_setup!(
            self, clock, r_v, r_q, r_rnr, r_code, k_v, k_q, k_rnr, k_code
        );
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();
        self.now.d.next = self.now.q.val() + 1;
        // Galois LFSR (x^32 + x^22 + x^2 + x + 1), one step a cycle: the timeout jitter
        self.lfsr.d.next = self.lfsr.q.val() >> 1;
        if self.lfsr.q.val().get_bit(0) {
            self.lfsr.d.next = (self.lfsr.q.val() >> 1) ^ self.lfsr_taps.val();
        }

        // ---------------- set ports: b first, then the buffered a set, then a; none while
        // the RAM is being cleared. `a` is taken while the buffer is empty: beside a `b` set
        // into the buffer (dropped when of the same QP: `b` is the later decision), else
        // written directly
        self.b.ready.next = !self.clr.q.val();
        self.a.ready.next = !self.clr.q.val() && !self.k_v.q.val();
        self.ev_v.next =
            !self.clr.q.val() && (self.a.valid.val() || self.b.valid.val() || self.k_v.q.val());
        self.ev_q.next = self.a.qpn.val();
        self.ev_rnr.next = self.a.rnr.val();
        self.ev_code.next = self.a.code.val();
        if self.k_v.q.val() {
            self.ev_q.next = self.k_q.q.val();
            self.ev_rnr.next = self.k_rnr.q.val();
            self.ev_code.next = self.k_code.q.val();
        }
        if self.b.valid.val() {
            self.ev_q.next = self.b.qpn.val();
            self.ev_rnr.next = self.b.rnr.val();
            self.ev_code.next = self.b.code.val();
        }
        if self.clr.q.val() {
            // (nothing taken)
        } else if self.b.valid.val() {
            if self.k_v.q.val() && (self.k_q.q.val() == self.b.qpn.val()) {
                self.k_v.d.next = false;
            }
            if !self.k_v.q.val() && self.a.valid.val() && (self.a.qpn.val() != self.b.qpn.val()) {
                self.k_v.d.next = true;
                self.k_q.d.next = self.a.qpn.val();
                self.k_rnr.d.next = self.a.rnr.val();
                self.k_code.d.next = self.a.code.val();
            }
        } else {
            self.k_v.d.next = false;
        }
        self.ev_wr.next = self.ev_v.val() && !(self.ev_q.val() & self.c_qhi.val()).any();
        // the set taken is registered; its entry is written in the next cycle (below, `r_*`)
        self.r_v.d.next = self.ev_wr.val();
        self.r_q.d.next = self.ev_q.val().get_bits::<QB>(0);
        self.r_rnr.d.next = self.ev_rnr.val();
        self.r_code.d.next = self.ev_code.val();
        // the delay below is non-zero exactly when this holds (every RNR table entry is
        // non-zero, 1024 << code fits 48 bits): the armed bit does not wait for the sum
        self.ev_arm.next = self.r_rnr.q.val() || self.r_code.q.val().any();
        // the local ACK timeout plus a jitter in [0, timeout / 2): never shorter than IBTA's
        // 4.096 us x 2^code, and QPs hit by the same burst of losses do not all time out and
        // retransmit in the same cycle again (their go-back-N bursts would meet at the
        // receiver's RX FIFO every round)
        self.dly.next = (self.unit.val() << self.r_code.q.val())
            + ((bit_cast::<48, 32>(self.lfsr.q.val()) & self.jmask.val()) << self.r_code.q.val());
        if self.r_rnr.q.val() {
            for i in 0..32 {
                if self.r_code.q.val() == self.cidx[i].val() {
                    self.dly.next = self.rnr_tab[i].val();
                }
            }
        } else if self.r_code.q.val() == 0 {
            self.dly.next = 0.into();
        }

        // ---------------- scanner: read entry `scan`, decide on it a cycle later
        self.dl.next = self.ram.read_data.val().get_bits::<48>(0);
        self.diff.next = self.now.q.val() - self.dl.val();
        self.expired.next = self.ram.read_data.val().get_bit(48) && !self.diff.val().get_bit(47);
        self.fire.next = self.s_ok.q.val()
            && !self.clr.q.val()
            && self.expired.val()
            && !(self.lw_v.q.val() && (self.lw_q.q.val() == self.s_idx.q.val()))
            && !self.r_v.q.val()
            && (!self.e_v.q.val() || self.exp.ready.val());
        // an expired entry that cannot be reported this cycle (sink busy, write port taken,
        // or read data possibly stale) is read again rather than left for the next round
        self.hold.next = self.s_ok.q.val() && self.expired.val() && !self.fire.val();
        self.scan.d.next = self.scan.q.val() + 1;
        self.ram.read_address.next = self.scan.q.val();
        self.s_idx.d.next = self.scan.q.val();
        if self.hold.val() {
            self.scan.d.next = self.scan.q.val();
            self.ram.read_address.next = self.s_idx.q.val();
            self.s_idx.d.next = self.s_idx.q.val();
        }
        self.s_ok.d.next = !self.clr.q.val();

        // ---------------- the RAM's write port: clear sweep > set ports > scanner disarm
        self.ram.write_enable.next = false;
        self.ram.write_address.next = self.s_idx.q.val();
        self.ram.write_data.next = 0.into();
        if self.clr.q.val() {
            self.ram.write_enable.next = true;
            self.ram.write_address.next = self.scan.q.val();
            if self.scan.q.val().all() {
                self.clr.d.next = false;
            }
        } else if self.r_v.q.val() {
            self.ram.write_enable.next = true;
            self.ram.write_address.next = self.r_q.q.val();
            self.ram.write_data.next = bit_cast::<49, 48>(self.now.q.val() + self.dly.val());
            if self.ev_arm.val() {
                self.ram.write_data.next = bit_cast::<49, 48>(self.now.q.val() + self.dly.val())
                    | (bit_cast::<49, 1>(1.into()) << 48);
            }
        } else if self.fire.val() {
            self.ram.write_enable.next = true;
        }
        self.lw_v.d.next = self.r_v.q.val();
        self.lw_q.d.next = self.r_q.q.val();

        // ---------------- expiry output
        // (not while a set of its QP, taken in the last cycle, is written: it supersedes it)
        self.r_sup.next = self.r_v.q.val() && (self.r_q.q.val() == self.e_q.q.val());
        self.exp.valid.next = self.e_v.q.val() && !self.r_sup.val();
        self.exp.qpn.next = bit_cast::<24, QB>(self.e_q.q.val());
        if self.exp.ready.val() {
            self.e_v.d.next = false;
        }
        // a set of the QP whose expiry is still waiting for the sink supersedes it
        if self.r_sup.val() {
            self.e_v.d.next = false;
        }
        if self.fire.val() {
            self.e_v.d.next = true;
            self.e_q.d.next = self.s_idx.q.val();
        }
        if self.rst.val() {
            self.clr.d.next = true;
            self.scan.d.next = 0.into();
            self.e_v.d.next = false;
            self.lw_v.d.next = false;
            self.r_v.d.next = false;
            self.k_v.d.next = false;
            self.s_ok.d.next = false;
            self.now.d.next = 0.into();
            self.lfsr.d.next = self.lfsr_seed.val();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::*;
    use rand::Rng;

    const P: BuildParams = params::DEFAULT;

    /// Random arms/re-arms/disarms on both ports with random idle and backpressure; every
    /// expiry must come no earlier than the entry's deadline (IBTA's timeout, or the RNR
    /// table's time) and at most the timeout's jitter (< timeout / 2) plus one scan round
    /// (+ the sink's backpressure) after it, for the latest set of that QP, exactly once; the
    /// jitter must really spread the expiries. An `a` set is taken whenever the buffer is
    /// empty; one taken beside a `b` set is written after it unless of the same QP.
    #[test]
    fn timers_expire_on_time() {
        let mut m = model(AckTimer::default(), "acktimer");
        let mut r = rng(7);
        reset(&mut m);
        // clearing sweep (set ports not ready meanwhile)
        let mut now: u64 = 0;
        let mut cleared = false;
        for _ in 0..NQ + 4 {
            m.tick();
            now += 1;
            cleared |= m.get("b_ready") == 1;
        }
        assert!(cleared, "the clear sweep did not end");
        // model: per QP, Some((deadline, allowed jitter)) while armed
        let mut want: Vec<Option<(u64, u64)>> = vec![None; NQ];
        let mut fired = 0u64;
        let mut late_max = 0u64;
        let mut jitters = std::collections::BTreeSet::new();
        // the a set waiting beside b's (the block's buffer), and how many did
        let mut buf: Option<(u64, bool, u64)> = None;
        let mut buffered = 0u64;
        let unit = ack_timeout_cycles(1, P.clock_khz).unwrap() / 2;
        for cyc in 0..200_000u64 {
            let mut drive_set = |m: &mut crate::common::vlt::DynModel, port: &str| {
                if cyc >= 150_000 || !chance(&mut r, 0.02) {
                    m.set(&format!("{port}_valid"), 0);
                    return None;
                }
                let q = r.random_range(0..NQ as u64 + 2); // a few out of range
                let rnr = r.random_bool(0.3);
                let code = if rnr {
                    r.random_range(1..4u64)
                } else {
                    r.random_range(0..4u64)
                };
                m.set(&format!("{port}_qpn"), q);
                m.set(&format!("{port}_rnr"), rnr as u64);
                m.set(&format!("{port}_code"), code);
                m.set(&format!("{port}_valid"), 1);
                Some((q, rnr, code))
            };
            let sa = drive_set(&mut m, "a");
            let sb = drive_set(&mut m, "b");
            let exp_ready = !chance(&mut r, 0.3);
            m.set("exp_ready", exp_ready as u64);
            m.tick();
            // the outputs of the cycle that just ended (what the edge sampled)
            let a_ok = sa.is_some() && m.get("a_ready") == 1;
            let b_ok = sb.is_some() && m.get("b_ready") == 1;
            assert!(sb.is_none() || b_ok, "b not ready after the sweep");
            assert!(
                sa.is_none() || buf.is_some() || a_ok,
                "a not taken with the buffer empty"
            );
            // the set written this cycle: b's, else the buffered a set, else a's; an a set
            // taken beside b's waits in the buffer, and b's drops one of its QP
            let ev = if let Some(b) = sb.filter(|_| b_ok) {
                if buf.is_some_and(|k: (u64, bool, u64)| k.0 == b.0) {
                    buf = None;
                }
                if let Some(a) = sa.filter(|_| a_ok)
                    && a.0 != b.0
                {
                    assert!(buf.is_none(), "a taken with the buffer full");
                    buf = Some(a);
                    buffered += 1;
                }
                sb
            } else if buf.is_some() {
                assert!(!a_ok, "a taken with the buffer full");
                buf.take()
            } else if a_ok {
                sa
            } else {
                None
            };
            if exp_ready && m.get("exp_valid") == 1 {
                let q = m.get("exp_qpn") as usize;
                let (d, j) = want[q]
                    .take()
                    .unwrap_or_else(|| panic!("cycle {cyc}: QP {q} expired unarmed"));
                assert!(now >= d, "QP {q} expired at {now}, deadline {d}");
                let late = (now - d).saturating_sub(j);
                late_max = late_max.max(late);
                if let Some(b) = ((now - d) * 16).checked_div(j) {
                    jitters.insert(b);
                }
                fired += 1;
            }
            if let Some((q, rnr, code)) = ev
                && (q as usize) < NQ
            {
                let (dly, j) = if rnr {
                    (rnr_wait_cycles(code as u8, P.clock_khz), 0)
                } else if code == 0 {
                    (0, 0)
                } else {
                    (unit << code, (unit << code) / 2)
                };
                want[q as usize] = (dly != 0).then_some((now + dly, j));
            }
            now += 1;
        }
        assert!(
            want.iter().all(|w| w.is_none()),
            "timers left armed: {:?}",
            want.iter().enumerate().filter(|(_, w)| w.is_some()).count()
        );
        assert!(fired > 1000, "only {fired} expiries");
        assert!(buffered > 10, "only {buffered} a sets taken beside a b set");
        // one scan round plus a little for the pipeline and the sink's random backpressure
        assert!(
            late_max <= NQ as u64 + 40,
            "an expiry came {late_max} cycles after its deadline plus the jitter"
        );
        // ACK-timeout expiries spread over the whole jitter window (16 buckets of it)
        assert!(jitters.len() >= 12, "jitter buckets seen: {jitters:?}");
    }
}
