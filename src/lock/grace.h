/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The grace period after a server restart: for a while only reclaims (NLM LOCK with reclaim
 * set) are granted, so that the clients that held locks before the restart get them back
 * before anyone else can take them. A pure state machine: the caller passes the time (ns, any
 * monotonic clock) and serialises the calls.
 *
 * Who counts: the hosts that held locks before the restart, recorded by the caller (its state
 * file) and given to grace_start. With none there is no grace period at all: nothing to
 * protect. Otherwise the grace period lasts duration_ns, and ends earlier once every recorded
 * host is done reclaiming. A recorded host is done
 *   - at its first non-reclaim LOCK or TEST (grace_check with reclaim false): a Linux client
 *     holds its ordinary requests while it reclaims (nlmclnt_call waits on h_reclaiming), so
 *     its first ordinary request means its reclaims are over; or
 *   - when grace_host_done is called for it: it rebooted as well (SM_NOTIFY) or freed all its
 *     locks (FREE_ALL), so it has nothing more to reclaim.
 * Hosts that were not recorded do not count: their requests neither end the grace period nor
 * are granted during it (unless they are reclaims, which are harmless: nobody else can hold
 * that range yet). Once over, by time or early, the grace period is over for good. */
#ifndef NFSD_UC_LOCK_GRACE_H
#define NFSD_UC_LOCK_GRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct grace_host;

struct grace {
	bool active;
	uint64_t end_ns;               /* when it ends at the latest */
	struct grace_host *hosts;      /* the recorded hosts, sorted and unique */
	size_t n;
	size_t left;                   /* of them, those not done yet */
};

enum grace_verdict {
	GRACE_OK,        /* go on: an ordinary request outside a grace period, or a reclaim in one */
	GRACE_DENY,      /* NLM4_DENIED_GRACE_PERIOD: a new lock or TEST during the grace period,
			  * or a reclaim outside one */
};

/* Start the grace period at now, for duration_ns, for the n hosts (copied; duplicates count
 * once). n == 0 or duration_ns == 0: no grace period. 0, or -ENOMEM with *g initialised to no
 * grace period (the caller decides whether to run without one). */
int grace_start(struct grace *g, uint64_t now, uint64_t duration_ns, const uint64_t *hosts,
		size_t n);

/* Whether the grace period still runs at now; it ends here once duration_ns has passed. */
bool grace_active(struct grace *g, uint64_t now);

/* The verdict on a LOCK (reclaim as the request says) or a TEST (reclaim false) of host.
 * Reclaims are GRACE_OK during the grace period and GRACE_DENY outside it, as knfsd answers
 * them: once it is over, another client may have taken the range and changed the file, so a
 * late reclaim must fail rather than silently succeed. A non-reclaim request marks its host done; if that ends the grace period (it was the last
 * recorded host) the request itself is GRACE_OK: all reclaims are over. */
enum grace_verdict grace_check(struct grace *g, uint64_t now, uint64_t host, bool reclaim);

/* host has nothing more to reclaim (SM_NOTIFY from it, FREE_ALL). Unknown hosts: nothing. */
void grace_host_done(struct grace *g, uint64_t host);

/* Recorded hosts not done yet (0 once the grace period is over): for logs and metrics. */
size_t grace_pending(const struct grace *g);

/* Time left at now, 0 when over. */
uint64_t grace_remaining_ns(struct grace *g, uint64_t now);

/* Frees the host list; *g is then no grace period (and may be started again). */
void grace_free(struct grace *g);

#endif
