/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The server->client call engine against a fake portmapper and a fake RPC server, each a thread
 * with a UDP socket on a loopback ephemeral port. The fakes decode what they get by hand (not
 * with the engine's xdr_callmsg), so a wrong header fails here: a call via GETPORT arrives with
 * its program, version, procedure, arguments and an AUTH_SYS root credential, from the source
 * address asked for, and done gets the result bytes exactly; dropped datagrams are retransmitted
 * with the same xid and done still runs once; no server ends in -ECONNREFUSED or -ETIMEDOUT,
 * port 0 from the portmapper and each RPC-level error in its documented errno; 200 calls from
 * four threads at once all complete; stop cancels what is pending, once each; a timer fires
 * once, not early.
 *
 * Over TCP, against a fake server with a listening socket and a thread per connection: GETPORT
 * asks for the TCP port, the call arrives as one record with its header and arguments, and a
 * reply written as two fragments in small pieces with pauses between (so the engine reads it in
 * parts) reaches done exactly; a server that reads the call and closes is connected to again
 * after the backoff, then -ECONNRESET; no listener is -ECONNREFUSED; a reply record over the
 * cap is -EBADMSG; 50 calls at once all complete; stop cancels a call waiting for its reply and
 * one waiting to reconnect, once each. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcb_prot.h>

#include "rpc/rpccb.h"

#define NLM_PROG 100021u
#define NLM_VERS 4u
#define NLM_GRANTED_MSG 10u

static uint64_t mono_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static struct sockaddr_storage addr4(const char *ip, uint16_t port)
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
static int udp_bound(uint16_t *port)
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

enum fake_kind { FAKE_ECHO, FAKE_PMAP, FAKE_SILENT };
enum fake_answer { ANS_ACCEPT, ANS_DENY_AUTH, ANS_DENY_RPCVERS };

/* One call as the fake decoded it. */
struct seen {
	uint32_t xid, prog, vers, proc, flavor, uid, gid, ngids, verf_flavor;
	bool cred_whole;                        /* the AUTH_SYS body was exactly its length */
	char machname[MAX_MACHINE_NAME + 1];
	uint8_t args[256];
	size_t args_len;
	struct sockaddr_in from;
};

struct fake {
	/* behaviour, set before fake_start */
	enum fake_kind kind;
	enum fake_answer answer;
	uint32_t accept_stat;
	unsigned drop_first;                    /* datagrams dropped before answering */
	uint16_t pmap_answer;                   /* FAKE_PMAP: the port it gives */
	/* running */
	int fd;
	uint16_t port;
	pthread_t thr;
	atomic_bool stop;
	/* what it saw, under mu */
	pthread_mutex_t mu;
	unsigned received, bad;
	uint32_t xids[16];
	struct seen last;
};

/* libtirpc's xdr_opaque reads a string's padding into one static scratch buffer: the two fakes
 * decode credentials one at a time, or ThreadSanitizer sees them race on it. */
static pthread_mutex_t xdr_scratch = PTHREAD_MUTEX_INITIALIZER;

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

static bool decode_call(const uint8_t *b, size_t n, struct seen *s)
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
static size_t encode_reply(const struct fake *f, const struct seen *s, uint8_t *buf, size_t cap)
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

static void fake_start(struct fake *f)
{
	f->fd = udp_bound(&f->port);
	atomic_init(&f->stop, false);
	pthread_mutex_init(&f->mu, NULL);
	assert_int_equal(pthread_create(&f->thr, NULL, fake_main, f), 0);
}

static void fake_stop(struct fake *f)
{
	atomic_store(&f->stop, true);
	pthread_join(f->thr, NULL);
	close(f->fd);
	pthread_mutex_destroy(&f->mu);
}

static unsigned fake_received(struct fake *f)
{
	pthread_mutex_lock(&f->mu);
	unsigned n = f->received;
	pthread_mutex_unlock(&f->mu);
	return n;
}

/* ---- the TCP fake */

enum tcp_kind { TF_ECHO, TF_CLOSE, TF_SILENT, TF_HUGE };

#define TCP_CONNS_MAX 128

struct tcpfake {
	enum tcp_kind kind;                     /* set before tcpfake_start */
	int lfd;
	uint16_t port;
	pthread_t thr;                          /* accepts; one thread per connection */
	atomic_bool stop;
	pthread_t conns[TCP_CONNS_MAX];         /* the accepting thread's, then tcpfake_stop's */
	unsigned nconns;
	/* what it saw, under mu */
	pthread_mutex_t mu;
	unsigned accepted, received, bad, active, max_active;
	unsigned frags;                         /* of the last call's record */
	uint32_t xids[16];
	struct seen last;
};

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
static int tcp_bound(uint16_t *port, bool listen_too)
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

static void tcpfake_start(struct tcpfake *f)
{
	f->lfd = tcp_bound(&f->port, true);
	atomic_init(&f->stop, false);
	pthread_mutex_init(&f->mu, NULL);
	assert_int_equal(pthread_create(&f->thr, NULL, tcpfake_main, f), 0);
}

static void tcpfake_stop(struct tcpfake *f)
{
	atomic_store(&f->stop, true);
	pthread_join(f->thr, NULL);
	for (unsigned i = 0; i < f->nconns; i++)
		pthread_join(f->conns[i], NULL);
	close(f->lfd);
	pthread_mutex_destroy(&f->mu);
}

static unsigned tcpfake_received(struct tcpfake *f)
{
	pthread_mutex_lock(&f->mu);
	unsigned n = f->received;
	pthread_mutex_unlock(&f->mu);
	return n;
}

/* ---- calls and what their done saw */

struct waiter {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned total;
};

struct job {
	struct waiter *w;
	uint8_t args[16];
	size_t args_len;
	int status;
	unsigned dones;
	bool res_ok;                            /* res was exactly "RES!" and args */
	size_t res_len;
	pthread_t thread;
	/* for the re-entrancy test: how many more calls done makes */
	struct rpccb *e;
	struct rpccb_target t;
	unsigned chain;
	int chain_err;                          /* what rpccb_call from done returned */
};

static void waiter_init(struct waiter *w)
{
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	w->total = 0;
}

static void waiter_fini(struct waiter *w)
{
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
}

static bool wait_total(struct waiter *w, unsigned n, unsigned ms)
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

static void job_done(void *ctx, int status, const uint8_t *res, size_t len);

static void job_chain(struct job *j)
{
	if (j->chain == 0)
		return;
	j->chain--;
	j->args[0]++;                           /* the next call's own arguments */
	j->chain_err = rpccb_call(j->e, &j->t, j->args, j->args_len, job_done, j);
}

static void job_done(void *ctx, int status, const uint8_t *res, size_t len)
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

static void job_init(struct job *j, struct waiter *w, uint32_t tag)
{
	memset(j, 0, sizeof *j);
	j->w = w;
	uint32_t a[3] = {htonl(tag), htonl(0xfeedf00d), htonl(tag ^ 0x5a5a5a5a)};
	memcpy(j->args, a, sizeof a);
	j->args_len = sizeof a;
	j->status = 1;                          /* not a status done can give */
}

/* What most tests begin with: an engine, a waiter and one call of the given tag. */
static struct rpccb *engine_and_job(struct waiter *w, struct job *j, uint32_t tag)
{
	struct rpccb *e = rpccb_start();
	assert_non_null(e);
	waiter_init(w);
	job_init(j, w, tag);
	return e;
}

static struct rpccb_target target(uint16_t port, uint16_t pmap_port, unsigned timeout_ms)
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
static int call_once(struct rpccb *e, const struct rpccb_target *t, struct job *j,
		     struct waiter *w)
{
	assert_int_equal(rpccb_call(e, t, j->args, j->args_len, job_done, j), 0);
	assert_true(wait_total(w, 1, 20000));
	return j->status;
}

/* ---- tests */

/* GETPORT first, then the call itself, from the source address asked for (127.0.0.2: any of
 * 127/8 is local), with a reserved port when root. */
static void test_getport_then_call(void **state)
{
	(void)state;
	struct fake srv = {.kind = FAKE_ECHO}, pm = {.kind = FAKE_PMAP};
	fake_start(&srv);
	pm.pmap_answer = srv.port;
	fake_start(&pm);
	struct waiter w;
	struct job j;
	struct rpccb *e = engine_and_job(&w, &j, 7);
	struct rpccb_target t = target(0, pm.port, 10000);
	t.src = addr4("127.0.0.2", 0);
	assert_int_equal(call_once(e, &t, &j, &w), 0);
	assert_true(j.res_ok);
	assert_int_equal(j.dones, 1);
	assert_false(pthread_equal(j.thread, pthread_self()));
	fake_stop(&pm);                         /* joined: what they saw can be read */
	fake_stop(&srv);

	/* The portmapper was asked for prog 100021 v4 over UDP, with an AUTH_SYS credential. */
	uint32_t want[4] = {htonl(NLM_PROG), htonl(NLM_VERS), htonl(IPPROTO_UDP), 0};
	assert_int_equal(pm.bad, 0);
	assert_int_equal(pm.last.args_len, 16);
	assert_memory_equal(pm.last.args, want, 16);
	assert_int_equal(pm.last.flavor, AUTH_SYS);

	char host[MAX_MACHINE_NAME + 1] = {0};
	assert_int_equal(gethostname(host, sizeof host - 1), 0);
	const struct seen *s = &srv.last;
	assert_int_equal(srv.bad, 0);
	assert_int_equal(srv.received, 1);
	assert_int_equal(s->prog, NLM_PROG);
	assert_int_equal(s->vers, NLM_VERS);
	assert_int_equal(s->proc, NLM_GRANTED_MSG);
	assert_int_equal(s->flavor, AUTH_SYS);
	assert_true(s->cred_whole);
	assert_int_equal(s->uid, 0);
	assert_int_equal(s->gid, 0);
	assert_int_equal(s->ngids, 0);
	assert_string_equal(s->machname, host);
	assert_int_equal(s->verf_flavor, AUTH_NONE);
	assert_int_equal(s->args_len, j.args_len);
	assert_memory_equal(s->args, j.args, j.args_len);
	assert_int_equal(ntohl(s->from.sin_addr.s_addr), 0x7f000002);
	if (geteuid() == 0) {
		assert_in_range(ntohs(s->from.sin_port), 600, 1023);
		assert_in_range(ntohs(pm.last.from.sin_port), 600, 1023);
	}
	assert_int_not_equal(s->xid, pm.last.xid);  /* each stage its own xid */

	struct rpccb_counters c;
	rpccb_counters(e, &c);
	assert_int_equal(c.started, 1);
	assert_int_equal(c.ok, 1);
	assert_int_equal(c.timeouts + c.errors + c.cancelled, 0);
	rpccb_stop(e);
	waiter_fini(&w);
}

/* The server drops the first two datagrams: the third (at about 1.5 s) is answered; all three
 * carry the same xid; done runs once. */
static void test_retransmit_same_xid(void **state)
{
	(void)state;
	struct fake srv = {.kind = FAKE_ECHO, .drop_first = 2};
	fake_start(&srv);
	struct waiter w;
	struct job j;
	struct rpccb *e = engine_and_job(&w, &j, 8);
	struct rpccb_target t = target(srv.port, 0, 20000);
	uint64_t t0 = mono_ms();
	assert_int_equal(call_once(e, &t, &j, &w), 0);
	assert_true(mono_ms() - t0 >= 1400);    /* retransmitted at 500 ms and 1.5 s, not sooner */
	assert_true(j.res_ok);
	usleep(700 * 1000);                     /* a late extra done would come by now */
	rpccb_stop(e);
	assert_int_equal(j.dones, 1);
	assert_int_equal(w.total, 1);
	fake_stop(&srv);
	assert_int_equal(srv.received, 3);
	assert_int_equal(srv.xids[0], srv.xids[1]);
	assert_int_equal(srv.xids[1], srv.xids[2]);
	waiter_fini(&w);
}

/* Nothing listens on the port: loopback answers with ICMP port unreachable, the engine keeps
 * retrying to the deadline and then says -ECONNREFUSED. */
static void test_no_server_refused(void **state)
{
	(void)state;
	uint16_t port;
	close(udp_bound(&port));                /* a port nobody has now */
	struct waiter w;
	struct job j;
	struct rpccb *e = engine_and_job(&w, &j, 9);
	struct rpccb_target t = target(port, 0, 1500);
	uint64_t t0 = mono_ms();
	/* -ETIMEDOUT would mean the ICMP errors were lost (loopback is not rate-limited per peer) */
	assert_int_equal(call_once(e, &t, &j, &w), -ECONNREFUSED);
	assert_true(mono_ms() - t0 >= 1450);    /* retried until the deadline */
	struct rpccb_counters c;
	rpccb_counters(e, &c);
	assert_int_equal(c.timeouts, 1);
	rpccb_stop(e);
	waiter_fini(&w);
}

/* A server that reads and never answers: retransmissions with one xid, then -ETIMEDOUT. */
static void test_black_hole_timeout(void **state)
{
	(void)state;
	struct fake srv = {.kind = FAKE_SILENT};
	fake_start(&srv);
	struct waiter w;
	struct job j;
	struct rpccb *e = engine_and_job(&w, &j, 10);
	struct rpccb_target t = target(srv.port, 0, 1500);
	uint64_t t0 = mono_ms();
	assert_int_equal(call_once(e, &t, &j, &w), -ETIMEDOUT);
	assert_true(mono_ms() - t0 >= 1450);
	struct rpccb_counters c;
	rpccb_counters(e, &c);
	assert_int_equal(c.timeouts, 1);
	assert_int_equal(c.ok + c.errors, 0);
	rpccb_stop(e);
	waiter_fini(&w);
	fake_stop(&srv);
	assert_in_range(srv.received, 2, 3);    /* at 0 and 500 ms; 1.5 s is the deadline */
	assert_int_equal(srv.bad, 0);
	assert_int_equal(srv.xids[0], srv.xids[1]);
}

/* The portmapper answers 0 (not registered): -ENOENT, and the server never hears of it. */
static void test_getport_zero(void **state)
{
	(void)state;
	struct fake srv = {.kind = FAKE_ECHO}, pm = {.kind = FAKE_PMAP, .pmap_answer = 0};
	fake_start(&srv);
	fake_start(&pm);
	struct waiter w;
	struct job j;
	struct rpccb *e = engine_and_job(&w, &j, 11);
	struct rpccb_target t = target(0, pm.port, 5000);
	assert_int_equal(call_once(e, &t, &j, &w), -ENOENT);
	assert_int_equal(j.res_len, 0);
	assert_int_equal(fake_received(&srv), 0);
	struct rpccb_counters c;
	rpccb_counters(e, &c);
	assert_int_equal(c.errors, 1);
	rpccb_stop(e);
	waiter_fini(&w);
	fake_stop(&pm);
	fake_stop(&srv);
}

/* Each RPC-level error its own errno. */
static void test_rpc_errors(void **state)
{
	(void)state;
	static const struct {
		enum fake_answer answer;
		uint32_t accept_stat;
		int status;
	} rows[] = {
		{ANS_ACCEPT, 1, -EPFNOSUPPORT},          /* PROG_UNAVAIL */
		{ANS_ACCEPT, 2, -EPROTONOSUPPORT},       /* PROG_MISMATCH */
		{ANS_ACCEPT, 3, -EOPNOTSUPP},            /* PROC_UNAVAIL */
		{ANS_ACCEPT, 4, -EIO},                   /* GARBAGE_ARGS */
		{ANS_ACCEPT, 5, -EREMOTEIO},             /* SYSTEM_ERR */
		{ANS_ACCEPT, 77, -EBADMSG},              /* no such accept_stat */
		{ANS_DENY_AUTH, 0, -EACCES},
		{ANS_DENY_RPCVERS, 0, -EPROTO},
	};
	struct rpccb *e = rpccb_start();
	assert_non_null(e);
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct fake srv = {.kind = FAKE_ECHO, .answer = rows[i].answer,
				   .accept_stat = rows[i].accept_stat};
		fake_start(&srv);
		struct waiter w;
		waiter_init(&w);
		struct job j;
		job_init(&j, &w, 12);
		struct rpccb_target t = target(srv.port, 0, 5000);
		assert_int_equal(call_once(e, &t, &j, &w), rows[i].status);
		assert_int_equal(fake_received(&srv), 1);  /* an error reply is final */
		waiter_fini(&w);
		fake_stop(&srv);
	}
	struct rpccb_counters c;
	rpccb_counters(e, &c);
	assert_int_equal(c.errors, sizeof rows / sizeof rows[0]);
	rpccb_stop(e);
}

