/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The lock manager's state: every client's byte-range locks, blocked LOCKs waiting for a range,
 * share reservations, the clients (hosts) holding them, and the grace period after a restart.
 * One per server, shared by the rings (which run NLM calls arriving over TCP and UDP) and the
 * callback thread (rpc/rpccb.c: GRANTED callbacks, _RES replies, SM_NOTIFY, timers) under one
 * mutex. Its critical sections make no I/O call that can wait (fcntl F_OFD_SETLK never blocks;
 * reopening a file through /proc/self/fd finds its inode in memory).
 *
 * Locks are real on the server: each (owner, file) that holds or waits for a lock has an open
 * file description of its own, and every granted lock is also an OFD lock on it, so local
 * processes and other servers of the host see NFS clients' locks and the other way round. A
 * range taken by a local process makes a LOCK wait (blocking) or be DENIED; waiters blocked
 * that way are tried again every NLM_LOCAL_POLL_MS, as the kernel has no notification of a
 * local unlock to give us. Ranges past 2^63 - 1, which no local process can name, are kept in
 * the table only. */
#ifndef NFSD_UC_LOCK_NLM_H
#define NFSD_UC_LOCK_NLM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "svc/dispatch.h"
#include "xdr/nlm_prot.h"

struct nlm;
struct nsm;
struct rpccb;
struct config;

#define NLM_LOCAL_POLL_MS 250

/* Who asks: the client host (its address and caller_name: two names from one address are two
 * hosts, whose locks are not each other's) and how to call it back. */
struct nlm_client {
	struct sockaddr_storage addr;   /* the caller (its port is ignored) */
	struct sockaddr_storage local;  /* our address it called: callbacks come from there */
	const char *name;               /* caller_name */
	uint32_t vers;                  /* NLM version of the call: callbacks use it too */
	int proto;                      /* and its transport, as knfsd calls back (IPPROTO_*) */
};

/* One lock request, of any version (1 and 3 widened to 64 bits). */
struct nlm_lockreq {
	struct nlm_client cl;
	const void *fh;                 /* the NFS handle, echoed in GRANTED */
	uint32_t fh_len;
	dev_t dev;                      /* the file (the caller resolved fh) */
	ino_t ino;
	int path_fd;                    /* an O_PATH descriptor of it, valid during the call */
	int32_t svid;
	const void *oh;
	uint32_t oh_len;
	uint64_t start, end;            /* inclusive (lk_range) */
	bool excl;
};

/* TEST's answer when DENIED. oh points into the table: copy it before nlm_unlock_mu. */
struct nlm_holder4 {
	bool excl;
	int32_t svid;
	const uint8_t *oh;
	uint32_t oh_len;
	uint64_t start, end;
};

struct nlm_counters {
	uint64_t granted, denied, blocked, grace_denied, nolocks, cancelled, unlocked;
	uint64_t callbacks, callback_ok, callback_failed, notifies_sent, notifies_received;
	uint64_t hosts_refused;         /* a new caller name past names_per_client */
	uint64_t locks, waiters, hosts, grace_pending;   /* gauges */
	uint64_t shares, monitored, grace_active;   /* gauges: monitored = hosts recorded (NSM) */
};

/* Start the lock manager: NSM state and records (nsm), grace period over the recorded hosts,
 * callbacks on cb (which it owns from then on). NULL on failure (logged). */
struct nlm *nlm_new(const struct config *cfg, struct nsm *nsm, struct rpccb *cb);
/* Send SM_NOTIFY to every host that held locks before this start (callback thread). */
void nlm_notify_restart(struct nlm *m);
/* Stop: pending callbacks end, every OFD closes (the server's locks go), NSM state goes even
 * when clean. */
void nlm_free(struct nlm *m, bool clean);

/* Before a monitored LOCK of a host not yet on disk: record it (state_dir, synced) so that a
 * restart notifies it. Blocking file I/O: run it on the blocking pool. 0 or -errno. */
bool nlm_needs_record(struct nlm *m, const struct nlm_client *cl);
int nlm_record(struct nlm *m, const struct nlm_client *cl);

/* Every call that began with nlm_needs_record ends with this. */
void nlm_call_done(struct nlm *m, const struct nlm_client *cl);

/* Send a _MSG call's result as its _RES call (proc) to the client, from the callback thread. */
void nlm_send_res(struct nlm *m, const struct nlm_client *cl, uint32_t proc, xdrproc_t enc,
		  void *res);

enum nlm4_stats nlm_req_test(struct nlm *m, const struct nlm_lockreq *r, struct nlm_holder4 *h,
			 uint8_t *oh_copy);
enum nlm4_stats nlm_req_lock(struct nlm *m, const struct nlm_lockreq *r, bool block, bool reclaim);
enum nlm4_stats nlm_req_cancel(struct nlm *m, const struct nlm_lockreq *r);
enum nlm4_stats nlm_req_unlock(struct nlm *m, const struct nlm_lockreq *r);
/* A client's GRANTED_RES for the cookie we sent, honoured only from that client (from). */
void nlm_granted_res(struct nlm *m, const struct sockaddr_storage *from, const void *cookie,
		     uint32_t len, enum nlm4_stats st);

/* Share reservations (DOS-style whole-file modes), per host and owner handle. */
enum nlm4_stats nlm_req_share(struct nlm *m, const struct nlm_lockreq *r, fsh_mode mode,
			  fsh_access access, bool reclaim);
enum nlm4_stats nlm_req_unshare(struct nlm *m, const struct nlm_lockreq *r);

/* A client host restarted (SM_NOTIFY from it, notify: any name) or freed all it held (FREE_ALL
 * under its caller name): drop its locks, shares and waiters. Only from the host's own address.
 * The number of locks dropped. */
size_t nlm_host_rebooted(struct nlm *m, const char *name, const struct sockaddr_storage *addr,
			 bool notify);

/* The lock manager's lines about one client's call, at most one a second of each kind: SM_NOTIFY
 * and FREE_ALL come from anyone (SM_NOTIFY over UDP), each would otherwise log a line. */
enum nlm_log { NLM_LOG_NOTIFY, NLM_LOG_FREE_ALL, NLM_LOG_RECORD, NLM_LOG_KINDS };
struct log_ratelimit *nlm_log_limit(struct nlm *m, enum nlm_log kind);

/* Whether the grace period runs, and the NSM state number, for NSM's answers. */
int32_t nlm_nsm_state(struct nlm *m);
void nlm_counters(struct nlm *m, struct nlm_counters *out);

/* What one client host holds, for the operators (nfsd-uc-stat clients). */
struct nlm_host_view {
	const struct sockaddr_storage *addr;
	uint64_t locks, waiters, shares;
};
/* fn for each host (two caller names of one address are two hosts), under the lock manager's
 * mutex: fn must not call back into it. */
void nlm_walk_hosts(struct nlm *m, void (*fn)(void *ctx, const struct nlm_host_view *h),
		    void *ctx);

/* The programs (nlmproc.c, nsmproc.c), each registered with the struct nlm as its state: NLM
 * versions 1, 3 and 4 (as knfsd's lockd), and NSM version 1. */
extern const struct prog_desc nlm1_program, nlm3_program, nlm4_program, nsm1_program;

#endif
