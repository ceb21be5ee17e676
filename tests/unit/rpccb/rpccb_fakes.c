/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the call engine's tests run against and count with: a fake portmapper and RPC server on
 * UDP, a fake server on TCP (a listening socket, a thread per connection), both decoding by hand
 * rather than with the engine's codecs; and the calls' bookkeeping (a job per call, a waiter
 * for their dones). Kept apart from the tests (test_rpccb*.c) so that each of those reads as
 * its cases only. */
#include "rpccb_fakes.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpcb_prot.h>


uint64_t mono_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

struct sockaddr_storage addr4(const char *ip, uint16_t port)
{
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof ss);
	struct sockaddr_in *a = (struct sockaddr_in *)&ss;
	a->sin_family = AF_INET;
	a->sin_port = htons(port);
	assert_int_equal(inet_pton(AF_INET, ip, &a->sin_addr), 1);
	return ss;
}

/* A UDP socket on 127.0.0.1 and an ephemeral port. */
int udp_bound(uint16_t *port)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	struct sockaddr_storage a = addr4("127.0.0.1", 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(struct sockaddr_in)), 0);
	socklen_t len = sizeof a;
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(((struct sockaddr_in *)&a)->sin_port);
	return fd;
}

/* ---- the fakes */


/* libtirpc's xdr_opaque reads a string's padding into one static scratch buffer: the two fakes
 * decode credentials one at a time, or ThreadSanitizer sees them race on it. */
pthread_mutex_t xdr_scratch = PTHREAD_MUTEX_INITIALIZER;

/* The call header by hand: xid, CALL, rpcvers 2, prog, vers, proc, cred, verf, then args. */
static bool decode_cred(const uint8_t *b, u_int len, struct seen *s)
{
	gid_t gids[16];
	struct authunix_parms aup = {.aup_machname = s->machname, .aup_gids = gids};
	XDR c;
	xdrmem_create(&c, (char *)(uintptr_t)b, len, XDR_DECODE);
	pthread_mutex_lock(&xdr_scratch);
	bool ok = xdr_authunix_parms(&c, &aup);
	pthread_mutex_unlock(&xdr_scratch);
	s->cred_whole = ok && xdr_getpos(&c) == len;
	xdr_destroy(&c);
	s->uid = aup.aup_uid;
	s->gid = aup.aup_gid;
	s->ngids = aup.aup_len;
	return ok;
}

bool decode_call(const uint8_t *b, size_t n, struct seen *s)
{
	u_int dir = 9, rpcvers = 0, credlen = 0, verflen = 0;
	XDR x;
	memset(s, 0, sizeof *s);
	xdrmem_create(&x, (char *)(uintptr_t)b, (u_int)n, XDR_DECODE);
	bool ok = xdr_u_int(&x, &s->xid) && xdr_u_int(&x, &dir) && dir == 0 &&
		  xdr_u_int(&x, &rpcvers) && rpcvers == 2 && xdr_u_int(&x, &s->prog) &&
		  xdr_u_int(&x, &s->vers) && xdr_u_int(&x, &s->proc) &&
		  xdr_u_int(&x, &s->flavor) && xdr_u_int(&x, &credlen) && credlen <= 400 &&
		  credlen % 4 == 0 && xdr_getpos(&x) + credlen <= n;
	if (ok && s->flavor == AUTH_SYS)
		ok = decode_cred(b + xdr_getpos(&x), credlen, s);
	ok = ok && xdr_setpos(&x, xdr_getpos(&x) + credlen) && xdr_u_int(&x, &s->verf_flavor) &&
	     xdr_u_int(&x, &verflen) && verflen == 0;
	size_t pos = ok ? xdr_getpos(&x) : n;
	xdr_destroy(&x);
	if (!ok || n - pos > sizeof s->args)
		return false;
	s->args_len = n - pos;
	memcpy(s->args, b + pos, s->args_len);
	return true;
}