#define MANY 200
#define POSTERS 4

struct poster {
	struct rpccb *e;
	struct rpccb_target t;
	struct job *jobs;
	int err;
};

static void *post_many(void *arg)
{
	struct poster *p = arg;
	for (int i = 0; i < MANY / POSTERS; i++) {
		struct job *j = &p->jobs[i];
		int err = rpccb_call(p->e, &p->t, j->args, j->args_len, job_done, j);
		if (err)
			p->err = err;
	}
	return NULL;
}

/* 200 calls via GETPORT, made from four threads at once: each gets its own answer, once. */
static void test_many_concurrent(void **state)
{
	(void)state;
	struct fake srv = {.kind = FAKE_ECHO}, pm = {.kind = FAKE_PMAP};
	fake_start(&srv);
	pm.pmap_answer = srv.port;
	fake_start(&pm);
	struct rpccb *e = rpccb_start();
	assert_non_null(e);
	struct waiter w;
	waiter_init(&w);
	struct job *jobs = calloc(MANY, sizeof *jobs);
	assert_non_null(jobs);
	for (int i = 0; i < MANY; i++)
		job_init(&jobs[i], &w, (uint32_t)i);
	struct poster p[POSTERS];
	pthread_t th[POSTERS];
	for (int i = 0; i < POSTERS; i++) {
		p[i] = (struct poster){.e = e, .t = target(0, pm.port, 20000),
				       .jobs = jobs + i * (MANY / POSTERS)};
		assert_int_equal(pthread_create(&th[i], NULL, post_many, &p[i]), 0);
	}
	for (int i = 0; i < POSTERS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(p[i].err, 0);
	}
	assert_true(wait_total(&w, MANY, 30000));
	for (int i = 0; i < MANY; i++) {
		assert_int_equal(jobs[i].status, 0);
		assert_int_equal(jobs[i].dones, 1);
		assert_true(jobs[i].res_ok);
	}
	struct rpccb_counters c;
	rpccb_counters(e, &c);
	assert_int_equal(c.started, MANY);
	assert_int_equal(c.ok, MANY);
	rpccb_stop(e);
	free(jobs);
	waiter_fini(&w);
	fake_stop(&pm);
	fake_stop(&srv);
}

