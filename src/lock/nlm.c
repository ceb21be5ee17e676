/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The lock manager's state (nlm.h): files, owners' open file descriptions, waiters, hosts. */
#include "lock/nlm.h"
#include "lock/nlm_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/fdpath.h"
#include "conf/config.h"
#include "base/sockaddr.h"
#include "base/log.h"
#include "lock/nsm.h"
#include "rpc/rpccb.h"

/* ---- hosts ---- */

static bool same_addr(const struct nlm_host *h, const struct sockaddr_storage *addr)
{
	return sa_same_host((const struct sockaddr *)&h->addr, (const struct sockaddr *)addr);
}

/* Caller names are host names: no case. No name and an empty one are the same. */
static bool same_name(const char *a, const char *b)
{
	return strcasecmp(a ? a : "", b ? b : "") == 0;
}

/* A host is an address and a caller name: another name from the same address (another user's
 * program, another client behind a NAT) is another host, whose locks are not this one's. */
static struct nlm_host *host_find(struct nlm *m, const struct sockaddr_storage *addr,
				  const char *name)
{
	for (struct nlm_host *h = m->hosts; h; h = h->next)
		if (same_addr(h, addr) && same_name(h->name, name))
			return h;
	return NULL;
}

/* What the hosts of one address hold in all: the per-client limits are per address, or a client
 * would multiply them by naming itself anew. */
void nlm_addr_totals(struct nlm *m, const struct sockaddr_storage *addr, size_t *hosts,
		     size_t *locks, size_t *waiters)
{
	*hosts = *locks = *waiters = 0;
	for (struct nlm_host *h = m->hosts; h; h = h->next)
		if (same_addr(h, addr)) {
			(*hosts)++;
			*locks += h->nlocks;
			*waiters += h->nwaiters;
		}
}

/* quiet: a refusal past names_per_client is not counted nor logged (the call's lock request,
 * which follows, does both). */
static struct nlm_host *host_get(struct nlm *m, const struct sockaddr_storage *addr,
				 const char *name, bool quiet)
{
	struct nlm_host *h = host_find(m, addr, name);
	if (h)
		return h;
	size_t hosts, locks, waiters;
	nlm_addr_totals(m, addr, &hosts, &locks, &waiters);
	if (hosts >= m->cfg->max_names_per_client) {
		char who[INET6_ADDRSTRLEN], q[LOG_QUOTE_SIZE];
		if (quiet)
			return NULL;
		m->ctr.hosts_refused++;
		log_ratelimited(&m->names_log, LOG_WARNING, "lock: client %s calls itself by more than "
				"%u names (names_per_client), the latest %s: NOLOCKS",
				sa_str(addr, who), m->cfg->max_names_per_client,
				log_quote(q, name));
		return NULL;
	}
	h = calloc(1, sizeof *h);
	if (!h || (name && *name && !(h->name = strdup(name)))) {
		free(h);
		return NULL;
	}
	h->id = ++m->next_host_id;
	h->addr = *addr;
	h->next = m->hosts;
	m->hosts = h;
	m->ctr.hosts++;
	return h;
}

struct nlm_host *nlm_host_get(struct nlm *m, const struct sockaddr_storage *addr, const char *name)
{
	return host_get(m, addr, name, false);
}

/* Another host of h's address is on disk: the record (one per address) must stay. */
static bool addr_recorded_elsewhere(struct nlm *m, const struct nlm_host *h)
{
	for (struct nlm_host *o = m->hosts; o; o = o->next)
		if (o != h && o->recorded && same_addr(o, &h->addr))
			return true;
	return false;
}

static struct nlm_host *host_by_id(struct nlm *m, uint64_t id)
{
	for (struct nlm_host *h = m->hosts; h; h = h->next)
		if (h->id == id)
			return h;
	return NULL;
}

/* ---- files and their open file descriptions ---- */

