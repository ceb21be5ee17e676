/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NLM v4, NSM and PMAP v2 over rawrpc and rl_main; the fake client host is in rawnlm_host.c.
 * See rawnlm.h. */
#include "rawnlm.h"
#include "rawnlm_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- encoding ---- */

static uint32_t cred_uid, cred_gid;

void rl_set_cred(uint32_t uid, uint32_t gid)
{
	cred_uid = uid;
	cred_gid = gid;
}

static void call_hdr(struct xb *b, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc)
{
	struct xb cred = {0};
	xb_auth_sys(&cred, cred_uid, cred_gid);
	b->len = 0;
	xb_call(b, xid, 2, prog, vers, proc, RAW_AUTH_SYS, &cred);
}

static void put_cookie(struct xb *b, uint32_t xid)
{
	uint8_t c[4] = {(uint8_t)(xid >> 24), (uint8_t)(xid >> 16), (uint8_t)(xid >> 8),
	                 (uint8_t)xid};
	xb_opaque(b, c, 4);
}

static void put_lock(struct xb *b, const struct rl_lock *l)
{
	xb_string(b, l->caller);
	xb_opaque(b, l->fh.data, l->fh.len);
	xb_opaque(b, l->oh, l->oh ? strlen(l->oh) : 0);
	xb_u32(b, (uint32_t)l->svid);
	xb_u64(b, l->off);
	xb_u64(b, l->len);
}

void rl_enc_null(struct xb *b, uint32_t xid, uint32_t prog, uint32_t vers)
{
	call_hdr(b, xid, prog, vers, 0);
}

void rl_enc_as_msg(struct xb *b, uint32_t proc)
{
	/* the procedure is the call header's sixth word: xid, CALL, rpcvers, prog, vers, proc */
	uint8_t be[4] = {(uint8_t)(proc >> 24), (uint8_t)(proc >> 16), (uint8_t)(proc >> 8),
	                 (uint8_t)proc};
	memcpy(b->buf + 20, be, 4);
}

int rl_dec_res_call(const struct rl_incall *c, uint32_t *cookie, uint32_t *stat)
{
	if (c->args_len < 12 || get_u32(c->args) != 4)   /* a 4-byte cookie, then the status */
		return -1;
	*cookie = get_u32(c->args + 4);
	*stat = get_u32(c->args + 8);
	return 0;
}

void rl_enc_test(struct xb *b, uint32_t xid, const struct rl_lock *l, bool excl)
{
	call_hdr(b, xid, RL_NLM_PROG, RL_NLM4_VERS, RL_NLM_TEST);
	put_cookie(b, xid);
	xb_u32(b, excl);
	put_lock(b, l);
}

void rl_enc_lock(struct xb *b, uint32_t xid, const struct rl_lock *l, bool excl, bool block,
                 bool reclaim, int32_t state)
{
	call_hdr(b, xid, RL_NLM_PROG, RL_NLM4_VERS, RL_NLM_LOCK);
	put_cookie(b, xid);
	xb_u32(b, block);
	xb_u32(b, excl);
	put_lock(b, l);
	xb_u32(b, reclaim);
	xb_u32(b, (uint32_t)state);
}

void rl_enc_cancel(struct xb *b, uint32_t xid, const struct rl_lock *l, bool excl, bool block)
{
	call_hdr(b, xid, RL_NLM_PROG, RL_NLM4_VERS, RL_NLM_CANCEL);
	put_cookie(b, xid);
	xb_u32(b, block);
	xb_u32(b, excl);
	put_lock(b, l);
}

void rl_enc_unlock(struct xb *b, uint32_t xid, const struct rl_lock *l)
{
	call_hdr(b, xid, RL_NLM_PROG, RL_NLM4_VERS, RL_NLM_UNLOCK);
	put_cookie(b, xid);
	put_lock(b, l);
}