static atomic_int timer_runs;

static void count_timer(void *ctx)
{
	(void)ctx;
	atomic_fetch_add(&timer_runs, 1);
}

/* Stop with calls in flight (and some perhaps still queued) and a timer pending: every call's
 * done runs once with -ECANCELED, a call made from such a done is refused, the timer never
 * runs. */
static void test_stop_cancels(void **state)
{
	(void)state;
	struct fake srv = {.kind = FAKE_SILENT};
	fake_start(&srv);
	struct rpccb *e = rpccb_start();
	assert_non_null(e);
	struct waiter w;
	waiter_init(&w);
	struct job jobs[10];
	struct rpccb_target t = target(srv.port, 0, 30000);
	atomic_store(&timer_runs, 0);
	assert_int_equal(rpccb_after(e, 100000, count_timer, NULL), 0);
	for (int i = 0; i < 10; i++) {
		job_init(&jobs[i], &w, (uint32_t)i);
		jobs[i].e = e;
		jobs[i].t = t;
		jobs[i].chain = 1;              /* its done tries one more call */
		jobs[i].chain_err = 1;
		assert_int_equal(rpccb_call(e, &t, jobs[i].args, jobs[i].args_len, job_done,
					    &jobs[i]), 0);
		if (i == 4)                     /* the first five are surely in flight */
			while (fake_received(&srv) < 5)
				usleep(1000);
	}
	rpccb_stop(e);
	assert_int_equal(w.total, 10);
	for (int i = 0; i < 10; i++) {
		assert_int_equal(jobs[i].status, -ECANCELED);
		assert_int_equal(jobs[i].dones, 1);
		assert_int_equal(jobs[i].chain_err, -ESHUTDOWN);
	}
	assert_int_equal(atomic_load(&timer_runs), 0);
	waiter_fini(&w);
	fake_stop(&srv);
}

