/* SPDX-License-Identifier: GPL-2.0-or-later */
/* TEST, LOCK, CANCEL and UNLOCK on the lock manager's state, and the waiters of blocked LOCKs. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "base/sockaddr.h"
#include "lock/nlm_int.h"

static struct lk_owner owner_of(const struct nlm_host *h, const struct nlm_lockreq *r)
{
	return (struct lk_owner){.host = h->id, .svid = r->svid};
}

/* ---- waiters ---- */

void nlm_waiter_free(struct nlm *m, struct nlm_wait *wt)
{
	struct nlm_file *f = wt->file;
	if (wt->prev)
		wt->prev->next = wt->next;
	else
		f->waiters = wt->next;
	if (wt->next)
		wt->next->prev = wt->prev;
	else
		f->waiters_tail = wt->prev;
	if (wt->gprev)
		wt->gprev->gnext = wt->gnext;
	else
		m->all_waiters = wt->gnext;
	if (wt->gnext)
		wt->gnext->gprev = wt->gprev;
	struct nlm_host *h = nlm_host_of(m, wt->owner.host);
	if (h) {
		h->nwaiters--;
		nlm_count_locks(m, h, 0);
	}
	m->nwaiters--;
	wt->ofd->waiters--;
	nlm_ofd_put(f, wt->owner);
	free(wt->oh);
	free(wt->caller_name);
	free(wt);
}

static struct nlm_wait *waiter_find(struct nlm_file *f, struct lk_owner o, uint64_t start,
				    uint64_t end, bool excl)
{
	for (struct nlm_wait *wt = f->waiters; wt; wt = wt->next)
		if (lk_owner_eq(wt->owner, o) && wt->start == start && wt->end == end &&
		    wt->excl == excl)
			return wt;
	return NULL;
}

static enum nlm4_stats waiter_add(struct nlm *m, struct nlm_file *f, struct nlm_ofd *d,
				  struct nlm_host *h, const struct nlm_lockreq *r)
{
	size_t hosts, locks, waiters;
	nlm_addr_totals(m, &h->addr, &hosts, &locks, &waiters);
	if (m->nwaiters >= m->cfg->max_waiters || waiters >= m->cfg->max_waiters_per_client) {
		char q[LOG_QUOTE_SIZE];
		m->ctr.nolocks++;
		log_ratelimited(&m->wait_log, LOG_WARNING, "lock: client %s has %zu blocked locks "
				"(waiters_per_client %u, waiters %u in all): NOLOCKS", log_quote(q, h->name),
				waiters, m->cfg->max_waiters_per_client, m->cfg->max_waiters);
		return NLM4_DENIED_NOLOCKS;
	}
	struct nlm_wait *wt = calloc(1, sizeof *wt);
	if (!wt || (r->oh_len && !(wt->oh = malloc(r->oh_len))) ||
	    (r->cl.name && !(wt->caller_name = strdup(r->cl.name)))) {
		if (wt) {
			free(wt->oh);
			free(wt);
		}
		return NLM4_DENIED_NOLOCKS;
	}
	*wt = (struct nlm_wait){.file = f, .ofd = d, .owner = owner_of(h, r), .start = r->start,
				.end = r->end, .excl = r->excl, .cookie = ++m->next_cookie,
				.vers = r->cl.vers, .proto = r->cl.proto, .addr = r->cl.addr,
				.local = r->cl.local,
				.fh_len = r->fh_len < FH_MAX ? r->fh_len : FH_MAX,
				.oh_len = r->oh_len, .oh = wt->oh,
				.caller_name = wt->caller_name, .prev = f->waiters_tail};
	memcpy(wt->fh, r->fh, wt->fh_len);   /* resolved handles are never longer */
	if (r->oh_len)
		memcpy(wt->oh, r->oh, r->oh_len);
	if (f->waiters_tail)
		f->waiters_tail->next = wt;
	else
		f->waiters = wt;
	f->waiters_tail = wt;
	wt->gnext = m->all_waiters;
	if (m->all_waiters)
		m->all_waiters->gprev = wt;
	m->all_waiters = wt;
	d->waiters++;
	h->nwaiters++;
	m->nwaiters++;
	m->ctr.blocked++;
	return NLM4_BLOCKED;
}

static bool owner_overlaps(const struct lk_file *f, struct lk_owner o, uint64_t start, uint64_t end)
{
	LK_FOREACH(l, f)
		if (lk_owner_eq(l->owner, o) && l->start <= end && start <= l->end)
			return true;
	return false;
}