void rl_enc_free_all(struct xb *b, uint32_t xid, const char *name, int32_t state)
{
	call_hdr(b, xid, RL_NLM_PROG, RL_NLM4_VERS, RL_NLM_FREE_ALL);
	xb_string(b, name);
	xb_u32(b, (uint32_t)state);
}

void rl_enc_sm_notify(struct xb *b, uint32_t xid, const char *mon_name, int32_t state)
{
	call_hdr(b, xid, RL_SM_PROG, RL_SM_VERS, RL_SM_NOTIFY);
	xb_string(b, mon_name);
	xb_u32(b, (uint32_t)state);
}

void rl_enc_sm_stat(struct xb *b, uint32_t xid, const char *mon_name)
{
	call_hdr(b, xid, RL_SM_PROG, RL_SM_VERS, RL_SM_STAT);
	xb_string(b, mon_name);
}

void rl_enc_pmap(struct xb *b, uint32_t xid, uint32_t proc, uint32_t prog, uint32_t vers,
                 uint32_t prot, uint32_t port)
{
	call_hdr(b, xid, RL_PMAP_PROG, RL_PMAP_VERS, proc);
	if (proc == RL_PMAP_DUMP || proc == 0)
		return;
	xb_u32(b, prog);
	xb_u32(b, vers);
	xb_u32(b, prot);
	xb_u32(b, port);
}

/* ---- decoding ---- */

uint32_t rd_u32(struct rd *d)
{
	if (d->bad || d->end - d->p < 4) {
		d->bad = true;
		return 0;
	}
	uint32_t v = get_u32(d->p);
	d->p += 4;
	return v;
}

uint64_t rd_u64(struct rd *d)
{
	uint64_t hi = rd_u32(d);
	return hi << 32 | rd_u32(d);
}

/* An opaque<>: its bytes (into the buffer) and length; NULL when malformed or longer than max. */
const uint8_t *rd_opaque(struct rd *d, uint32_t *len, uint32_t max)
{
	uint32_t n = rd_u32(d);
	size_t padded = ((size_t)n + 3) & ~(size_t)3;
	if (d->bad || n > max || (size_t)(d->end - d->p) < padded) {
		d->bad = true;
		return NULL;
	}
	const uint8_t *p = d->p;
	d->p += padded;
	*len = n;
	return p;
}

static struct rd body_of(const struct raw_reply *r)
{
	struct rd d = {r->body, r->body + r->body_len, false};
	if (r->reply_stat != 0 || r->accept_stat != 0 || r->body == NULL)
		d.bad = true;
	return d;
}

static bool cookie_is(struct rd *d, uint32_t want)
{
	uint32_t len;
	const uint8_t *c = rd_opaque(d, &len, 1024);
	return c && len == 4 && get_u32(c) == want;
}

int rl_dec_res(const struct raw_reply *r, uint32_t want_cookie)
{
	struct rd d = body_of(r);
	if (!cookie_is(&d, want_cookie))
		return -1;
	uint32_t st = rd_u32(&d);
	return d.bad || d.p != d.end ? -1 : (int)st;
}

int rl_dec_testres(const struct raw_reply *r, uint32_t want_cookie, struct rl_holder *h)
{
	struct rd d = body_of(r);
	if (!cookie_is(&d, want_cookie))
		return -1;
	uint32_t st = rd_u32(&d);
	if (st == RL_DENIED) {
		struct rl_holder tmp;
		if (!h)
			h = &tmp;
		memset(h, 0, sizeof *h);
		h->excl = rd_u32(&d) != 0;
		h->svid = (int32_t)rd_u32(&d);
		const uint8_t *oh = rd_opaque(&d, &h->oh_len, RL_OH_MAX);
		if (oh)
			memcpy(h->oh, oh, h->oh_len);
		h->off = rd_u64(&d);
		h->len = rd_u64(&d);
	}
	return d.bad || d.p != d.end ? -1 : (int)st;
}

int rl_dec_sm_stat(const struct raw_reply *r, int32_t *state)
{
	struct rd d = body_of(r);
	uint32_t res = rd_u32(&d);
	int32_t s = (int32_t)rd_u32(&d);
	if (d.bad || d.p != d.end)
		return -1;
	if (state)
		*state = s;
	return (int)res;
}