struct tick {
	struct rpccb *e;
	struct waiter *w;
	uint64_t at_ms;
	unsigned runs, rearm;
};

static void tick_fire(void *ctx)
{
	struct tick *k = ctx;
	pthread_mutex_lock(&k->w->mu);
	k->runs++;
	k->at_ms = mono_ms();
	bool again = k->rearm > 0;
	if (again)
		k->rearm--;
	k->w->total++;
	pthread_cond_broadcast(&k->w->cv);
	pthread_mutex_unlock(&k->w->mu);
	if (again)                              /* periodic: fn queues itself again */
		assert_int_equal(rpccb_after(k->e, 50, tick_fire, k), 0);
}

/* A one-shot timer runs once, no sooner than asked; one that re-arms itself runs again. */
static void test_after(void **state)
{
	(void)state;
	struct rpccb *e = rpccb_start();
	assert_non_null(e);
	struct waiter w;
	waiter_init(&w);
	struct tick once = {.e = e, .w = &w};
	uint64_t t0 = mono_ms();
	assert_int_equal(rpccb_after(e, 300, tick_fire, &once), 0);
	assert_true(wait_total(&w, 1, 10000));
	assert_true(once.at_ms - t0 >= 299);
	usleep(400 * 1000);
	pthread_mutex_lock(&w.mu);
	assert_int_equal(once.runs, 1);
	pthread_mutex_unlock(&w.mu);

	struct tick periodic = {.e = e, .w = &w, .rearm = 2};
	t0 = mono_ms();
	assert_int_equal(rpccb_after(e, 50, tick_fire, &periodic), 0);
	assert_true(wait_total(&w, 4, 10000));
	assert_true(periodic.at_ms - t0 >= 149);
	rpccb_stop(e);
	assert_int_equal(periodic.runs, 3);
	waiter_fini(&w);
}