/* Grant wt if nothing holds its range now. */
static void waiter_try(struct nlm *m, struct nlm_wait *wt)
{
	struct nlm_file *f = wt->file;
	struct nlm_host *h = nlm_host_of(m, wt->owner.host);
	if (!h || lk_conflict(&f->locks, wt->owner, wt->start, wt->end, wt->excl)) {
		wt->outside = false;   /* an unlock in the table will wake it */
		return;
	}
	/* Releasing a refused grant must not take what the owner held there before (a read lock
	 * being upgraded): then it is left granted instead, as knfsd leaves all of them. */
	bool held_before = owner_overlaps(&f->locks, wt->owner, wt->start, wt->end);
	if (nlm_take(m, f, wt->ofd, h, wt->owner, wt->oh, wt->oh_len, wt->start, wt->end,
		     wt->excl) < 0) {
		wt->outside = true;   /* held by someone outside the table: the poll tries again */
		return;
	}
	wt->keep_on_refusal = held_before;
	wt->state = W_GRANTING;
	m->ctr.granted++;
	nlm_send_granted(m, wt);
}

void nlm_file_wake(struct nlm *m, struct nlm_file *f)
{
	for (struct nlm_wait *wt = f->waiters, *next; wt; wt = next) {
		next = wt->next;
		if (wt->state == W_BLOCKED)
			waiter_try(m, wt);
	}
}

void nlm_poll_waiters(struct nlm *m)
{
	pthread_mutex_lock(&m->mu);
	for (struct nlm_wait *wt = m->all_waiters, *next; wt; wt = next) {
		next = wt->gnext;
		if (wt->state == W_BLOCKED && wt->outside)
			waiter_try(m, wt);
	}
	pthread_mutex_unlock(&m->mu);
}

/* A granted waiter is settled: the client took the lock (ok), or refused or cancelled it, in
 * which case the lock goes again unless the client asked for it once more meanwhile. */
static void waiter_settle(struct nlm *m, struct nlm_wait *wt, bool ok)
{
	struct nlm_file *f = wt->file;
	if (!ok && !wt->reasserted && !wt->keep_on_refusal) {
		struct nlm_host *h = nlm_host_of(m, wt->owner.host);
		if (h)
			nlm_release(m, f, h, wt->owner, wt->start, wt->end);
	}
	nlm_waiter_free(m, wt);
	nlm_file_wake(m, f);
	nlm_file_put(m, f);
}

static struct nlm_wait *waiter_by_cookie(struct nlm *m, uint64_t cookie)
{
	for (struct nlm_wait *wt = m->all_waiters; wt; wt = wt->gnext)
		if (wt->cookie == cookie)
			return wt;
	return NULL;
}

/* The answer to our GRANTED (callback thread) or a GRANTED_RES (a ring). A timeout keeps the
 * lock: a Linux client polls its blocked LOCKs every 30 s and then finds it granted. */
void nlm_granted_done(struct nlm *m, uint64_t cookie, const struct sockaddr_storage *from,
		      int status, enum nlm4_stats st)
{
	pthread_mutex_lock(&m->mu);
	struct nlm_wait *wt = waiter_by_cookie(m, cookie);
	/* A GRANTED_RES counts only from the waiter's own host: another could release its lock. */
	if (wt && from && !sa_same_host((const struct sockaddr *)&wt->addr,
					    (const struct sockaddr *)from))
		wt = NULL;
	if (wt && wt->state == W_GRANTING) {
		bool ok = status < 0 || st == NLM4_GRANTED;
		if (status == -ECANCELED) {
			/* the server stops: nothing to tell */
		} else if (status < 0) {
			char q[LOG_QUOTE_SIZE];
			m->ctr.callback_failed++;
			log_ratelimited(&m->cb_log, LOG_WARNING, "lock: GRANTED callback to %s failed: "
					"%s; the lock stays granted", log_quote(q, wt->caller_name),
					strerror(-status));
		} else {
			m->ctr.callback_ok++;
		}
		waiter_settle(m, wt, ok);
	}
	pthread_mutex_unlock(&m->mu);
}

void nlm_granted_res(struct nlm *m, const struct sockaddr_storage *from, const void *cookie,
		     uint32_t len, enum nlm4_stats st)
{
	uint64_t c;
	if (len == sizeof c) {
		memcpy(&c, cookie, sizeof c);
		nlm_granted_done(m, c, from, 0, st);
	}
}

/* ---- the calls ---- */

static const char *stat_name(enum nlm4_stats st)
{
	static const char *const names[] = {"GRANTED", "DENIED", "DENIED_NOLOCKS", "BLOCKED",
					    "DENIED_GRACE_PERIOD", "DEADLCK", "ROFS", "STALE_FH",
					    "FBIG", "FAILED"};
	return (unsigned)st < sizeof names / sizeof names[0] ? names[st] : "?";
}

/* One line per call at debug level (asked for: -v or log_level = debug): not rate-limited, as
 * what is asked for is every call. */
