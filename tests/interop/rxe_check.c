/* rxe-check: the interop data oracle. A send_bw peer on rdma_rxe that speaks perftest's TCP
 * exchange (as rnic-perf does) and compares every received message byte by byte with the
 * pattern rnic-perf sends (rnic_sim::demo::pattern, xorshift64*, seed 1), or sends that
 * pattern for rnic-perf --verify to compare. Each message gets its own receive buffer.
 *
 * usage: rxe-check [-m MTU] [-s SIZE] [-n ITERS] [-p PORT] [SERVER]
 *   without SERVER: wait for rnic-perf's client and receive; with SERVER: connect and send.
 * Prints "rxe-check: N messages of S bytes ok" and exits 0, or the first mismatch and exits 1.
 * Uses GID index 1 (the IPv4 RoCE v2 GID of rxe0).
 */
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define KEY 108
static int sock = -1, client = 0;

static void die(const char *m) { fprintf(stderr, "rxe-check: %s\n", m); exit(1); }

static void rd(void *b, size_t n) {
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(sock, (char *)b + got, n - got);
		if (r <= 0) die("TCP read failed");
		got += r;
	}
}
static void wr(const void *b, size_t n) { if (write(sock, b, n) != (ssize_t)n) die("TCP write failed"); }
static void xchg(const void *mine, void *rem, size_t n) {
	if (client) { wr(mine, n); rd(rem, n); } else { rd(rem, n); wr(mine, n); }
}

struct dest { unsigned qpn, psn, rkey; unsigned long long vaddr; uint8_t gid[16]; };

static void keys(const struct dest *m, struct dest *r) {
	char out[KEY] = {0}, in[KEY + 1] = {0};
	int n = snprintf(out, KEY, "%04x:%04x:%06x:%06x:%08x:%016llx:", 0, 1, m->qpn, m->psn, m->rkey, m->vaddr);
	for (int i = 0; i < 16; i++) n += snprintf(out + n, KEY - n, "%02x:", m->gid[i]);
	snprintf(out + n, KEY - n, "%08x:", 0);
	xchg(out, in, KEY);
	unsigned v[22];
	char *p = in;
	for (int i = 0; i < 22; i++) {
		char *e;
		unsigned long long x = strtoull(p, &e, 16);
		if (*e != ':') die("bad key message");
		if (i == 5) r->vaddr = x; else v[i] = (unsigned)x;
		p = e + 1;
	}
	r->qpn = v[2]; r->psn = v[3]; r->rkey = v[4];
	for (int i = 0; i < 16; i++) r->gid[i] = (uint8_t)v[6 + i];
}

static void pattern(uint64_t seed, uint8_t *b, size_t n) {
	uint64_t s = (seed * 0x9E3779B97F4A7C15ull) | 1;
	for (size_t i = 0; i < n; i++) {
		s ^= s >> 12; s ^= s << 25; s ^= s >> 27;
		b[i] = (uint8_t)((s * 0x2545F4914F6CDD1Dull) >> 56);
	}
}