/* done makes the next call (five in a row), each answered. */
static void test_reentrant_done(void **state)
{
	(void)state;
	struct fake srv = {.kind = FAKE_ECHO};
	fake_start(&srv);
	struct waiter w;
	struct job j;
	struct rpccb *e = engine_and_job(&w, &j, 13);
	j.e = e;
	j.t = target(srv.port, 0, 5000);
	j.chain = 4;
	assert_int_equal(rpccb_call(e, &j.t, j.args, j.args_len, job_done, &j), 0);
	assert_true(wait_total(&w, 5, 20000));
	rpccb_stop(e);
	assert_int_equal(j.dones, 5);
	assert_int_equal(j.status, 0);
	assert_true(j.res_ok);
	assert_int_equal(j.chain_err, 0);
	assert_int_equal(fake_received(&srv), 5);
	waiter_fini(&w);
	fake_stop(&srv);
}

static void never_done(void *ctx, int status, const uint8_t *res, size_t len)
{
	(void)ctx, (void)status, (void)res, (void)len;
	fail_msg("done of a call that was refused");
}

/* Refused synchronously, and then done never runs. */
static void test_bad_calls(void **state)
{
	(void)state;
	struct rpccb *e = rpccb_start();
	assert_non_null(e);
	static uint8_t big[RPCCB_ARGS_MAX + 4];
	struct rpccb_target t = target(999, 0, 1000);
	assert_int_equal(rpccb_call(e, &t, big, 6, never_done, NULL), -EINVAL);
	assert_int_equal(rpccb_call(e, &t, big, sizeof big, never_done, NULL), -EMSGSIZE);
	assert_int_equal(rpccb_call(e, &t, NULL, 4, never_done, NULL), -EINVAL);
	assert_int_equal(rpccb_call(e, &t, big, 4, NULL, NULL), -EINVAL);
	t.host.ss_family = AF_UNIX;
	assert_int_equal(rpccb_call(e, &t, big, 4, never_done, NULL), -EAFNOSUPPORT);
	t = target(999, 0, 1000);
	t.src.ss_family = AF_INET6;
	assert_int_equal(rpccb_call(e, &t, big, 4, never_done, NULL), -EAFNOSUPPORT);
	t = target(999, 0, 1000);
	t.proto = IPPROTO_SCTP;
	assert_int_equal(rpccb_call(e, &t, big, 4, never_done, NULL), -EPROTONOSUPPORT);
	assert_int_equal(rpccb_after(e, 1, NULL, NULL), -EINVAL);
	usleep(50 * 1000);
	struct rpccb_counters c;
	rpccb_counters(e, &c);
	assert_int_equal(c.started, 0);
	rpccb_stop(e);
}

/* ---- TCP */

static struct rpccb_target tcp_target(uint16_t port, uint16_t pmap_port, unsigned timeout_ms)
{
	struct rpccb_target t = target(port, pmap_port, timeout_ms);
	t.proto = IPPROTO_TCP;
	return t;
}

