/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rings' layer as the daemon builds and runs it: ring threads (one io_uring and scheduler
 * each), listeners, connections, datagram sockets, the limits on what clients hold, the
 * duplicate request cache, and the programs it dispatches calls to. */
#ifndef NFSD_UC_SVC_SVC_H
#define NFSD_UC_SVC_SVC_H

#include <stdbool.h>
#include <stdint.h>

#include "fs/fs.h"
#include "rpc/drc.h"
#include "svc/connlimit.h"
#include "svc/dispatch.h"
#include "svc/gss_call.h"

struct config;
struct svc;

struct svc_params {
	struct config *cfg;
	struct fs *fs;                /* the file-system layer its calls use */
};
/* The limits and the duplicate request cache (when reply_cache_entries is set); no ring runs
 * yet. 0, or -1 with a log line. */
int svc_new(const struct svc_params *p, struct svc **out);
/* After svc_stop(). NULL is a no-op. */
void svc_free(struct svc *svc);

/* Serve program version p, its handlers given ctx as svc_call.prog: before the rings start, a
 * program's versions side by side, lowest first (a call for another version gets PROG_MISMATCH
 * with the lowest and highest). A program not added answers PROG_UNAVAIL. 0 or -ENOSPC. */
int dispatch_add(struct svc *svc, const struct prog_desc *p, void *ctx);

/* Who watches the calls (the metrics): a state of its own per ring, made before the rings start
 * (NULL: no memory), and each call of a registered program with its status (-1: none, or it has
 * no status) and its time from decode to encoded reply, on the ring, with that ring's state.
 * Each call whose arguments decode is seen three times, in this order: call_begin, then
 * call_handled while its result and its use of the file system (rq->fs.exp: the export its
 * handles resolved to) are still there, then call_done. Either of the first two may be NULL. */
struct svc_observer {
	void *(*ring_new)(void *ctx, unsigned ring);
	void (*call_begin)(void *ring_state, uint32_t prog, uint32_t proc);
	void (*call_handled)(void *ring_state, const struct svc_call *rq, const void *res);
	void (*call_done)(void *ring_state, uint32_t prog, uint32_t proc, int64_t status,
			  uint64_t ns);
	void *ctx;
};
void svc_set_observer(struct svc *svc, const struct svc_observer *o);

/* Open the NFS and MOUNT listeners of every listen address, the lock manager's port (lock) and
 * port 111 (pmap) too when asked, retrying a while if a killed predecessor's sockets linger.
 * 0, or -1 with a log line. */
int svc_listen(struct svc *svc, bool lock, bool pmap);
void svc_unlisten(struct svc *svc);

/* Start n ring threads (the listeners must be open: ring 0 accepts for all). 0 or -errno; on
 * failure nothing is left running. */
int svc_start(struct svc *svc, unsigned n);
/* Stop accepting and reading, answer the requests in flight, close every connection, join the
 * rings (each closes its handle cache as it ends, writing what the cache still holds for its
 * files), and free them. */
void svc_stop(struct svc *svc);
bool svc_running(const struct svc *svc);

/* The counters of the limits and of the duplicate request cache (has_drc: it is on). */
struct svc_stats {
	struct climit_stats limits;
	bool has_drc;
	struct drc_stats drc;
	bool has_gss;                 /* RPCSEC_GSS is served (a keytab was read) */
	struct gss_stats gss;
};
void svc_get_stats(struct svc *svc, struct svc_stats *out);

/* The rings' clients, for the operators (nfsd-uc-stat clients), from a ring while they run:
 * conns gets each address with connections open and how many; seen each address a ring saw
 * call, with the time of its latest call there (CLOCK_MONOTONIC ns; an address that called on
 * several rings comes once per ring). The result: how many addresses the rings' bounded tables
 * of calls let go since the start (svc/seen.h). */
struct svc_client_sink {
	void (*conns)(void *ctx, const struct sockaddr_storage *addr, unsigned n);
	void (*seen)(void *ctx, const struct sockaddr_storage *addr, uint64_t last_ns);
	void *ctx;
};
uint64_t svc_clients(struct svc *svc, const struct svc_client_sink *sink);

/* What the file-system layer asks of the rings (fs/fs.h), for fs_new(). */
extern const struct fs_ring_ops workers_fs_ops;

#endif