static void note(struct nlm *m, const char *what, const struct nlm_lockreq *r, enum nlm4_stats st)
{
	char q[LOG_QUOTE_SIZE];
	(void)m;
	log_debug("lock: %s from %s svid %d [%llu, %llu] %s: %s", what, log_quote(q, r->cl.name),
		  r->svid, (unsigned long long)r->start, (unsigned long long)r->end,
		  r->excl ? "exclusive" : "shared", stat_name(st));
}

enum nlm4_stats nlm_grace_verdict(struct nlm *m, struct nlm_host *h, bool reclaim)
{
	uint64_t now = clock_ns();
	/* A host reclaiming knows of the restart, whether or not our SM_NOTIFY's answer is in yet
	 * (the client may act on the notify before its answer reaches us). */
	if (reclaim)
		h->unnotified = false;
	/* An ordinary request of a host not yet told of the restart (its blocked LOCK re-sent,
	 * say) does not say its reclaims are over: they have not begun. */
	bool early = !reclaim && h->unnotified && grace_active(&m->grace, now);
	/* grace_period = 0: no protection asked for, so reclaims are ordinary requests. */
	if (!m->cfg->grace_period)
		reclaim = false;
	if (!early && grace_check(&m->grace, now, h->id, reclaim) == GRACE_OK)
		return NLM4_GRANTED;
	m->ctr.grace_denied++;
	return NLM4_DENIED_GRACE_PERIOD;
}