/* The reply header by hand too. ECHO's results are "RES!" and the arguments. */
size_t encode_reply(const struct fake *f, const struct seen *s, uint8_t *buf, size_t cap)
{
	u_int w[8], nw = 0;
	w[nw++] = s->xid;
	w[nw++] = 1;                                           /* REPLY */
	if (f->answer != ANS_ACCEPT) {
		w[nw++] = 1;                                   /* MSG_DENIED */
		if (f->answer == ANS_DENY_AUTH) {
			w[nw++] = 1;                           /* AUTH_ERROR */
			w[nw++] = 1;                           /* AUTH_BADCRED */
		} else {
			w[nw++] = 0;                           /* RPC_MISMATCH */
			w[nw++] = 2;
			w[nw++] = 2;
		}
	} else {
		w[nw++] = 0;                                   /* MSG_ACCEPTED */
		w[nw++] = 0;                                   /* verf AUTH_NONE, */
		w[nw++] = 0;                                   /* empty */
		w[nw++] = f->accept_stat;
		if (f->accept_stat == 2) {                     /* PROG_MISMATCH: low, high */
			w[nw++] = 1;
			w[nw++] = 3;
		}
	}
	XDR x;
	xdrmem_create(&x, (char *)buf, (u_int)cap, XDR_ENCODE);
	for (u_int i = 0; i < nw; i++)
		assert_true(xdr_u_int(&x, &w[i]));
	size_t len = xdr_getpos(&x);
	xdr_destroy(&x);
	if (f->answer != ANS_ACCEPT || f->accept_stat != 0)
		return len;
	if (f->kind == FAKE_PMAP) {
		uint32_t port = htonl(f->pmap_answer);
		memcpy(buf + len, &port, 4);
		return len + 4;
	}
	memcpy(buf + len, "RES!", 4);
	memcpy(buf + len + 4, s->args, s->args_len);
	return len + 4 + s->args_len;
}

/* Record one datagram; true when it is to be answered. */
static bool fake_note(struct fake *f, const uint8_t *b, size_t n, struct seen *s,
		      const struct sockaddr_in *from)
{
	bool ok = decode_call(b, n, s);
	s->from = *from;
	pthread_mutex_lock(&f->mu);
	if (!ok)
		f->bad++;
	else if (f->kind == FAKE_PMAP && (s->prog != 100000 || s->vers != 2 || s->proc != 3))
		f->bad++;
	if (f->received < 16)
		f->xids[f->received] = s->xid;
	unsigned nth = f->received++;
	if (ok)
		f->last = *s;
	pthread_mutex_unlock(&f->mu);
	return ok && f->kind != FAKE_SILENT && nth >= f->drop_first;
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;
	static _Thread_local uint8_t buf[65536], out[65536 + 64];
	while (!atomic_load(&f->stop)) {
		struct pollfd p = {.fd = f->fd, .events = POLLIN};
		if (poll(&p, 1, 20) <= 0)
			continue;
		struct sockaddr_in from;
		socklen_t fl = sizeof from;
		ssize_t n = recvfrom(f->fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
		struct seen s;
		if (n <= 0 || !fake_note(f, buf, (size_t)n, &s, &from))
			continue;
		size_t len = encode_reply(f, &s, out, sizeof out);
		sendto(f->fd, out, len, 0, (struct sockaddr *)&from, fl);
	}
	return NULL;
}

void fake_start(struct fake *f)
{
	f->fd = udp_bound(&f->port);
	atomic_init(&f->stop, false);
	pthread_mutex_init(&f->mu, NULL);
	assert_int_equal(pthread_create(&f->thr, NULL, fake_main, f), 0);
}

void fake_stop(struct fake *f)
{
	atomic_store(&f->stop, true);
	pthread_join(f->thr, NULL);
	close(f->fd);
	pthread_mutex_destroy(&f->mu);
}

unsigned fake_received(struct fake *f)
{
	pthread_mutex_lock(&f->mu);
	unsigned n = f->received;
	pthread_mutex_unlock(&f->mu);
	return n;
}

/* ---- the TCP fake */

struct tcpconn {
	struct tcpfake *f;
	int fd;
};

/* n bytes, in short polls so stop is seen; false at EOF, on an error, at stop or after 10 s. */
static bool read_full(struct tcpfake *f, int fd, uint8_t *b, size_t n)
{
	uint64_t end = mono_ms() + 10000;
	size_t got = 0;
	while (got < n) {
		if (atomic_load(&f->stop) || mono_ms() > end)
			return false;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 20) <= 0)
			continue;
		ssize_t r = recv(fd, b + got, n - got, 0);
		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

/* One record, its fragments gathered: its length, or -1. */
static ssize_t read_record(struct tcpfake *f, int fd, uint8_t *b, size_t cap, unsigned *frags)
{
	size_t len = 0;
	*frags = 0;
	for (;;) {
		uint32_t m;
		if (!read_full(f, fd, (uint8_t *)&m, 4))
			return -1;
		m = ntohl(m);
		size_t fl = m & 0x7fffffffu;
		if (fl > cap - len || !read_full(f, fd, b + len, fl))
			return -1;
		len += fl;
		++*frags;
		if (m & 0x80000000u)
			return (ssize_t)len;
	}
}

static void write_all(int fd, const void *b, size_t n)
{
	const uint8_t *p = b;
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

static void pause_ms(unsigned ms)
{
	usleep(ms * 1000u);
}

/* The reply as two fragments (the first ends inside the reply header), written in pieces with
 * pauses between: marks split, bodies split. */
static void reply_in_pieces(int fd, const uint8_t *body, size_t len)
{
	size_t k = 10;
	assert_true(len > k + 5);
	uint32_t m1 = htonl((uint32_t)k), m2 = htonl(0x80000000u | (uint32_t)(len - k));
	const uint8_t *a = (const uint8_t *)&m1, *b = (const uint8_t *)&m2;
	write_all(fd, a, 2);
	pause_ms(10);
	write_all(fd, a + 2, 2);
	write_all(fd, body, 3);
	pause_ms(10);
	write_all(fd, body + 3, k - 3);
	write_all(fd, b, 1);
	pause_ms(10);
	write_all(fd, b + 1, 3);
	write_all(fd, body + k, 5);
	pause_ms(10);
	write_all(fd, body + k + 5, len - k - 5);
}

/* A record of two 40000-byte fragments: longer than the engine takes. */
static void reply_huge(int fd)
{
	static const uint8_t zeros[40000];
	uint32_t m1 = htonl(40000u), m2 = htonl(0x80000000u | 40000u);
	write_all(fd, &m1, 4);
	write_all(fd, zeros, sizeof zeros);
	write_all(fd, &m2, 4);
	write_all(fd, zeros, sizeof zeros);
}

/* Until the peer closes, or stop. */
static void hold(struct tcpfake *f, int fd)
{
	uint8_t b[64];
	while (!atomic_load(&f->stop)) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 20) > 0 && recv(fd, b, sizeof b, 0) <= 0)
			return;
	}
}

