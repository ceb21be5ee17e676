/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the lock manager sends clients, through the callback engine (rpccb.h): GRANTED for a
 * blocked LOCK that got its range, the _RES answers of _MSG calls, SM_NOTIFY after a restart;
 * and its timers (waiters blocked by local locks, idle hosts). Replies are handled on the
 * engine's thread, which takes the manager's mutex like any ring. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/sockaddr.h"
#include "lock/nlm_int.h"
#include "lock/nsm.h"
#include "rpc/rpccb.h"
#include "xdr/nsm_prot.h"

#define NLM_CB_TIMEOUT_MS 30000u
#define NSM_NOTIFY_TIMEOUT_MS 60000u
#define SWEEP_EVERY_TICKS (60000u / NLM_LOCAL_POLL_MS)

static int encode(xdrproc_t fn, void *obj, uint8_t *buf, size_t cap, size_t *len)
{
	XDR x;
	xdrmem_create(&x, (char *)buf, (u_int)cap, XDR_ENCODE);
	bool ok = fn(&x, obj);
	*len = xdr_getpos(&x);
	xdr_destroy(&x);
	return ok ? 0 : -EMSGSIZE;
}

static struct rpccb_target target(const struct sockaddr_storage *host,
				  const struct sockaddr_storage *src, int proto, uint32_t prog,
				  uint32_t vers, uint32_t proc, unsigned timeout_ms)
{
	return (struct rpccb_target){.host = *host, .src = *src, .proto = proto, .prog = prog,
				     .vers = vers, .proc = proc, .timeout_ms = timeout_ms};
}

/* ---- GRANTED ---- */

struct granted_ctx {
	struct nlm *m;
	uint64_t cookie;
};

static void on_granted(void *ctx, int status, const uint8_t *res, size_t len)
{
	struct granted_ctx *g = ctx;
	nlm4_res r = {0};
	if (status == 0) {
		XDR x;
		xdrmem_create(&x, (char *)res, (u_int)len, XDR_DECODE);
		if (!xdr_nlm4_res(&x, &r))
			status = -EBADMSG;
		xdr_destroy(&x);
	}
	nlm_granted_done(g->m, g->cookie, NULL, status, r.stat.stat);
	xdr_free((xdrproc_t)xdr_nlm4_res, (char *)&r);
	free(g);
}

static char *server_name(char *buf, size_t len)
{
	if (gethostname(buf, len) < 0)
		snprintf(buf, len, "nfsd-uc");
	buf[len - 1] = '\0';
	return buf;
}

/* GRANTED's arguments as the client's version has them: 64-bit ranges from version 4 on. */
static int granted_args(const struct nlm_wait *wt, uint8_t *buf, size_t cap, size_t *len)
{
	char host[256];
	uint64_t off, l;
	lk_span(wt->start, wt->end, &off, &l);
	netobj cookie = {.n_len = sizeof wt->cookie, .n_bytes = (char *)&wt->cookie};
	netobj fh = {.n_len = wt->fh_len, .n_bytes = (char *)wt->fh};
	netobj oh = {.n_len = wt->oh_len, .n_bytes = (char *)wt->oh};
	if (wt->vers >= NLM4_VERS) {
		nlm4_testargs a = {.cookie = cookie, .exclusive = wt->excl,
				   .alock = {.caller_name = server_name(host, sizeof host), .fh = fh,
					     .oh = oh, .svid = wt->owner.svid, .l_offset = off, .l_len = l}};
		return encode((xdrproc_t)xdr_nlm4_testargs, &a, buf, cap, len);
	}
	nlm_testargs a = {.cookie = cookie, .exclusive = wt->excl,
			  .alock = {.caller_name = server_name(host, sizeof host), .fh = fh, .oh = oh,
				    .svid = wt->owner.svid, .l_offset = (u_int)off,
				    .l_len = l > UINT32_MAX ? 0 : (u_int)l}};
	return encode((xdrproc_t)xdr_nlm_testargs, &a, buf, cap, len);
}

void nlm_send_granted(struct nlm *m, struct nlm_wait *wt)
{
	uint8_t buf[4096];
	size_t len;
	struct granted_ctx *g = malloc(sizeof *g);
	struct rpccb_target t = target(&wt->addr, &wt->local, wt->proto, NLM_PROG, wt->vers,
				       NLMPROC_GRANTED, NLM_CB_TIMEOUT_MS);
	int rc = g ? granted_args(wt, buf, sizeof buf, &len) : -ENOMEM;
	if (rc == 0) {
		*g = (struct granted_ctx){.m = m, .cookie = wt->cookie};
		rc = rpccb_call(m->cb, &t, buf, len, on_granted, g);
	}
	m->ctr.callbacks++;
	if (rc == 0)
		return;
	free(g);
	m->ctr.callback_failed++;
	char q[LOG_QUOTE_SIZE];
	log_ratelimited(&m->cb_log, LOG_WARNING, "lock: cannot call %s back: %s; the lock stays "
			"granted for its next request", log_quote(q, wt->caller_name), strerror(-rc));
	nlm_waiter_free(m, wt);
}

/* ---- _RES answers of _MSG calls ---- */