static size_t file_bucket(dev_t dev, ino_t ino)
{
	uint64_t k = ((uint64_t)dev * 0x9e3779b97f4a7c15ull) ^ (uint64_t)ino;
	k ^= k >> 29;
	return (size_t)(k % NLM_FILE_BUCKETS);
}

struct nlm_file *nlm_file_find(struct nlm *m, dev_t dev, ino_t ino)
{
	for (struct nlm_file *f = m->files[file_bucket(dev, ino)]; f; f = f->next)
		if (f->dev == dev && f->ino == ino)
			return f;
	return NULL;
}

struct nlm_file *nlm_file_get(struct nlm *m, dev_t dev, ino_t ino)
{
	struct nlm_file *f = nlm_file_find(m, dev, ino);
	if (f)
		return f;
	f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	f->dev = dev;
	f->ino = ino;
	lk_file_init(&f->locks);
	size_t b = file_bucket(dev, ino);
	f->next = m->files[b];
	m->files[b] = f;
	return f;
}

/* Free f once nothing refers to it any more. */
void nlm_file_put(struct nlm *m, struct nlm_file *f)
{
	if (f->locks.count || f->ofds || f->waiters || f->shares)
		return;
	struct nlm_file **pp = &m->files[file_bucket(f->dev, f->ino)];
	while (*pp != f)
		pp = &(*pp)->next;
	*pp = f->next;
	free(f);
}

static struct nlm_ofd *ofd_find(struct nlm_file *f, struct lk_owner o)
{
	for (struct nlm_ofd *d = f->ofds; d; d = d->next)
		if (lk_owner_eq(d->owner, o))
			return d;
	return NULL;
}

/* A new open file description of the file behind path_fd (reopening an O_PATH descriptor through
 * /proc gives a description of its own, whatever else has the file open). Read-write when the
 * file allows it, so exclusive locks can be placed; else read-only (a read-only file system, a
 * running executable). The calling thread must be the server (root). */
