/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The call engine over TCP, against the fake server of rpccb_fakes.c: one record per call and a
 * reply read in parts, a server that closes (connected to again, then -ECONNRESET), no
 * listener, a reply over the cap, 50 calls at once, stop. One binary with test_rpccb.c, which
 * lists the tests. */
#include "rpccb_fakes.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- TCP */

static struct rpccb_target tcp_target(uint16_t port, uint16_t pmap_port, unsigned timeout_ms)
{
	struct rpccb_target t = target(port, pmap_port, timeout_ms);
	t.proto = IPPROTO_TCP;
	return t;
}

/* GETPORT (over UDP) for the TCP port, then the call as one record from the source address
 * asked for; the reply comes in two fragments and in pieces, and done gets its results exactly. */
void test_tcp_getport_then_call(void **state)
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
void test_tcp_closed_retried(void **state)
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
void test_tcp_refused(void **state)
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
void test_tcp_reply_too_long(void **state)
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
void test_tcp_many_concurrent(void **state)
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
void test_tcp_stop_cancels(void **state)
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