/* A conflicting lock outside our table (a local process, another server): F_OFD_GETLK. */
static bool local_conflict(struct nlm_file *f, struct lk_owner o, int path_fd,
			   const struct nlm_lockreq *r, struct nlm_holder4 *out)
{
	if (r->start > (uint64_t)INT64_MAX)
		return false;
	int err;
	struct nlm_ofd *d = nlm_ofd_get(f, o, path_fd, &err);
	if (!d)
		return false;
	struct flock fl = nlm_flock(r->excl ? F_WRLCK : F_RDLCK, r->start, r->end);
	bool held = fcntl(d->fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
	nlm_ofd_put(f, o);
	if (held)
		*out = (struct nlm_holder4){.excl = fl.l_type == F_WRLCK, .svid = fl.l_pid,
					    .start = (uint64_t)fl.l_start,
					    .end = fl.l_len ? (uint64_t)(fl.l_start + fl.l_len - 1)
							    : UINT64_MAX};
	return held;
}

enum nlm4_stats nlm_req_test(struct nlm *m, const struct nlm_lockreq *r, struct nlm_holder4 *hd,
			 uint8_t *oh_copy)
{
	enum nlm4_stats st = NLM4_DENIED_NOLOCKS;
	pthread_mutex_lock(&m->mu);
	struct nlm_host *h = nlm_host_get(m, &r->cl.addr, r->cl.name);
	struct nlm_file *f = h ? nlm_file_get(m, r->dev, r->ino) : NULL;
	if (!f)
		goto out;
	st = nlm_grace_verdict(m, h, false);
	if (st != NLM4_GRANTED)
		goto put;
	const struct lk_lock *c = lk_conflict(&f->locks, owner_of(h, r), r->start, r->end, r->excl);
	if (c) {
		*hd = (struct nlm_holder4){.excl = c->excl, .svid = c->owner.svid, .oh = oh_copy,
					   .oh_len = c->oh_len, .start = c->start, .end = c->end};
		memcpy(oh_copy, c->oh, c->oh_len);
		st = NLM4_DENIED;
	} else if (local_conflict(f, owner_of(h, r), r->path_fd, r, hd)) {
		st = NLM4_DENIED;
	}
put:
	nlm_file_put(m, f);
out:
	pthread_mutex_unlock(&m->mu);
	note(m, "TEST", r, st);
	return st;
}

/* The client's locks are those of every host of its address. */
static enum nlm4_stats over_limit(struct nlm *m, struct nlm_host *h)
{
	size_t hosts, locks, waiters;
	nlm_addr_totals(m, &h->addr, &hosts, &locks, &waiters);
	if (m->nlocks < m->cfg->max_locks && locks < m->cfg->max_locks_per_client)
		return NLM4_GRANTED;
	char q[LOG_QUOTE_SIZE];
	m->ctr.nolocks++;
	log_ratelimited(&m->limit_log, LOG_WARNING, "lock: client %s holds %zu locks "
			"(locks_per_client %u, locks %u in all): NOLOCKS", log_quote(q, h->name),
			locks, m->cfg->max_locks_per_client, m->cfg->max_locks);
	return NLM4_DENIED_NOLOCKS;
}

/* The lock is free of our table's conflicts: place it, or wait, or deny. */
static enum nlm4_stats lock_place(struct nlm *m, struct nlm_file *f, struct nlm_host *h,
				  const struct nlm_lockreq *r, bool block)
{
	struct lk_owner o = owner_of(h, r);
	int err = 0;
	struct nlm_ofd *d = nlm_ofd_get(f, o, r->path_fd, &err);
	if (!d) {
		log_ratelimited(&m->file_log, LOG_WARNING, "lock: cannot open the file for its lock: %s",
				strerror(-err));
		return NLM4_DENIED_NOLOCKS;
	}
	bool conflict = lk_conflict(&f->locks, o, r->start, r->end, r->excl) != NULL;
	if (!conflict) {
		int rc = nlm_take(m, f, d, h, o, r->oh, r->oh_len, r->start, r->end, r->excl);
		if (rc == 0) {
			m->ctr.granted++;
			return NLM4_GRANTED;
		}
		if (rc != -EAGAIN && rc != -EACCES) {
			nlm_ofd_put(f, o);
			return rc == -EDEADLK ? NLM4_DEADLCK : NLM4_DENIED_NOLOCKS;
		}
	}
	if (!block) {
		nlm_ofd_put(f, o);
		m->ctr.denied++;
		return NLM4_DENIED;
	}
	enum nlm4_stats st = waiter_add(m, f, d, h, r);
	if (st != NLM4_BLOCKED)
		nlm_ofd_put(f, o);
	else if (!conflict)
		f->waiters_tail->outside = true;   /* the kernel refused it: the poll's to retry */
	return st;
}

enum nlm4_stats nlm_req_lock(struct nlm *m, const struct nlm_lockreq *r, bool block, bool reclaim)
{
	enum nlm4_stats st = NLM4_DENIED_NOLOCKS;
	pthread_mutex_lock(&m->mu);
	struct nlm_host *h = nlm_host_get(m, &r->cl.addr, r->cl.name);
	struct nlm_file *f = h ? nlm_file_get(m, r->dev, r->ino) : NULL;
	if (!f)
		goto out;
	h->local = r->cl.local;
	st = nlm_grace_verdict(m, h, reclaim);
	if (st != NLM4_GRANTED)
		goto put;
	struct nlm_wait *wt = waiter_find(f, owner_of(h, r), r->start, r->end, r->excl);
	if (wt && wt->state == W_BLOCKED) {
		/* the client asks again (its poll, a retransmission); not blocking: no */
		st = block ? NLM4_BLOCKED : NLM4_DENIED;
		goto put;
	}
	uint64_t nolocks = m->ctr.nolocks;
	st = over_limit(m, h);
	if (st == NLM4_GRANTED)
		st = lock_place(m, f, h, r, block);
	if (wt && st == NLM4_GRANTED)
		wt->reasserted = true;   /* granted already, and told so: the client's in any case */
	else if (!nolocks && m->ctr.nolocks)   /* the first NOLOCKS since the start, and only it */
		log_info("lock: see [lock] locks and locks_per_client in the configuration");
put:
	nlm_file_put(m, f);
out:
	pthread_mutex_unlock(&m->mu);
	note(m, reclaim ? "LOCK (reclaim)" : block ? "LOCK (blocking)" : "LOCK", r, st);
	return st;
}

enum nlm4_stats nlm_req_cancel(struct nlm *m, const struct nlm_lockreq *r)
{
	pthread_mutex_lock(&m->mu);
	struct nlm_host *h = nlm_host_get(m, &r->cl.addr, r->cl.name);
	struct nlm_file *f = h ? nlm_file_find(m, r->dev, r->ino) : NULL;
	struct nlm_wait *wt = f ? waiter_find(f, owner_of(h, r), r->start, r->end, r->excl) : NULL;
	bool found = wt != NULL;
	if (wt) {
		m->ctr.cancelled++;
		if (wt->state == W_GRANTING)
			wt->reasserted = false;   /* granted, but the client no longer wants it */
		waiter_settle(m, wt, wt->state != W_GRANTING);
	}
	pthread_mutex_unlock(&m->mu);
	note(m, found ? "CANCEL" : "CANCEL (no waiter)", r, NLM4_GRANTED);
	return NLM4_GRANTED;
}

enum nlm4_stats nlm_req_unlock(struct nlm *m, const struct nlm_lockreq *r)
{
	enum nlm4_stats st = NLM4_GRANTED;
	pthread_mutex_lock(&m->mu);
	struct nlm_host *h = nlm_host_get(m, &r->cl.addr, r->cl.name);
	struct nlm_file *f = h ? nlm_file_find(m, r->dev, r->ino) : NULL;
	if (f) {
		if (nlm_release(m, f, h, owner_of(h, r), r->start, r->end) < 0)
			st = NLM4_DENIED_NOLOCKS;
		else
			m->ctr.unlocked++;
		nlm_file_wake(m, f);
		nlm_file_put(m, f);
	}
	pthread_mutex_unlock(&m->mu);
	note(m, "UNLOCK", r, st);
	return st;
}