static void *tcpconn_main(void *arg)
{
	struct tcpconn *k = arg;
	struct tcpfake *f = k->f;
	int fd = k->fd;
	free(k);
	uint8_t buf[4096], out[4096];
	pthread_mutex_lock(&f->mu);
	if (++f->active > f->max_active)
		f->max_active = f->active;
	pthread_mutex_unlock(&f->mu);
	unsigned frags = 0;
	ssize_t n = read_record(f, fd, buf, sizeof buf, &frags);
	struct seen s;
	bool ok = n >= 0 && decode_call(buf, (size_t)n, &s);
	if (ok) {
		socklen_t fl = sizeof s.from;
		getpeername(fd, (struct sockaddr *)&s.from, &fl);
	}
	pthread_mutex_lock(&f->mu);
	if (n >= 0) {
		if (!ok)
			f->bad++;
		if (f->received < 16)
			f->xids[f->received] = ok ? s.xid : 0;
		f->received++;
	}
	if (ok) {
		f->last = s;
		f->frags = frags;
	}
	pthread_mutex_unlock(&f->mu);
	if (ok) {
		switch (f->kind) {
		case TF_ECHO: {
			struct fake echo = {.kind = FAKE_ECHO};
			reply_in_pieces(fd, out, encode_reply(&echo, &s, out, sizeof out));
			hold(f, fd);            /* the engine closes once it has the reply */
			break;
		}
		case TF_HUGE:
			reply_huge(fd);
			break;
		case TF_SILENT:
			hold(f, fd);
			break;
		case TF_CLOSE:
			break;
		}
	}
	close(fd);
	pthread_mutex_lock(&f->mu);
	f->active--;
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

static void *tcpfake_main(void *arg)
{
	struct tcpfake *f = arg;
	while (!atomic_load(&f->stop)) {
		struct pollfd p = {.fd = f->lfd, .events = POLLIN};
		if (poll(&p, 1, 20) <= 0)
			continue;
		int fd = accept4(f->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		int one = 1;                    /* each piece its own segment */
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		struct timeval tv = {.tv_sec = 5};
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
		pthread_mutex_lock(&f->mu);
		f->accepted++;
		pthread_mutex_unlock(&f->mu);
		struct tcpconn *k = malloc(sizeof *k);
		if (!k || f->nconns == TCP_CONNS_MAX) {
			free(k);
			close(fd);
			continue;
		}
		k->f = f;
		k->fd = fd;
		if (pthread_create(&f->conns[f->nconns], NULL, tcpconn_main, k) != 0) {
			free(k);
			close(fd);
			continue;
		}
		f->nconns++;
	}
	return NULL;
}

/* A TCP socket on 127.0.0.1 and an ephemeral port; listening when listen_too. */
int tcp_bound(uint16_t *port, bool listen_too)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	struct sockaddr_storage a = addr4("127.0.0.1", 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(struct sockaddr_in)), 0);
	if (listen_too)
		assert_int_equal(listen(fd, 128), 0);
	socklen_t len = sizeof a;
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(((struct sockaddr_in *)&a)->sin_port);
	return fd;
}