const char *rl_stat_name(int st)
{
	static const char *const names[] = {"GRANTED", "DENIED", "DENIED_NOLOCKS", "BLOCKED",
	                                    "DENIED_GRACE_PERIOD", "DEADLCK", "ROFS", "STALE_FH",
	                                    "FBIG", "FAILED"};
	if (st == -1)
		return "(no reply / malformed)";
	return st >= 0 && (size_t)st < sizeof names / sizeof names[0] ? names[st] : "(unknown)";
}

/* ---- transport ---- */

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int rl_udp_connect(uint16_t port, const char *src)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_in from = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return -1;
	if ((src != NULL && (inet_pton(AF_INET, src, &from.sin_addr) != 1 ||
	                     bind(fd, (struct sockaddr *)&from, sizeof from) < 0)) ||
	    connect(fd, (struct sockaddr *)&to, sizeof to) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool is_udp(int fd)
{
	int type = 0;
	socklen_t len = sizeof type;
	return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_DGRAM;
}

static int udp_exchange(int fd, const struct xb *b, uint8_t *buf, size_t cap, struct raw_reply *r)
{
	long long deadline = now_ms() + 5000;
	while (now_ms() < deadline) {
		if (send(fd, b->buf, b->len, 0) < 0 && errno != ECONNREFUSED)
			return -1;
		long long resend = now_ms() + 1000;
		for (;;) {
			long long left = (resend < deadline ? resend : deadline) - now_ms();
			struct pollfd pf = {.fd = fd, .events = POLLIN};
			if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
				break;
			ssize_t n = recv(fd, buf, cap, 0);
			if (n < 0 && (errno == EINTR || errno == ECONNREFUSED))
				continue;
			if (n < 0)
				return -1;
			if (raw_parse_reply(buf, (size_t)n, r) == 0 && r->xid == get_u32(b->buf))
				return 0;
		}
	}
	return -1;
}

int rl_udp_call_to(int fd, const char *dst, uint16_t port, const struct xb *b, uint8_t *buf,
                   size_t cap, struct raw_reply *r, struct sockaddr_in *from)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port)};
	if (inet_pton(AF_INET, dst, &to.sin_addr) != 1 ||
	    sendto(fd, b->buf, b->len, 0, (struct sockaddr *)&to, sizeof to) != (ssize_t)b->len)
		return -1;
	long long deadline = now_ms() + 5000;
	for (;;) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		long long left = deadline - now_ms();
		if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
			return -1;
		socklen_t fl = sizeof *from;
		ssize_t n = recvfrom(fd, buf, cap, 0, (struct sockaddr *)from, &fl);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (raw_parse_reply(buf, (size_t)n, r) == 0 && r->xid == get_u32(b->buf))
			return 0;
	}
}

int rl_exchange(int fd, const struct xb *b, uint8_t *buf, size_t cap, struct raw_reply *r)
{
	return is_udp(fd) ? udp_exchange(fd, b, buf, cap, r) : raw_call(fd, b, buf, cap, r);
}

static uint32_t next_xid = 0x4e4c0000;
static uint8_t rbuf[65536];

/* Encode with enc (given the xid), exchange: 0 and *r, or -1. */
#define EXCHANGE(fd, r, xid, enc_call)                                                      \
	do {                                                                                \
		struct xb *b_ = calloc(1, sizeof *b_);                                      \
		int rc_ = -1;                                                               \
		if (b_) {                                                                   \
			struct xb *b = b_;                                                  \
			enc_call;                                                           \
			rc_ = rl_exchange(fd, b_, rbuf, sizeof rbuf, r);                    \
		}                                                                           \
		free(b_);                                                                   \
		if (rc_ < 0)                                                                \
			return -1;                                                          \
	} while (0)

