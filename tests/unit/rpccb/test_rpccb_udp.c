/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The call engine over UDP, against the fakes of rpccb_fakes.c: GETPORT then the call,
 * retransmission with the same xid, no server, a black hole, port 0, each RPC-level error,
 * 200 calls from four threads, stop, the timer, a done that calls again, bad calls; and IPv6
 * (RPCBIND v4 GETADDR). One binary with test_rpccb.c, which lists the tests. */
#include "rpccb_fakes.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rpc/rpcb_prot.h>

/* GETPORT first, then the call itself, from the source address asked for (127.0.0.2: any of
 * 127/8 is local), with a reserved port when root. */
void test_getport_then_call(void **state)
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
void test_retransmit_same_xid(void **state)
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
void test_no_server_refused(void **state)
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
void test_black_hole_timeout(void **state)
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
void test_getport_zero(void **state)
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
void test_rpc_errors(void **state)
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
void test_many_concurrent(void **state)
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
void test_stop_cancels(void **state)
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
void test_after(void **state)
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
void test_reentrant_done(void **state)
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
void test_bad_calls(void **state)
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

void test_ipv6_getaddr(void **state)
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
