//! `BurstSplit`: one DMA command as AXI4 INCR bursts of 64-byte beats that never cross a
//! 4 KiB page (so at most 64 beats each), for `dmaeng`'s AR and AW issuers alike.
//!
//! `load` takes a command (the cycle the issuer takes it): its first beat (`load_beat`, the
//! byte address / 64) and `load_na`, its beats after the first (beats - 1: at most 128, an
//! 8 KiB command at any alignment touching 129 beats). The current burst is on `beat` (its first beat)
//! and `blen` (beats - 1, the AXI `AxLEN`), `last` when it ends the command; `fire` (its
//! address handshake) moves to the next burst, and `busy` falls when the last one fired
//! (a `load` in that very cycle takes the next command: the issuer's intake is
//! `!busy || (fire && last)`).
//!
//! Every value on the outputs is a register: the burst length and the final-burst test are
//! decided a cycle ahead, at `load` from the page offset and the command's beat count, at
//! `fire` from the beats left (a burst that is not the last ends at a page end, so the next
//! one starts on a page and holds min(rest, 64) beats). So no address arithmetic sits in
//! front of `AxLEN`, `AxVALID` or the intake's ready (10, then 9 LUT levels before).

use rust_hdl::prelude::*;

/// The block: see the module documentation.
#[derive(LogicBlock, Default)]
pub struct BurstSplit {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub load: Signal<In, Bit>,
    pub load_beat: Signal<In, Bits<58>>,
    pub load_na: Signal<In, Bits<8>>,
    pub fire: Signal<In, Bit>,
    pub busy: Signal<Out, Bit>,
    pub beat: Signal<Out, Bits<58>>,
    pub blen: Signal<Out, Bits<9>>,
    pub last: Signal<Out, Bit>,
    busy_r: DFF<Bit>,
    beat_r: DFF<Bits<58>>,
    /// beats of the command after the current burst's first
    rem_r: DFF<Bits<9>>,
    blen_r: DFF<Bits<9>>,
    last_r: DFF<Bit>,
    /// beats after the current burst's last (when it is not the command's last)
    n_rem: Signal<Local, Bits<9>>,
    n_last: Signal<Local, Bit>,
    /// beats left in the page after the loaded command's first beat (negated in 6 bits,
    /// then widened: see docs/ARCHITECTURE.md "rust-hdl")
    l_left: Signal<Local, Bits<6>>,
    l_left9: Signal<Local, Bits<9>>,
    l_na9: Signal<Local, Bits<9>>,
    l_last: Signal<Local, Bit>,
}

impl Logic for BurstSplit {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, busy_r, beat_r, rem_r, blen_r, last_r);
        self.busy.next = self.busy_r.q.val();
        self.beat.next = self.beat_r.q.val();
        self.blen.next = self.blen_r.q.val();
        self.last.next = self.last_r.q.val();
        // the next burst starts on a page: min(rest, 64) beats
        self.n_rem.next = self.rem_r.q.val() - self.blen_r.q.val() - 1;
        self.n_last.next = self.n_rem.val() <= 63;
        if self.fire.val() {
            self.beat_r.d.next = self.beat_r.q.val() + bit_cast::<58, 9>(self.blen_r.q.val()) + 1;
            self.rem_r.d.next = self.n_rem.val();
            self.last_r.d.next = self.n_last.val();
            self.blen_r.d.next = 63.into();
            if self.n_last.val() {
                self.blen_r.d.next = self.n_rem.val();
            }
            if self.last_r.q.val() {
                self.busy_r.d.next = false;
            }
        }
        // a command: to the end of the command or of the page, whichever comes first
        self.l_left.next = !self.load_beat.val().get_bits::<6>(0);
        self.l_left9.next = bit_cast::<9, 6>(self.l_left.val());
        self.l_na9.next = bit_cast::<9, 8>(self.load_na.val());
        self.l_last.next = self.l_na9.val() <= self.l_left9.val();
        if self.load.val() {
            self.busy_r.d.next = true;
            self.beat_r.d.next = self.load_beat.val();
            self.rem_r.d.next = self.l_na9.val();
            self.last_r.d.next = self.l_last.val();
            self.blen_r.d.next = self.l_left9.val();
            if self.l_last.val() {
                self.blen_r.d.next = self.l_na9.val();
            }
        }
        if self.rst.val() {
            self.busy_r.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::*;
    use rand::Rng;

    /// The bursts of a command, as the AXI4 rule gives them: INCR bursts of at most 64 beats
    /// that never cross a 4 KiB page, covering beats `first ..= first + na` in order.
    fn want(first: u64, na: u64) -> Vec<(u64, u64)> {
        let (mut b, end, mut v) = (first, first + na, vec![]);
        while b <= end {
            let page_end = (b | 63).min(end);
            v.push((b, page_end - b));
            b = page_end + 1;
        }
        v
    }

    /// Random commands (any first beat, 1 to 130 beats, many near page ends and 58-bit
    /// address ends), random gaps between them and random stalls of the address handshake:
    /// the bursts are exactly [`want`]'s, `last` on the final one only, and a command loaded
    /// in the cycle its predecessor's last burst fires follows it at once.
    #[test]
    fn bursts_never_cross_a_page_under_random_stalls() {
        let mut m = model(BurstSplit::default(), "burst");
        let mut r = rng(61);
        reset(&mut m);
        let (mut cmds, mut bursts, mut back_to_back) = (0, 0, 0);
        let mut cur: Option<std::collections::VecDeque<(u64, u64)>> = None;
        let mut next: Option<(u64, u64)> = None;
        for _ in 0..60_000 {
            if next.is_none() && chance(&mut r, 0.5) {
                let first = match r.random_range(0..4) {
                    0 => r.random_range(0..1u64 << 58),
                    1 => (r.random_range(0..1u64 << 52) << 6) | r.random_range(56..64),
                    2 => (1u64 << 58) - r.random_range(1..200),
                    _ => r.random_range(0..4096),
                };
                let na = r.random_range(0..130u64).min((1u64 << 58) - 1 - first);
                next = Some((first, na));
            }
            let fire = cur.is_some() && !chance(&mut r, 0.3);
            // the intake: idle, or the last burst fires now
            let final_now = fire && cur.as_ref().is_some_and(|c| c.len() == 1);
            let load = next.is_some() && (cur.is_none() || final_now);
            m.set("fire", fire as u64);
            m.set("load", load as u64);
            let (first, na) = next.unwrap_or((0, 0));
            m.set("load_beat", first);
            m.set("load_na", na);
            m.tick();
            assert_eq!(m.bit("busy"), cur.is_some());
            if let Some(c) = cur.as_mut() {
                let (b, l) = c[0];
                assert_eq!((m.get("beat"), m.get("blen")), (b, l), "burst");
                assert_eq!(m.bit("last"), c.len() == 1, "last");
                if fire {
                    c.pop_front();
                    bursts += 1;
                }
            }
            if cur.as_ref().is_some_and(|c| c.is_empty()) {
                cur = None;
            }
            if load {
                back_to_back += final_now as u64;
                cur = Some(want(first, na).into());
                next = None;
                cmds += 1;
            }
        }
        assert!(cmds > 8000 && bursts > 15_000 && back_to_back > 1000);
    }
}