int rl_null(int fd, uint32_t prog, uint32_t vers)
{
	struct raw_reply r;
	uint32_t xid = next_xid++;
	EXCHANGE(fd, &r, xid, rl_enc_null(b, xid, prog, vers));
	return r.reply_stat == 0 && r.accept_stat == 0 && r.body_len == 0 ? 0 : -1;
}

int rl_test(int fd, const struct rl_lock *l, bool excl, struct rl_holder *h)
{
	struct raw_reply r;
	uint32_t xid = next_xid++;
	EXCHANGE(fd, &r, xid, rl_enc_test(b, xid, l, excl));
	return rl_dec_testres(&r, xid, h);
}

int rl_lock(int fd, const struct rl_lock *l, bool excl, bool block, bool reclaim)
{
	struct raw_reply r;
	uint32_t xid = next_xid++;
	EXCHANGE(fd, &r, xid, rl_enc_lock(b, xid, l, excl, block, reclaim, 3));
	return rl_dec_res(&r, xid);
}

int rl_cancel(int fd, const struct rl_lock *l, bool excl, bool block)
{
	struct raw_reply r;
	uint32_t xid = next_xid++;
	EXCHANGE(fd, &r, xid, rl_enc_cancel(b, xid, l, excl, block));
	return rl_dec_res(&r, xid);
}

int rl_unlock(int fd, const struct rl_lock *l)
{
	struct raw_reply r;
	uint32_t xid = next_xid++;
	EXCHANGE(fd, &r, xid, rl_enc_unlock(b, xid, l));
	return rl_dec_res(&r, xid);
}

int rl_free_all(int fd, const char *name, int32_t state)
{
	struct raw_reply r;
	uint32_t xid = next_xid++;
	EXCHANGE(fd, &r, xid, rl_enc_free_all(b, xid, name, state));
	return r.reply_stat == 0 && r.accept_stat == 0 && r.body_len == 0 ? 0 : -1;
}

int rl_sm_notify(int fd, const char *mon_name, int32_t state)
{
	struct raw_reply r;
	uint32_t xid = next_xid++;
	EXCHANGE(fd, &r, xid, rl_enc_sm_notify(b, xid, mon_name, state));
	return r.reply_stat == 0 && r.accept_stat == 0 && r.body_len == 0 ? 0 : -1;
}

int rl_sm_stat(int fd, const char *mon_name, int32_t *state)
{
	struct raw_reply r;
	uint32_t xid = next_xid++;
	EXCHANGE(fd, &r, xid, rl_enc_sm_stat(b, xid, mon_name));
	return rl_dec_sm_stat(&r, state);
}

static int pmap_u32(int fd, uint32_t proc, uint32_t prog, uint32_t vers, uint32_t prot,
                    uint32_t port)
{
	struct raw_reply r;
	uint32_t xid = next_xid++;
	EXCHANGE(fd, &r, xid, rl_enc_pmap(b, xid, proc, prog, vers, prot, port));
	struct rd d = body_of(&r);
	uint32_t v = rd_u32(&d);
	return d.bad || d.p != d.end || v > 65535 ? -1 : (int)v;
}

int rl_pmap_getport(int fd, uint32_t prog, uint32_t vers, uint32_t prot)
{
	return pmap_u32(fd, RL_PMAP_GETPORT, prog, vers, prot, 0);
}

int rl_pmap_set(int fd, uint32_t prog, uint32_t vers, uint32_t prot, uint32_t port)
{
	return pmap_u32(fd, RL_PMAP_SET, prog, vers, prot, port);
}

int rl_pmap_unset(int fd, uint32_t prog, uint32_t vers)
{
	return pmap_u32(fd, RL_PMAP_UNSET, prog, vers, 0, 0);
}