/* GETPORT (over UDP) for the TCP port, then the call as one record from the source address
 * asked for; the reply comes in two fragments and in pieces, and done gets its results exactly. */
static void test_tcp_getport_then_call(void **state)
{
	(void)state;
	struct tcpfake srv = {.kind = TF_ECHO};
	struct fake pm = {.kind = FAKE_PMAP};
	tcpfake_start(&srv);
	pm.pmap_answer = srv.port;
	fake_start(&pm);
	struct waiter w;
	struct job j;
	struct rpccb *e = engine_and_job(&w, &j, 21);
	struct rpccb_target t = tcp_target(0, pm.port, 10000);
	t.src = addr4("127.0.0.2", 0);
	uint64_t t0 = mono_ms();
	assert_int_equal(call_once(e, &t, &j, &w), 0);
	assert_true(mono_ms() - t0 >= 35);      /* the reply's pieces came 10 ms apart */
	assert_true(j.res_ok);
	assert_int_equal(j.res_len, 4 + j.args_len);
	assert_int_equal(j.dones, 1);
	struct rpccb_counters c;
	rpccb_counters(e, &c);
	assert_int_equal(c.started, 1);
	assert_int_equal(c.ok, 1);
	assert_int_equal(c.timeouts + c.errors + c.cancelled, 0);
	rpccb_stop(e);                          /* closed its end: the connection thread ends */
	fake_stop(&pm);
	tcpfake_stop(&srv);

	uint32_t want[4] = {htonl(NLM_PROG), htonl(NLM_VERS), htonl(IPPROTO_TCP), 0};
	assert_int_equal(pm.bad, 0);
	assert_int_equal(pm.received, 1);
	assert_int_equal(pm.last.args_len, 16);
	assert_memory_equal(pm.last.args, want, 16);

	char host[MAX_MACHINE_NAME + 1] = {0};
	assert_int_equal(gethostname(host, sizeof host - 1), 0);
	const struct seen *s = &srv.last;
	assert_int_equal(srv.accepted, 1);
	assert_int_equal(srv.received, 1);
	assert_int_equal(srv.bad, 0);
	assert_int_equal(srv.frags, 1);         /* one record, one (last) fragment */
	assert_int_equal(s->prog, NLM_PROG);
	assert_int_equal(s->vers, NLM_VERS);
	assert_int_equal(s->proc, NLM_GRANTED_MSG);
	assert_int_equal(s->flavor, AUTH_SYS);
	assert_true(s->cred_whole);
	assert_int_equal(s->uid, 0);
	assert_int_equal(s->ngids, 0);
	assert_string_equal(s->machname, host);
	assert_int_equal(s->verf_flavor, AUTH_NONE);
	assert_int_equal(s->args_len, j.args_len);
	assert_memory_equal(s->args, j.args, j.args_len);
	assert_int_equal(ntohl(s->from.sin_addr.s_addr), 0x7f000002);
	if (geteuid() == 0)
		assert_in_range(ntohs(s->from.sin_port), 600, 1023);
	assert_int_not_equal(s->xid, pm.last.xid);
	waiter_fini(&w);
}

/* The server reads the call and closes: connected to again 500 ms and 1 s after each failure,
 * the same call (xid) each time, and at the deadline -ECONNRESET. */
static void test_tcp_closed_retried(void **state)
{
	(void)state;
	struct tcpfake srv = {.kind = TF_CLOSE};
	tcpfake_start(&srv);
	struct waiter w;
	struct job j;
	struct rpccb *e = engine_and_job(&w, &j, 22);
	struct rpccb_target t = tcp_target(srv.port, 0, 2000);
	uint64_t t0 = mono_ms();
	assert_int_equal(call_once(e, &t, &j, &w), -ECONNRESET);
	assert_true(mono_ms() - t0 >= 1950);    /* retried until the deadline */
	assert_int_equal(j.res_len, 0);
	struct rpccb_counters c;
	rpccb_counters(e, &c);
	assert_int_equal(c.timeouts, 1);
	assert_int_equal(c.ok + c.errors + c.cancelled, 0);
	rpccb_stop(e);
	waiter_fini(&w);
	tcpfake_stop(&srv);
	/* at about 0, 0.5 and 1.5 s; the next would be at 3.5 s, past the deadline */
	assert_int_equal(srv.accepted, 3);
	assert_int_equal(srv.received, 3);
	assert_int_equal(srv.bad, 0);
	assert_int_equal(srv.xids[0], srv.xids[1]);
	assert_int_equal(srv.xids[1], srv.xids[2]);
}

/* Nobody listens on the port (a socket holds it, unlistening): -ECONNREFUSED at the deadline. */
static void test_tcp_refused(void **state)
{
	(void)state;
	uint16_t port;
	int hold_fd = tcp_bound(&port, false);
	struct waiter w;
	struct job j;
	struct rpccb *e = engine_and_job(&w, &j, 23);
	struct rpccb_target t = tcp_target(port, 0, 1500);
	uint64_t t0 = mono_ms();
	assert_int_equal(call_once(e, &t, &j, &w), -ECONNREFUSED);
	assert_true(mono_ms() - t0 >= 1450);
	struct rpccb_counters c;
	rpccb_counters(e, &c);
	assert_int_equal(c.timeouts, 1);
	rpccb_stop(e);
	waiter_fini(&w);
	close(hold_fd);
}