static int ofd_open(int path_fd, bool *rdonly)
{
	struct fd_path fp;
	const char *p = fd_path(&fp, path_fd);
	int fd = open(p, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	*rdonly = false;
	if (fd < 0 && errno != ENOMEM && errno != EMFILE && errno != ENFILE) {
		fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		*rdonly = true;
	}
	return fd < 0 ? -errno : fd;
}

struct nlm_ofd *nlm_ofd_get(struct nlm_file *f, struct lk_owner o, int path_fd, int *err)
{
	struct nlm_ofd *d = ofd_find(f, o);
	if (d)
		return d;
	d = calloc(1, sizeof *d);
	if (!d) {
		*err = -ENOMEM;
		return NULL;
	}
	d->fd = ofd_open(path_fd, &d->rdonly);
	if (d->fd < 0) {
		*err = d->fd;
		free(d);
		return NULL;
	}
	d->owner = o;
	d->next = f->ofds;
	f->ofds = d;
	return d;
}

/* Close the owner's description once it neither holds nor waits: its OFD locks go with it. */
void nlm_ofd_put(struct nlm_file *f, struct lk_owner o)
{
	struct nlm_ofd **pp = &f->ofds;
	while (*pp && !lk_owner_eq((*pp)->owner, o))
		pp = &(*pp)->next;
	struct nlm_ofd *d = *pp;
	if (!d || d->waiters || lk_owner_holds(&f->locks, o))
		return;
	*pp = d->next;
	close(d->fd);
	free(d);
}

struct flock nlm_flock(short type, uint64_t start, uint64_t end)
{
	/* l_len 0 is "to the end": what a range reaching past off_t's last offset becomes */
	return (struct flock){.l_type = type, .l_whence = SEEK_SET, .l_start = (off_t)start,
			      .l_len = end >= (uint64_t)INT64_MAX ? 0 : (off_t)(end - start + 1)};
}

/* The kernel's side of a lock: F_OFD_SETLK on the owner's description. Ranges starting past what
 * off_t names cannot be seen by a local process: nothing to do. A read-only description cannot
 * carry an exclusive lock: the table alone holds it (logged once per description). */
int nlm_ofd_apply(struct nlm *m, struct nlm_ofd *d, short type, uint64_t start, uint64_t end)
{
	if (start > (uint64_t)INT64_MAX)
		return 0;
	struct flock fl = nlm_flock(type, start, end);
	if (type == F_WRLCK && d->rdonly) {
		/* It cannot be placed; but a local holder of the range still excludes it. */
		if (!d->warned)
			log_ratelimited(&m->file_log, LOG_INFO, "lock: a file opened read-only for an "
					"exclusive lock: it is held in nfsd-uc's table only");
		d->warned = true;
		if (fcntl(d->fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK)
			return -EAGAIN;
		return 0;
	}
	return fcntl(d->fd, F_OFD_SETLK, &fl) < 0 ? -errno : 0;
}

/* ---- counts ---- */

void nlm_count_locks(struct nlm *m, struct nlm_host *h, long delta)
{
	h->nlocks = (size_t)((long)h->nlocks + delta);
	m->nlocks = (size_t)((long)m->nlocks + delta);
	if (!h->nlocks && !h->nwaiters)
		h->idle_since = clock_ns();
}

/* Place o's lock in the kernel and in the table: 0, -EAGAIN (a conflicting lock the table does
 * not know: a local process or another server), or another -errno. */
int nlm_take(struct nlm *m, struct nlm_file *f, struct nlm_ofd *d, struct nlm_host *h,
	     struct lk_owner o, const void *oh, uint32_t oh_len, uint64_t start, uint64_t end,
	     bool excl)
{
	int rc = nlm_ofd_apply(m, d, excl ? F_WRLCK : F_RDLCK, start, end);
	if (rc < 0)
		return rc;
	int delta = 0;
	rc = lk_add(&f->locks, o, oh, oh_len, start, end, excl, &delta);
	if (rc < 0) {
		/* Out of memory after the kernel took it: the kernel lock stays until the owner's
		 * description closes, which errs on the side of excluding others. */
		log_err("lock table: %s", strerror(-rc));
		return rc;
	}
	nlm_count_locks(m, h, delta);
	return 0;
}

/* Release o's [start, end] in the table and the kernel. */
int nlm_release(struct nlm *m, struct nlm_file *f, struct nlm_host *h, struct lk_owner o,
		uint64_t start, uint64_t end)
{
	size_t before = f->locks.count;
	int rc = lk_remove(&f->locks, o, start, end);
	if (rc < 0)
		return rc;
	nlm_count_locks(m, h, (long)f->locks.count - (long)before);
	struct nlm_ofd *d = ofd_find(f, o);
	if (d)
		nlm_ofd_apply(m, d, F_UNLCK, start, end);
	if (d)
		nlm_ofd_put(f, o);
	return 0;
}

/* ---- the manager ---- */

struct nlm *nlm_new(const struct config *cfg, struct nsm *nsm, struct rpccb *cb)
{
	struct nlm *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	pthread_mutex_init(&m->mu, NULL);
	m->cfg = cfg;
	m->nsm = nsm;
	m->cb = cb;
	m->next_cookie = (uint64_t)clock_ns() << 16;
	/* The hosts that held locks before this start: the grace period waits for them. */
	const struct nsm_rec *recs;
	size_t n = nsm_records(nsm, &recs);
	uint64_t *ids = n ? calloc(n, sizeof *ids) : NULL;
	size_t k = 0;
	for (size_t i = 0; i < n && ids; i++) {
		struct nlm_host *h = nlm_host_get(m, &recs[i].addr, recs[i].name);
		if (h) {
			h->recorded = true;
			h->unnotified = true;
			h->local = recs[i].local;
			h->idle_since = clock_ns();
			ids[k++] = h->id;
		}
	}
	if (k && grace_start(&m->grace, clock_ns(), (uint64_t)cfg->grace_period * 1000000000ull,
			     ids, k) == 0 && (m->grace_started = m->grace.active))
		log_info("lock: grace period of %u s for %zu client(s) that held locks: only reclaims "
			 "are granted until they are done", cfg->grace_period, k);
	free(ids);
	nlm_timers_start(m);
	return m;
}

static void file_free_all(struct nlm *m, struct nlm_file *f)
{
	while (f->waiters)
		nlm_waiter_free(m, f->waiters);
	for (struct nlm_ofd *d = f->ofds, *next; d; d = next) {
		next = d->next;
		close(d->fd);
		free(d);
	}
	f->ofds = NULL;
	lk_file_clear(&f->locks);
	nlm_shares_clear(f);
	free(f);
}

void nlm_free(struct nlm *m, bool clean)
{
	if (!m)
		return;
	rpccb_stop(m->cb);   /* first: no callback runs on the state below any more */
	free(m->tick);
	for (size_t b = 0; b < NLM_FILE_BUCKETS; b++)
		for (struct nlm_file *f = m->files[b], *next; f; f = next) {
			next = f->next;
			file_free_all(m, f);
		}
	for (struct nlm_host *h = m->hosts, *next; h; h = next) {
		next = h->next;
		free(h->name);
		free(h);
	}
	grace_free(&m->grace);
	nsm_close(m->nsm, clean);
	pthread_mutex_destroy(&m->mu);
	free(m);
}

struct log_ratelimit *nlm_log_limit(struct nlm *m, enum nlm_log kind)
{
	return &m->call_log[kind];
}

int32_t nlm_nsm_state(struct nlm *m)
{
	return nsm_state(m->nsm);
}

void nlm_counters(struct nlm *m, struct nlm_counters *out)
{
	pthread_mutex_lock(&m->mu);
	*out = m->ctr;
	out->locks = m->nlocks;
	out->waiters = m->nwaiters;
	out->grace_active = grace_active(&m->grace, clock_ns());
	out->grace_pending = out->grace_active ? grace_pending(&m->grace) : 0;
	/* The hosts are few (bounded by the limits), and this is asked rarely. */
	out->shares = out->monitored = 0;
	for (const struct nlm_host *h = m->hosts; h; h = h->next) {
		out->shares += h->nshares;
		out->monitored += h->recorded;
	}
	pthread_mutex_unlock(&m->mu);
}

void nlm_walk_hosts(struct nlm *m, void (*fn)(void *ctx, const struct nlm_host_view *h),
		    void *ctx)
{
	pthread_mutex_lock(&m->mu);
	for (const struct nlm_host *h = m->hosts; h; h = h->next)
		fn(ctx, &(struct nlm_host_view){&h->addr, h->nlocks, h->nwaiters, h->nshares});
	pthread_mutex_unlock(&m->mu);
}

bool nlm_needs_record(struct nlm *m, const struct nlm_client *cl)
{
	pthread_mutex_lock(&m->mu);
	struct nlm_host *h = host_get(m, &cl->addr, cl->name, true);
	/* One record per address: a restart notifies the address, whichever name wrote it. */
	if (h && !h->recorded && addr_recorded_elsewhere(m, h))
		h->recorded = true;
	bool need = h && !h->recorded;
	if (h)
		h->pending++;   /* the sweep leaves its record alone while a call of it runs */
	pthread_mutex_unlock(&m->mu);
	return need;
}

int nlm_record(struct nlm *m, const struct nlm_client *cl)
{
	int rc = nsm_write(m->nsm, &cl->addr, &cl->local, cl->name ? cl->name : "");
	pthread_mutex_lock(&m->mu);
	struct nlm_host *h = host_find(m, &cl->addr, cl->name);
	if (h && rc == 0) {
		h->recorded = true;
		h->local = cl->local;
	}
	pthread_mutex_unlock(&m->mu);
	return rc;
}

void nlm_call_done(struct nlm *m, const struct nlm_client *cl)
{
	pthread_mutex_lock(&m->mu);
	struct nlm_host *h = host_find(m, &cl->addr, cl->name);
	if (h && h->pending)
		h->pending--;
	pthread_mutex_unlock(&m->mu);
}

/* ---- a host restarted ---- */

static size_t host_drop_file(struct nlm *m, struct nlm_file *f, struct nlm_host *h)
{
	for (struct nlm_wait *wt = f->waiters, *next; wt; wt = next) {
		next = wt->next;
		if (wt->owner.host == h->id)
			nlm_waiter_free(m, wt);
	}
	size_t n = lk_remove_host(&f->locks, h->id);
	/* Closing the host's descriptions drops their kernel locks in one go. */
	for (struct nlm_ofd **pp = &f->ofds; *pp;) {
		struct nlm_ofd *d = *pp;
		if (d->owner.host == h->id && !d->waiters) {
			*pp = d->next;
			close(d->fd);
			free(d);
		} else {
			pp = &d->next;
		}
	}
	nlm_shares_drop_host(f, h->id);
	return n;
}

static size_t host_drop(struct nlm *m, struct nlm_host *h)
{
	size_t dropped = 0;
	for (size_t b = 0; b < NLM_FILE_BUCKETS; b++)
		for (struct nlm_file *f = m->files[b], *next; f; f = next) {
			next = f->next;
			size_t n = host_drop_file(m, f, h);
			dropped += n;
			if (n)
				nlm_file_wake(m, f);
			nlm_file_put(m, f);
		}
	nlm_count_locks(m, h, -(long)dropped);
	h->nshares = 0;
	grace_host_done(&m->grace, h->id);
	return dropped;
}

/* The caller must be the host itself: from its address (a name alone would let any client free
 * any other's locks), and for FREE_ALL under its name too. */
size_t nlm_host_rebooted(struct nlm *m, const char *name, const struct sockaddr_storage *addr,
			 bool notify)
{
	size_t dropped = 0;
	pthread_mutex_lock(&m->mu);
	if (notify)
		m->ctr.notifies_received++;
	for (struct nlm_host *h = m->hosts; h; h = h->next)
		if (same_addr(h, addr) && (!name || same_name(h->name, name)))
			dropped += host_drop(m, h);
	pthread_mutex_unlock(&m->mu);
	return dropped;
}

/* Hosts that hold nothing, for a while, lose their record: a restart need not wait for them. */
void nlm_sweep_hosts(struct nlm *m)
{
	uint64_t now = clock_ns();
	pthread_mutex_lock(&m->mu);
	bool grace = grace_active(&m->grace, now);
	for (struct nlm_host **pp = &m->hosts; *pp;) {
		struct nlm_host *h = *pp;
		bool idle = !h->nlocks && !h->nwaiters && !h->pending && !h->nshares &&
			    now - h->idle_since > NLM_HOST_IDLE_NS;
		/* Like statd, keep telling a host that missed our restart (it was unreachable). */
		if (h->unnotified && !grace)
			nlm_notify_host(m, h);
		if (!idle || grace || h->unnotified) {
			pp = &h->next;
			continue;
		}
		if (h->recorded && !addr_recorded_elsewhere(m, h))
			nsm_remove(m->nsm, &h->addr);
		*pp = h->next;
		m->ctr.hosts--;
		free(h->name);
		free(h);
	}
	pthread_mutex_unlock(&m->mu);
}

/* SM_NOTIFY goes to an address: every host of it knows of the restart. */
void nlm_host_notified(struct nlm *m, const struct sockaddr_storage *addr)
{
	pthread_mutex_lock(&m->mu);
	for (struct nlm_host *h = m->hosts; h; h = h->next)
		if (same_addr(h, addr))
			h->unnotified = false;
	pthread_mutex_unlock(&m->mu);
}

struct nlm_host *nlm_host_of(struct nlm *m, uint64_t id)
{
	return host_by_id(m, id);
}
