// Verilator testbench for the dual-clock AXI-Stream FIFO (rnic_rtl::cdc_fifo).
// Two unrelated clocks simulated in picoseconds; a seeded source with random idle cycles
// and a seeded sink with random backpressure. Every beat carries its sequence number, its
// frame number and a hash of both over all 512 bits, so loss, duplication, reordering and
// corruption are all detected. Built by tests/cdc.rs.
//
// usage: tb seed s_period_ps m_period_ps m_phase_ps idle_pct bp_pct frames max_len mode
//   mode 0 = cut-through, 1 = packet (store and forward), 2 = drop on full
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <random>
#include <vector>
#include "verilated.h"
#include "cdc_tb_cfg.h"  // written by tests/cdc.rs: includes the model, defines VTOP

struct Beat {
    uint64_t seq, frame;
    uint32_t idx, len;  // position in frame, frame length in beats
    uint64_t keep;
    bool last, user;
};

static uint32_t mix(uint64_t a, uint32_t w) {
    uint64_t x = a * 0x9E3779B97F4A7C15ull + w * 0xBF58476D1CE4E5B9ull + 0x94D049BB133111EBull;
    x ^= x >> 31; x *= 0xD6E8FEEBDA2F3D5Bull; x ^= x >> 29;
    return (uint32_t)x;
}

static void put_data(VTOP* t, const Beat& b) {
    t->s_axis_tdata[0] = (uint32_t)b.seq;
    t->s_axis_tdata[1] = (uint32_t)(b.seq >> 32);
    t->s_axis_tdata[2] = (uint32_t)b.frame;
    t->s_axis_tdata[3] = b.idx | (b.len << 16);
    for (int w = 4; w < 16; w++) t->s_axis_tdata[w] = mix(b.seq, w);
    t->s_axis_tkeep = b.keep;
    t->s_axis_tlast = b.last;
    t->s_axis_tuser = b.user;
}