/* A reply record of 80000 bytes (two fragments): -EBADMSG, without waiting for the rest. */
static void test_tcp_reply_too_long(void **state)
{
	(void)state;
	struct tcpfake srv = {.kind = TF_HUGE};
	tcpfake_start(&srv);
	struct waiter w;
	struct job j;
	struct rpccb *e = engine_and_job(&w, &j, 24);
	struct rpccb_target t = tcp_target(srv.port, 0, 10000);
	uint64_t t0 = mono_ms();
	assert_int_equal(call_once(e, &t, &j, &w), -EBADMSG);
	assert_true(mono_ms() - t0 < 5000);
	struct rpccb_counters c;
	rpccb_counters(e, &c);
	assert_int_equal(c.errors, 1);
	rpccb_stop(e);
	waiter_fini(&w);
	tcpfake_stop(&srv);
	assert_int_equal(srv.accepted, 1);      /* an error reply is final */
}

#define TCP_MANY 50

/* 50 calls via GETPORT at once, each on a connection of its own, answered in pieces
 * concurrently: each gets its own answer, once. */
static void test_tcp_many_concurrent(void **state)
{
	(void)state;
	struct tcpfake srv = {.kind = TF_ECHO};
	struct fake pm = {.kind = FAKE_PMAP};
	tcpfake_start(&srv);
	pm.pmap_answer = srv.port;
	fake_start(&pm);
	struct rpccb *e = rpccb_start();
	assert_non_null(e);
	struct waiter w;
	waiter_init(&w);
	struct job *jobs = calloc(TCP_MANY, sizeof *jobs);
	assert_non_null(jobs);
	struct rpccb_target t = tcp_target(0, pm.port, 20000);
	for (int i = 0; i < TCP_MANY; i++) {
		job_init(&jobs[i], &w, (uint32_t)(1000 + i));
		assert_int_equal(rpccb_call(e, &t, jobs[i].args, jobs[i].args_len, job_done,
					    &jobs[i]), 0);
	}
	assert_true(wait_total(&w, TCP_MANY, 30000));
	for (int i = 0; i < TCP_MANY; i++) {
		assert_int_equal(jobs[i].status, 0);
		assert_int_equal(jobs[i].dones, 1);
		assert_true(jobs[i].res_ok);
	}
	struct rpccb_counters c;
	rpccb_counters(e, &c);
	assert_int_equal(c.started, TCP_MANY);
	assert_int_equal(c.ok, TCP_MANY);
	rpccb_stop(e);
	free(jobs);
	waiter_fini(&w);
	fake_stop(&pm);
	tcpfake_stop(&srv);
	assert_int_equal(srv.accepted, TCP_MANY);
	assert_int_equal(srv.received, TCP_MANY);
	assert_int_equal(srv.bad, 0);
	assert_true(srv.max_active > 1);        /* the connections overlapped */
}

/* Stop with one TCP call waiting for its reply and one waiting to connect again: each done runs
 * once with -ECANCELED, and a call made from it is refused. */
static void test_tcp_stop_cancels(void **state)
{
	(void)state;
	struct tcpfake srv = {.kind = TF_SILENT};
	tcpfake_start(&srv);
	uint16_t dead;
	int hold_fd = tcp_bound(&dead, false);
	struct rpccb *e = rpccb_start();
	assert_non_null(e);
	struct waiter w;
	waiter_init(&w);
	struct job jobs[2];
	uint16_t ports[2] = {srv.port, dead};
	for (int i = 0; i < 2; i++) {
		job_init(&jobs[i], &w, (uint32_t)(30 + i));
		jobs[i].e = e;
		jobs[i].t = tcp_target(ports[i], 0, 30000);
		jobs[i].chain = 1;
		jobs[i].chain_err = 1;
		assert_int_equal(rpccb_call(e, &jobs[i].t, jobs[i].args, jobs[i].args_len,
					    job_done, &jobs[i]), 0);
	}
	while (tcpfake_received(&srv) < 1)
		usleep(1000);
	usleep(100 * 1000);                     /* the other surely refused once by now */
	pthread_mutex_lock(&w.mu);
	assert_int_equal(w.total, 0);
	pthread_mutex_unlock(&w.mu);
	rpccb_stop(e);
	assert_int_equal(w.total, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(jobs[i].status, -ECANCELED);
		assert_int_equal(jobs[i].dones, 1);
		assert_int_equal(jobs[i].chain_err, -ESHUTDOWN);
	}
	waiter_fini(&w);
	tcpfake_stop(&srv);
	assert_int_equal(srv.accepted, 1);
	close(hold_fd);
}

/* ---- IPv6: RPCBIND v4 GETADDR instead of PMAP v2's GETPORT */

/* One IPv6 socket on ::1 plays both the portmapper (GETADDR -> "::1.p1.p2" of itself) and the
 * server (the call -> "RES!" and its arguments). */
struct fake6 {
	int fd;
	uint16_t port;
	pthread_t thr;
	atomic_bool stop;
	atomic_uint getaddrs, calls;
	char netid[8];                          /* what GETADDR asked for */
};