int main(int argc, char **argv) {
	int mtu = 1024, port = 18515, opt;
	size_t size = 4096;
	int iters = 8;
	while ((opt = getopt(argc, argv, "m:s:n:p:")) != -1) {
		switch (opt) {
		case 'm': mtu = atoi(optarg); break;
		case 's': size = strtoul(optarg, 0, 0); break;
		case 'n': iters = atoi(optarg); break;
		case 'p': port = atoi(optarg); break;
		default: die("usage: rxe-check [-m MTU] [-s SIZE] [-n ITERS] [-p PORT] [SERVER]");
		}
	}
	if (iters < 1 || iters > 64) die("-n: 1..64");
	client = optind < argc;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	if (client) {
		inet_pton(AF_INET, argv[optind], &a.sin_addr);
		sock = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(sock, (struct sockaddr *)&a, sizeof a)) die("Couldn't connect");
	} else {
		int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 1)) die("listen failed");
		sock = accept(l, 0, 0);
		if (sock < 0) die("accept failed");
	}
	/* versions, system data, MTU */
	char ver[16] = "6.06", rver[16];
	xchg(ver, rver, 16);
	uint32_t cb = htonl(4096), rcb, cl = htonl(64), rcl;
	xchg(&cb, &rcb, 4);
	xchg(&cl, &rcl, 4);
	enum ibv_mtu me = mtu == 4096 ? IBV_MTU_4096 : mtu == 2048 ? IBV_MTU_2048 : mtu == 512 ? IBV_MTU_512 : mtu == 256 ? IBV_MTU_256 : IBV_MTU_1024;
	char m2[2] = {(char)('0' + me), 0}, rm2[2];
	xchg(m2, rm2, 2);
	if (rm2[0] - '0' < (int)me && rm2[0] > '0') me = (enum ibv_mtu)(rm2[0] - '0');

	struct ibv_device **dl = ibv_get_device_list(0);
	if (!dl || !dl[0]) die("no RDMA device");
	struct ibv_context *ctx = ibv_open_device(dl[0]);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	size_t slot = (size + 63) & ~(size_t)63;
	uint8_t *buf = calloc((size_t)iters + 1, slot ? slot : 64);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, (iters + 1) * slot, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	struct ibv_cq *cq = ibv_create_cq(ctx, 256, 0, 0, 0);
	struct ibv_qp_init_attr qia = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *qp = ibv_create_qp(pd, &qia);
	if (!ctx || !pd || !mr || !cq || !qp) die("verbs resources");
	union ibv_gid gid;
	if (ibv_query_gid(ctx, 1, 1, &gid)) die("query GID 1");
	srand48(time(0));
	struct dest my = {.qpn = qp->qp_num, .psn = lrand48() & 0xffffff, .rkey = mr->rkey,
		.vaddr = (uintptr_t)buf}, rem;
	memcpy(my.gid, gid.raw, 16);
	keys(&my, &rem);
	struct ibv_qp_attr at = {.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE};
	if (ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) die("INIT");
	/* every receive before the peer can send */
	if (!client)
		for (int i = 0; i < iters; i++) {
			struct ibv_sge sg = {.addr = (uintptr_t)(buf + (size_t)i * slot), .length = (uint32_t)size, .lkey = mr->lkey};
			struct ibv_recv_wr rw = {.wr_id = i, .sg_list = &sg, .num_sge = 1}, *bad;
			if (ibv_post_recv(qp, &rw, &bad)) die("post_recv");
		}
	memset(&at, 0, sizeof at);
	at.qp_state = IBV_QPS_RTR; at.path_mtu = me; at.dest_qp_num = rem.qpn; at.rq_psn = rem.psn;
	at.max_dest_rd_atomic = 1; at.min_rnr_timer = 12;
	at.ah_attr.is_global = 1; at.ah_attr.port_num = 1; at.ah_attr.grh.hop_limit = 64; at.ah_attr.grh.sgid_index = 1;
	memcpy(at.ah_attr.grh.dgid.raw, rem.gid, 16);
	if (ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) die("RTR");
	memset(&at, 0, sizeof at);
	at.qp_state = IBV_QPS_RTS; at.timeout = 14; at.retry_cnt = 7; at.rnr_retry = 7; at.sq_psn = my.psn; at.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC)) die("RTS");
	struct dest junk;
	keys(&my, &junk); /* after RTR */
	keys(&my, &junk); /* send_bw's second key exchange */
	keys(&my, &junk); /* before the traffic */
	uint8_t *want = malloc(size ? size : 1);
	pattern(1, want, size);
	int done = 0;
	struct ibv_wc wc[16];
	if (client) {
		memcpy(buf + (size_t)iters * slot, want, size);
		for (int i = 0; i < iters; i++) {
			struct ibv_sge sg = {.addr = (uintptr_t)(buf + (size_t)iters * slot), .length = (uint32_t)size, .lkey = mr->lkey};
			struct ibv_send_wr sw = {.wr_id = i, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
				.send_flags = IBV_SEND_SIGNALED}, *bad;
			if (ibv_post_send(qp, &sw, &bad)) die("post_send");
		}
	}
	time_t t0 = time(0);
	while (done < iters) {
		int n = ibv_poll_cq(cq, 16, wc);
		if (n < 0) die("poll_cq");
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "rxe-check: completion %llu: %s\n", (unsigned long long)wc[i].wr_id, ibv_wc_status_str(wc[i].status));
				return 1;
			}
			if (!client) {
				const uint8_t *got = buf + wc[i].wr_id * slot;
				if (wc[i].byte_len != size) {
					fprintf(stderr, "rxe-check: message %llu: %u bytes, expected %zu\n", (unsigned long long)wc[i].wr_id, wc[i].byte_len, size);
					return 1;
				}
				for (size_t k = 0; k < size; k++)
					if (got[k] != want[k]) {
						fprintf(stderr, "rxe-check: message %llu byte %zu: %02x, expected %02x: invalid data\n",
							(unsigned long long)wc[i].wr_id, k, got[k], want[k]);
						return 1;
					}
			}
			done++;
		}
		if (time(0) - t0 > 600) die("timeout waiting for completions");
	}
	keys(&my, &junk); /* closing hand shake */
	wr("done", 5);
	printf("rxe-check: %d messages of %zu bytes %s\n", iters, size, client ? "sent" : "ok (compared byte by byte)");
	return 0;
}