void tcpfake_start(struct tcpfake *f)
{
	f->lfd = tcp_bound(&f->port, true);
	atomic_init(&f->stop, false);
	pthread_mutex_init(&f->mu, NULL);
	assert_int_equal(pthread_create(&f->thr, NULL, tcpfake_main, f), 0);
}

void tcpfake_stop(struct tcpfake *f)
{
	atomic_store(&f->stop, true);
	pthread_join(f->thr, NULL);
	for (unsigned i = 0; i < f->nconns; i++)
		pthread_join(f->conns[i], NULL);
	close(f->lfd);
	pthread_mutex_destroy(&f->mu);
}

unsigned tcpfake_received(struct tcpfake *f)
{
	pthread_mutex_lock(&f->mu);
	unsigned n = f->received;
	pthread_mutex_unlock(&f->mu);
	return n;
}

/* ---- calls and what their done saw */

void waiter_init(struct waiter *w)
{
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	w->total = 0;
}

void waiter_fini(struct waiter *w)
{
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
}

bool wait_total(struct waiter *w, unsigned n, unsigned ms)
{
	uint64_t end = mono_ms() + ms;
	pthread_mutex_lock(&w->mu);
	while (w->total < n && mono_ms() < end) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 20 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&w->cv, &w->mu, &ts);
	}
	bool ok = w->total >= n;
	pthread_mutex_unlock(&w->mu);
	return ok;
}

static void job_chain(struct job *j)
{
	if (j->chain == 0)
		return;
	j->chain--;
	j->args[0]++;                           /* the next call's own arguments */
	j->chain_err = rpccb_call(j->e, &j->t, j->args, j->args_len, job_done, j);
}

void job_done(void *ctx, int status, const uint8_t *res, size_t len)
{
	struct job *j = ctx;
	struct waiter *w = j->w;
	pthread_mutex_lock(&w->mu);
	j->status = status;
	j->dones++;
	j->res_len = len;
	j->res_ok = len == 4 + j->args_len && memcmp(res, "RES!", 4) == 0 &&
		    memcmp(res + 4, j->args, j->args_len) == 0;
	j->thread = pthread_self();
	pthread_mutex_unlock(&w->mu);
	job_chain(j);
	pthread_mutex_lock(&w->mu);
	w->total++;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

void job_init(struct job *j, struct waiter *w, uint32_t tag)
{
	memset(j, 0, sizeof *j);
	j->w = w;
	uint32_t a[3] = {htonl(tag), htonl(0xfeedf00d), htonl(tag ^ 0x5a5a5a5a)};
	memcpy(j->args, a, sizeof a);
	j->args_len = sizeof a;
	j->status = 1;                          /* not a status done can give */
}

/* What most tests begin with: an engine, a waiter and one call of the given tag. */
struct rpccb *engine_and_job(struct waiter *w, struct job *j, uint32_t tag)
{
	struct rpccb *e = rpccb_start();
	assert_non_null(e);
	waiter_init(w);
	job_init(j, w, tag);
	return e;
}

struct rpccb_target target(uint16_t port, uint16_t pmap_port, unsigned timeout_ms)
{
	struct rpccb_target t;
	memset(&t, 0, sizeof t);
	t.host = addr4("127.0.0.1", 4242);      /* the port is to be ignored */
	t.src.ss_family = AF_UNSPEC;
	t.prog = NLM_PROG;
	t.vers = NLM_VERS;
	t.proc = NLM_GRANTED_MSG;
	t.port = port;
	t.pmap_port = pmap_port;
	t.timeout_ms = timeout_ms;
	return t;
}

/* One call, waited for: done's status. */
int call_once(struct rpccb *e, const struct rpccb_target *t, struct job *j,
		     struct waiter *w)
{
	assert_int_equal(rpccb_call(e, t, j->args, j->args_len, job_done, j), 0);
	assert_true(wait_total(w, 1, 20000));
	return j->status;
}