int main(int argc, char** argv) {
    if (argc < 10) { fprintf(stderr, "usage: see source\n"); return 2; }
    uint64_t seed = strtoull(argv[1], 0, 0);
    uint64_t sp = strtoull(argv[2], 0, 0), mp = strtoull(argv[3], 0, 0);
    uint64_t mphase = strtoull(argv[4], 0, 0);
    int idle = atoi(argv[5]), bp = atoi(argv[6]);
    uint64_t frames = strtoull(argv[7], 0, 0);
    uint32_t max_len = atoi(argv[8]);
    int mode = atoi(argv[9]);

    VerilatedContext ctx;
    VTOP* t = new VTOP(&ctx);
    std::mt19937_64 rs(seed), rm(seed ^ 0x5555AAAA5555AAAAull);

    // the frames the source will send
    std::vector<Beat> sent;
    uint64_t seq = 0;
    for (uint64_t f = 0; f < frames; f++) {
        uint32_t len = 1 + (uint32_t)(rs() % max_len);
        for (uint32_t i = 0; i < len; i++) {
            Beat b{seq++, f, i, len, ~0ull, i + 1 == len, false};
            if (b.last) {
                b.keep = ~0ull >> (rs() % 64);
                b.user = (rs() % 8) == 0;
            }
            sent.push_back(b);
        }
    }

    // reset both sides (overlapping), then run
    uint64_t now = 0, next_s = sp / 2, next_m = mphase + mp / 2;
    bool s_clk = false, m_clk = false;
    t->s_clk = 0; t->m_clk = 0; t->s_rst = 1; t->m_rst = 1;
    t->s_axis_tvalid = 0; t->m_axis_tready = 0;
    put_data(t, sent[0]);
    t->eval();
    uint64_t s_edges = 0, m_edges = 0;
    size_t src = 0;              // index of the beat being offered
    bool offering = false;
    uint64_t overflows = 0;
    // receiver state
    size_t rx_beats = 0, rx_frames = 0, rx_trunc = 0;
    int64_t last_frame = -1;     // last frame number seen complete or truncated
    bool in_frame = false;       // a frame is partially received
    uint64_t cur_frame = 0;
    uint32_t cur_idx = 0;
    int errors = 0;
    auto fail = [&](const char* what, uint64_t a, uint64_t b) {
        if (errors++ < 10) fprintf(stderr, "ERROR at %llu ps: %s (%llu, %llu)\n",
                                   (unsigned long long)now, what, (unsigned long long)a,
                                   (unsigned long long)b);
    };
    uint64_t idle_m_edges = 0;
    const uint64_t limit_ps = 4000000000000ull;
    while (now < limit_ps) {
        now = std::min(next_s, next_m);
        bool s_rise = false, m_rise = false;
        // ---- sample the handshakes just before the edges
        bool s_fire = false, m_fire = false;
        if (now == next_s && !s_clk) { s_rise = true; s_fire = t->s_axis_tvalid && t->s_axis_tready; }
        if (now == next_m && !m_clk) { m_rise = true; m_fire = t->m_axis_tvalid && t->m_axis_tready; }
        if (s_rise && t->s_overflow) overflows++;
        if (m_rise) {
            if (mode == 1 && in_frame && !t->m_axis_tvalid && !t->m_rst)
                fail("packet mode: tvalid dropped inside a frame", cur_frame, cur_idx);
        }
        if (m_fire) {
            uint64_t rseq = t->m_axis_tdata[0] | ((uint64_t)t->m_axis_tdata[1] << 32);
            uint64_t rframe = t->m_axis_tdata[2];
            uint32_t ridx = t->m_axis_tdata[3] & 0xFFFF;
            if (rseq >= sent.size()) { fail("unknown beat", rseq, 0); }
            else {
                const Beat& b = sent[rseq];
                if (rframe != b.frame || ridx != b.idx) fail("header mismatch", rseq, rframe);
                for (int w = 4; w < 16; w++)
                    if (t->m_axis_tdata[w] != mix(rseq, w)) { fail("data corrupted", rseq, w); break; }
                if (!in_frame) {
                    // a new frame must start at index 0, after the last frame seen
                    if (ridx != 0) fail("frame does not start at beat 0", rframe, ridx);
                    if ((int64_t)rframe <= last_frame) fail("frame duplicated or reordered", rframe, last_frame);
                    if (mode != 2 && (int64_t)rframe != last_frame + 1) fail("frame lost", rframe, last_frame);
                    in_frame = true; cur_frame = rframe; cur_idx = 0;
                } else {
                    if (rframe != cur_frame || ridx != cur_idx + 1) fail("beat lost, duplicated or reordered", rseq, cur_idx);
                    cur_idx = ridx;
                }
                bool rlast = t->m_axis_tlast, ruser = t->m_axis_tuser;
                if (rlast) {
                    if (b.last) {
                        if (t->m_axis_tkeep != b.keep) fail("tkeep", rseq, t->m_axis_tkeep);
                        if (ruser != b.user) fail("tuser", rseq, ruser);
                    } else {
                        // truncated by the drop-on-full logic: must be marked bad
                        if (mode != 2) fail("tlast on a middle beat", rseq, ridx);
                        if (!ruser) fail("truncated frame not marked bad", rseq, ridx);
                        rx_trunc++;
                    }
                    in_frame = false; last_frame = (int64_t)rframe; rx_frames++;
                } else {
                    if (b.last) fail("missing tlast", rseq, ridx);
                    if (t->m_axis_tkeep != ~0ull) fail("tkeep middle", rseq, t->m_axis_tkeep);
                }
                rx_beats++;
            }
        }
        // ---- edges
        if (now == next_s) { s_clk = !s_clk; next_s += sp / 2 + (s_clk ? 0 : sp % 2); }
        if (now == next_m) { m_clk = !m_clk; next_m += mp / 2 + (m_clk ? 0 : mp % 2); }
        t->s_clk = s_clk; t->m_clk = m_clk;
        t->eval();
        // ---- drive new inputs after the edges (clock-to-out)
        if (s_rise) {
            s_edges++;
            if (s_edges == 6) t->s_rst = 0;
            if (s_fire) { src++; offering = false; }
            if (!t->s_rst && src < sent.size()) {
                if (!offering) offering = (int)(rs() % 100) >= idle;  // AXIS: never withdraw
                if (offering) put_data(t, sent[src]);
                t->s_axis_tvalid = offering;
            } else {
                t->s_axis_tvalid = 0;
            }
        }
        if (m_rise) {
            m_edges++;
            if (m_edges == 6) t->m_rst = 0;
            t->m_axis_tready = !t->m_rst && (int)(rm() % 100) >= bp;
            if (src >= sent.size() && !t->m_axis_tvalid && !in_frame) idle_m_edges++;
            else idle_m_edges = 0;
        }
        t->eval();
        if (src >= sent.size() && idle_m_edges > 200) break;
    }
    if (in_frame) fail("stream ended inside a frame", cur_frame, cur_idx);
    if (mode != 2) {
        if (rx_beats != sent.size()) fail("beat count", rx_beats, sent.size());
        if (overflows) fail("overflow outside drop mode", overflows, 0);
    } else {
        uint64_t lost_frames = frames - rx_frames;
        if (rx_trunc + lost_frames > overflows) fail("frames lost without an overflow pulse", rx_trunc + lost_frames, overflows);
        if (bp == 0 && mp <= sp && overflows) fail("drop without backpressure", overflows, 0);
    }
    printf("%s seed=%llu s=%llups m=%llups idle=%d%% bp=%d%% mode=%d: sent %zu beats/%llu frames, "
           "received %zu beats/%zu frames, truncated %zu, overflow pulses %llu, %llu ps\n",
           errors ? "FAIL" : "PASS", (unsigned long long)seed, (unsigned long long)sp,
           (unsigned long long)mp, idle, bp, mode, sent.size(), (unsigned long long)frames, rx_beats,
           rx_frames, rx_trunc, (unsigned long long)overflows, (unsigned long long)now);
    delete t;
    return errors ? 1 : 0;
}
