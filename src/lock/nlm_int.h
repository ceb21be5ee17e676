/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Inside the lock manager (nlm.c: state; nlm_lock.c: the calls; nlm_share.c; nlm_cb.c: what
 * runs on the callback thread). Everything here is under struct nlm's mutex. */
#ifndef NFSD_UC_LOCK_NLM_INT_H
#define NFSD_UC_LOCK_NLM_INT_H

#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>

#include "fs/fh.h"
#include "base/clock.h"
#include "lock/grace.h"
#include "lock/lk_table.h"
#include "lock/nlm.h"
#include "base/log.h"

#define NLM_FILE_BUCKETS 1024
#define NLM_HOST_IDLE_NS (120ull * 1000000000ull)   /* then a host without locks is forgotten */

struct nlm_host {
	struct nlm_host *next;
	uint64_t id;                    /* the lk_owner.host of its locks */
	struct sockaddr_storage addr;
	struct sockaddr_storage local;  /* our address it used last: its callbacks leave from there */
	char *name;                     /* its caller_name (NULL: none); with addr, its key */
	size_t nlocks, nwaiters, nshares;
	unsigned pending;               /* its calls between nlm_needs_record and nlm_call_done */
	bool recorded;                  /* on disk (nsm.h): a restart notifies it */
	bool unnotified;                /* held locks before this start, not told of it yet: its
					 * ordinary requests do not end its grace, its record stays */
	uint64_t idle_since;            /* holds nothing since then */
};

/* One owner's open file description of one file: its OFD locks live on it. */
struct nlm_ofd {
	struct nlm_ofd *next;
	struct lk_owner owner;
	int fd;
	bool rdonly, warned;
	unsigned waiters;               /* its waiters keep it open while they wait */
};

enum nlm_wait_state {
	W_BLOCKED,      /* answered BLOCKED, waiting for the range */
	W_GRANTING,     /* the lock is taken for it; our GRANTED callback is on its way */
};

/* A blocked LOCK. */
struct nlm_wait {
	struct nlm_wait *next, *prev;   /* its file's, in order of arrival */
	struct nlm_wait *gnext, *gprev; /* every waiter (cookie lookups) */
	struct nlm_file *file;
	struct nlm_ofd *ofd;
	struct lk_owner owner;
	uint64_t start, end;
	bool excl;
	bool reasserted;                /* the client asked again while GRANTED was on its way */
	bool keep_on_refusal;           /* the owner held part of the range before the grant */
	bool outside;                   /* blocked by a lock outside the table: polled */
	enum nlm_wait_state state;
	uint64_t cookie;                /* ours, in the GRANTED callback */
	uint32_t vers;
	int proto;                      /* the callback's transport: the LOCK's */
	struct sockaddr_storage addr, local;
	uint8_t fh[FH_MAX];
	uint32_t fh_len;
	uint32_t oh_len;
	uint8_t *oh;
	char *caller_name;
};

struct nlm_resv;

struct nlm_file {
	struct nlm_file *next;
	dev_t dev;
	ino_t ino;
	struct lk_file locks;
	struct nlm_ofd *ofds;
	struct nlm_wait *waiters, *waiters_tail;
	struct nlm_resv *shares;
};

struct nlm {
	pthread_mutex_t mu;
	const struct config *cfg;
	struct nsm *nsm;
	struct rpccb *cb;
	struct nlm_file *files[NLM_FILE_BUCKETS];
	struct nlm_host *hosts;
	struct nlm_wait *all_waiters;
	uint64_t next_host_id, next_cookie;
	size_t nlocks, nwaiters;
	struct grace grace;
	bool grace_started;             /* this start had one (grace clears itself when over) */
	struct nlm_counters ctr;
	struct log_ratelimit limit_log, wait_log, names_log, cb_log, file_log;   /* a kind each */
	struct log_ratelimit call_log[NLM_LOG_KINDS];   /* nlm_log_limit */
	void *tick;                     /* the callback thread's timer state (nlm_cb.c) */
};

/* The host (address, caller name), made if new: NULL out of memory, or past names_per_client
 * (counted, logged). */
struct nlm_host *nlm_host_get(struct nlm *m, const struct sockaddr_storage *addr, const char *name);
void nlm_addr_totals(struct nlm *m, const struct sockaddr_storage *addr, size_t *hosts,
		     size_t *locks, size_t *waiters);
struct nlm_host *nlm_host_of(struct nlm *m, uint64_t id);
struct nlm_file *nlm_file_find(struct nlm *m, dev_t dev, ino_t ino);
struct nlm_file *nlm_file_get(struct nlm *m, dev_t dev, ino_t ino);
void nlm_file_put(struct nlm *m, struct nlm_file *f);
struct nlm_ofd *nlm_ofd_get(struct nlm_file *f, struct lk_owner o, int path_fd, int *err);
void nlm_ofd_put(struct nlm_file *f, struct lk_owner o);
int nlm_ofd_apply(struct nlm *m, struct nlm_ofd *d, short type, uint64_t start, uint64_t end);
/* The fcntl form of [start, end] (start at most INT64_MAX: the caller checks). */
struct flock nlm_flock(short type, uint64_t start, uint64_t end);
void nlm_count_locks(struct nlm *m, struct nlm_host *h, long delta);
int nlm_take(struct nlm *m, struct nlm_file *f, struct nlm_ofd *d, struct nlm_host *h,
	     struct lk_owner o, const void *oh, uint32_t oh_len, uint64_t start, uint64_t end,
	     bool excl);
int nlm_release(struct nlm *m, struct nlm_file *f, struct nlm_host *h, struct lk_owner o,
		uint64_t start, uint64_t end);

/* The grace period's verdict on a LOCK, TEST or SHARE of h: NLM4_GRANTED (go on) or
 * NLM4_DENIED_GRACE_PERIOD (counted) (nlm_lock.c). */
enum nlm4_stats nlm_grace_verdict(struct nlm *m, struct nlm_host *h, bool reclaim);

/* Waiters (nlm_lock.c). */
void nlm_waiter_free(struct nlm *m, struct nlm_wait *wt);
/* A range of f came free: grant what waits there and can go now, in order of arrival. */
void nlm_file_wake(struct nlm *m, struct nlm_file *f);
/* The waiters blocked by a lock outside our table (a local process): try them again. Those
 * blocked by the table are woken by its unlocks, and cost the poll nothing. */
void nlm_poll_waiters(struct nlm *m);

/* Shares (nlm_share.c). */
void nlm_shares_clear(struct nlm_file *f);
void nlm_shares_drop_host(struct nlm_file *f, uint64_t host);

/* The callback thread's side (nlm_cb.c). */
void nlm_timers_start(struct nlm *m);
void nlm_send_granted(struct nlm *m, struct nlm_wait *wt);
void nlm_sweep_hosts(struct nlm *m);
/* SM_NOTIFY of this start reached the host at addr. */
void nlm_host_notified(struct nlm *m, const struct sockaddr_storage *addr);
/* (nlm_cb.c) Tell h of this start, again if need be; under the mutex. */
void nlm_notify_host(struct nlm *m, struct nlm_host *h);
/* The answer to a GRANTED we sent (from NULL), or a GRANTED_RES from a client: status < 0
 * when the call failed, else the client's st. */
void nlm_granted_done(struct nlm *m, uint64_t cookie, const struct sockaddr_storage *from,
		      int status, enum nlm4_stats st);

#endif