static void on_res(void *ctx, int status, const uint8_t *res, size_t len)
{
	struct nlm *m = ctx;
	(void)res;
	(void)len;
	if (status < 0)
		log_ratelimited(&m->cb_log, LOG_WARNING, "lock: an NLM _RES answer was not taken: %s",
				strerror(-status));
}

void nlm_send_res(struct nlm *m, const struct nlm_client *cl, uint32_t proc, xdrproc_t enc,
		  void *res)
{
	uint8_t buf[4096];
	size_t len;
	struct rpccb_target t = target(&cl->addr, &cl->local, cl->proto, NLM_PROG, cl->vers, proc,
				       NLM_CB_TIMEOUT_MS);
	int rc = encode(enc, res, buf, sizeof buf, &len);
	if (rc == 0)
		rc = rpccb_call(m->cb, &t, buf, len, on_res, m);
	if (rc < 0)
		log_ratelimited(&m->cb_log, LOG_WARNING, "lock: cannot send an NLM _RES answer: %s",
				strerror(-rc));
}

/* ---- SM_NOTIFY after a restart ---- */

struct notify_ctx {
	struct nlm *m;
	struct sockaddr_storage addr;
	char who[INET6_ADDRSTRLEN];
};

static void on_notified(void *ctx, int status, const uint8_t *res, size_t len)
{
	struct notify_ctx *n = ctx;
	(void)res;
	(void)len;
	if (status == -ECANCELED)
		log_debug("lock: SM_NOTIFY to %s not answered before the stop", n->who);
	else if (status < 0)
		log_warn("lock: SM_NOTIFY to %s failed: %s (tried again every minute)", n->who,
			 strerror(-status));
	else
		log_info("lock: %s notified of the restart", n->who);
	if (status == 0)
		nlm_host_notified(n->m, &n->addr);
	free(n);
}

/* A client that reached us at its own address is this machine: its port 111 may be ours, and
 * the notify would come back as one from the client, ending its grace period at once. */
static bool is_self(const struct nlm_host *h)
{
	return sa_same_host((const struct sockaddr *)&h->addr, (const struct sockaddr *)&h->local);
}

/* The monitor name we give: the address the client locked through, which is the name a Linux
 * client monitors a server by (the address it mounted). */
void nlm_notify_host(struct nlm *m, struct nlm_host *h)
{
	if (is_self(h)) {
		log_info("lock: not notifying this host itself of the restart");
		h->unnotified = false;
		return;
	}
	char mon[INET6_ADDRSTRLEN], name[256];
	bool known = h->local.ss_family == AF_INET || h->local.ss_family == AF_INET6;
	stat_chge args = {.mon_name = known ? (char *)sa_str(&h->local, mon)
					    : server_name(name, sizeof name),
			  .state = nsm_state(m->nsm)};
	uint8_t buf[2048];
	size_t len;
	struct notify_ctx *n = calloc(1, sizeof *n);
	if (!n || encode((xdrproc_t)xdr_stat_chge, &args, buf, sizeof buf, &len) < 0) {
		free(n);
		return;
	}
	n->m = m;
	n->addr = h->addr;
	sa_str(&h->addr, n->who);
	struct rpccb_target t = target(&h->addr, &h->local, IPPROTO_UDP, SM_PROG, SM_VERS, SM_NOTIFY,
				       NSM_NOTIFY_TIMEOUT_MS);
	if (rpccb_call(m->cb, &t, buf, len, on_notified, n) < 0) {
		free(n);
		return;
	}
	m->ctr.notifies_sent++;
}

void nlm_notify_restart(struct nlm *m)
{
	pthread_mutex_lock(&m->mu);
	for (struct nlm_host *h = m->hosts; h; h = h->next)
		if (h->unnotified)
			nlm_notify_host(m, h);
	pthread_mutex_unlock(&m->mu);
}

/* ---- timers ---- */

struct tick {
	struct nlm *m;
	unsigned n;
	bool grace_logged;
};

static void on_tick(void *ctx)
{
	struct tick *t = ctx;
	struct nlm *m = t->m;
	nlm_poll_waiters(m);
	if (++t->n % SWEEP_EVERY_TICKS == 0)
		nlm_sweep_hosts(m);
	pthread_mutex_lock(&m->mu);
	if (m->grace_started && !t->grace_logged && !grace_active(&m->grace, clock_ns())) {
		t->grace_logged = true;
		log_info("lock: grace period over: new locks are granted");
	}
	pthread_mutex_unlock(&m->mu);
	int rc = rpccb_after(m->cb, NLM_LOCAL_POLL_MS, on_tick, t);
	if (rc < 0 && rc != -ESHUTDOWN)
		log_err("lock: the lock manager's timer stopped (%s): waiters blocked by local locks "
			"are no longer retried", strerror(-rc));
}

void nlm_timers_start(struct nlm *m)
{
	struct tick *t = calloc(1, sizeof *t);
	if (!t) {
		log_err("lock: out of memory for the lock manager's timer");
		return;
	}
	t->m = m;
	m->tick = t;   /* freed by nlm_free, after the engine stopped */
	rpccb_after(m->cb, NLM_LOCAL_POLL_MS, on_tick, t);
}