static void *fake6_main(void *arg)
{
	struct fake6 *f = arg;
	static _Thread_local uint8_t buf[4096], out[4096];
	while (!atomic_load(&f->stop)) {
		struct pollfd p = {.fd = f->fd, .events = POLLIN};
		if (poll(&p, 1, 20) <= 0)
			continue;
		struct sockaddr_in6 from;
		socklen_t fl = sizeof from;
		ssize_t n = recvfrom(f->fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
		struct seen sn;
		if (n <= 0 || !decode_call(buf, (size_t)n, &sn))
			continue;
		struct fake hdr = {.kind = FAKE_ECHO};
		size_t len;
		if (sn.prog == 100000 && sn.vers == 4 && sn.proc == 3) {   /* RPCBPROC_GETADDR */
			char netid[8] = "", *np = netid, r_addr[64], *ap = r_addr, own[64], *op = own;
			XDR x;
			xdrmem_create(&x, (char *)sn.args, (u_int)sn.args_len, XDR_DECODE);
			pthread_mutex_lock(&xdr_scratch);
			u_int prog, vers;
			bool ok = xdr_u_int(&x, &prog) && xdr_u_int(&x, &vers) &&
				  xdr_string(&x, &np, sizeof netid - 1) &&
				  xdr_string(&x, &ap, sizeof r_addr - 1) &&
				  xdr_string(&x, &op, sizeof own - 1);
			pthread_mutex_unlock(&xdr_scratch);
			xdr_destroy(&x);
			if (!ok)
				continue;
			memcpy(f->netid, netid, sizeof f->netid);
			atomic_fetch_add(&f->getaddrs, 1);
			/* the reply header only (ECHO's results cut off); the string follows */
			len = encode_reply(&hdr, &sn, out, sizeof out) - 4 - sn.args_len;
			char uaddr[64];
			snprintf(uaddr, sizeof uaddr, "::1.%u.%u", f->port >> 8, f->port & 0xff);
			char *up = uaddr;
			xdrmem_create(&x, (char *)out + len, (u_int)(sizeof out - len), XDR_ENCODE);
			pthread_mutex_lock(&xdr_scratch);
			assert_true(xdr_string(&x, &up, sizeof uaddr));
			pthread_mutex_unlock(&xdr_scratch);
			len += xdr_getpos(&x);
			xdr_destroy(&x);
		} else {
			atomic_fetch_add(&f->calls, 1);
			len = encode_reply(&hdr, &sn, out, sizeof out);
		}
		sendto(f->fd, out, len, 0, (struct sockaddr *)&from, fl);
	}
	return NULL;
}

static void test_ipv6_getaddr(void **state)
{
	(void)state;
	struct fake6 f = {0};
	f.fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	if (f.fd < 0 || bind(f.fd, (struct sockaddr *)&a, sizeof a) < 0) {
		if (f.fd >= 0)
			close(f.fd);
		skip();                          /* no IPv6 loopback here */
	}
	socklen_t al = sizeof a;
	assert_int_equal(getsockname(f.fd, (struct sockaddr *)&a, &al), 0);
	f.port = ntohs(a.sin6_port);
	atomic_init(&f.stop, false);
	assert_int_equal(pthread_create(&f.thr, NULL, fake6_main, &f), 0);

	struct waiter w;
	struct job j;
	struct rpccb *e = engine_and_job(&w, &j, 6);
	struct rpccb_target t = target(0, f.port, 10000);
	memset(&t.host, 0, sizeof t.host);
	struct sockaddr_in6 *h = (struct sockaddr_in6 *)&t.host;
	h->sin6_family = AF_INET6;
	h->sin6_addr = in6addr_loopback;
	assert_int_equal(call_once(e, &t, &j, &w), 0);
	assert_true(j.res_ok);
	rpccb_stop(e);
	waiter_fini(&w);
	atomic_store(&f.stop, true);
	pthread_join(f.thr, NULL);
	close(f.fd);
	assert_int_equal(atomic_load(&f.getaddrs), 1);
	assert_int_equal(atomic_load(&f.calls), 1);
	assert_string_equal(f.netid, "udp6");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_getport_then_call),
		cmocka_unit_test(test_ipv6_getaddr),
		cmocka_unit_test(test_retransmit_same_xid),
		cmocka_unit_test(test_no_server_refused),
		cmocka_unit_test(test_black_hole_timeout),
		cmocka_unit_test(test_getport_zero),
		cmocka_unit_test(test_rpc_errors),
		cmocka_unit_test(test_many_concurrent),
		cmocka_unit_test(test_stop_cancels),
		cmocka_unit_test(test_after),
		cmocka_unit_test(test_reentrant_done),
		cmocka_unit_test(test_bad_calls),
		cmocka_unit_test(test_tcp_getport_then_call),
		cmocka_unit_test(test_tcp_closed_retried),
		cmocka_unit_test(test_tcp_refused),
		cmocka_unit_test(test_tcp_reply_too_long),
		cmocka_unit_test(test_tcp_many_concurrent),
		cmocka_unit_test(test_tcp_stop_cancels),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