int rl_pmap_dump(int fd, struct rl_pmap_entry *out, size_t cap)
{
	struct raw_reply r;
	uint32_t xid = next_xid++;
	EXCHANGE(fd, &r, xid, rl_enc_pmap(b, xid, RL_PMAP_DUMP, 0, 0, 0, 0));
	struct rd d = body_of(&r);
	int n = 0;
	while (rd_u32(&d) == 1 && !d.bad) {   /* pmaplist: value follows */
		struct rl_pmap_entry e;
		e.prog = rd_u32(&d);   /* one at a time: an initializer's order is unspecified */
		e.vers = rd_u32(&d);
		e.prot = rd_u32(&d);
		e.port = rd_u32(&d);
		if ((size_t)n < cap)
			out[n] = e;
		n++;
	}
	return d.bad || d.p != d.end ? -1 : n;
}

/* ---- the daemon ---- */

int rl_conn(const struct itest *t, const char *src)
{
	int fd = raw_connect(t->lock_port, src);
	if (fd < 0)
		fail_msg("cannot connect to the lock port %u from %s", t->lock_port, src);
	return fd;
}

void rl_shared_path(const struct itest *t, const char *rel, char *out, size_t outlen)
{
	int n = snprintf(out, outlen, "%s/%s/%s", t->dir, RL_SHARED, rel);
	assert_true(n > 0 && (size_t)n < outlen);
}

struct rn_fh rl_make_file(const struct itest *t, const char *rel)
{
	char path[PATH_MAX];
	struct rn_fh root, fh;
	int fd = raw_connect(t->mount_port, NULL);
	assert_true(fd >= 0);
	snprintf(path, sizeof path, "%s/%s", t->dir, RL_SHARED);
	assert_int_equal(rn_mnt(fd, path, &root), 0);
	close(fd);
	fd = raw_connect(t->port, NULL);
	assert_true(fd >= 0);
	int st = rn_create(fd, &root, rel, &fh);
	if (st == 17)              /* NFS3ERR_EXIST: made by an earlier test */
		st = rn_lookup(fd, &root, rel, &fh);
	close(fd);
	if (st != 0)
		fail_msg("CREATE %s in the shared export: NFS status %d", rel, st);
	return fh;
}

/* The harness's conf, with SHARED added (the harness's exports each admit one address). */
static int edit_conf(const struct itest *t)
{
	char dir[PATH_MAX];
	static char text[65536];
	snprintf(dir, sizeof dir, "%s/%s", t->dir, RL_SHARED);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -1;
	FILE *f = fopen(t->conf, "r");
	if (!f)
		return -1;
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = '\0';
	if (!(f = fopen(t->conf, "w")))
		return -1;
	fputs(text, f);
	fprintf(f, "\n[export %s]\nclients = 127.0.0.0/8(rw,no_root_squash,insecure)\n", dir);
	return fclose(f) == 0 ? 0 : -1;
}

int rl_main(const char *group, const struct CMUnitTest *tests, size_t ntests, int argc,
            char **argv)
{
	struct itest t;
	const char *exe = argc > 1 ? argv[1] : getenv("NFSD_UC_EXE");
	signal(SIGPIPE, SIG_IGN);
	if (exe == NULL) {
		fprintf(stderr, "usage: %s NFSD_UC_BINARY (or set NFSD_UC_EXE)\n", argv[0]);
		return 2;
	}
	if (it_setup(&t, exe) < 0 || edit_conf(&t) < 0 || it_start(&t) < 0) {
		fprintf(stderr, "harness: the daemon did not start\n");
		it_log_tail(&t, 40);
		it_cleanup(&t);
		return 1;
	}
	struct CMUnitTest *mine = calloc(ntests, sizeof *mine);
	if (!mine)
		return 1;
	for (size_t i = 0; i < ntests; i++) {
		mine[i] = tests[i];
		mine[i].initial_state = &t;
	}
	int failed = _cmocka_run_group_tests(group, mine, ntests, NULL, NULL);
	free(mine);
	int status = t.pid > 0 ? it_stop(&t) : -1;
	if (status != 0) {
		fprintf(stderr, "harness: daemon exit status after SIGTERM: %d (want 0)\n", status);
		failed++;
	}
	if (failed)
		it_log_tail(&t, 80);
	it_cleanup(&t);
	return failed ? 1 : 0;
}
