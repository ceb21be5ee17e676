/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The server's shared state (read-only after start, or atomic), the per-core ring (struct
 * worker), and the request every handler receives. */
#ifndef NFSD_UC_NFSD_H
#define NFSD_UC_NFSD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <netinet/in.h>

#include "base/arena.h"
#include "base/log.h"
#include "conf/config.h"
#include "fs/cred.h"
#include "fs/exptable.h"
#include "fs/fs.h"
#include "rpc/oncrpc.h"

#include "io/cosync.h"
#include "io/fiber.h"
#include "io/ring.h"

/* TCP: NFS, MOUNT, NLM/NSM and the portmapper on each listen address; UDP: all but NFS. */
#define SERVER_LISTEN_MAX (4 * CFG_LISTEN_MAX + 1)   /* + the portmapper on 127.0.0.1 */
#define SERVER_UDP_MAX (3 * CFG_LISTEN_MAX + 1)

struct fh_entry;
struct conn;
struct listener;
struct dgram;
struct conn_limits;
struct drc;
struct nlm;
struct ring_metrics;
struct pmap_reg;

/* The metrics endpoint's refusals (metrics_http.c): written by its thread, read by any. */
struct metrics_http_counters {
	_Atomic uint64_t refused, timed_out;
};

/* Request counters (the boundary cache keeps its own). */
struct server_counters {
	_Atomic uint64_t writes, reads, commits, bytes_written, bytes_read;
};

struct server {
	struct config *cfg;
	struct fs *fs;                /* the file-system layer (fs/fs.h) */
	atomic_uint nparked;          /* parked WRITEs of every ring: the idle check's first look */
	struct drc *drc;              /* duplicate request cache, NULL when off (drc.h) */
	struct nlm *nlm;              /* the lock manager, NULL when [lock] port = 0 (lock/nlm.h) */
	struct pmap_reg *pmap;        /* port 111's registry when we serve it (pmap/pmap.h); else NULL */
	struct conn_limits *limits;   /* connections and record memory (connlimit.h) */
	/* connlimit's warnings, a kind each */
	struct log_ratelimit limit_log, mem_log, slow_log, share_log;
	size_t place_align;           /* WRITE payloads placed modulo this (fs_place_align) */
	struct worker *workers;       /* the rings */
	unsigned nworkers;
	int listen_fd[SERVER_LISTEN_MAX];   /* the TCP ports of each listen address */
	size_t nlisten_fds;           /* ring 0 accepts on them all */
	int udp_fd[SERVER_UDP_MAX];   /* the UDP ports of each listen address (dgram.h) */
	size_t nudp_fds;              /* ring 0 receives on them all */
	unsigned next_ring;           /* round robin of new connections (ring 0 only) */
	struct server_counters ctr;
	struct metrics_http_counters mhttp;
	struct log_ratelimit accept_errors, udp_log;
	struct log_ratelimit encode_log, pmap_log, sock_log;   /* lines a client can cause, a kind
								 * each */
	/* MOUNT's list of who mounted what, for DUMP (mount/mountlist.h); its log lines */
	struct mount_list *mounts;
	struct log_ratelimit mount_log, mount_refused_log, mount_drop_log;
};

/* One ring (worker.c): a thread with its own io_uring and fibers, owning its connections from
 * accept to close, its handle cache and the credentials applied to its thread. Only its own
 * thread touches it, except the fields marked otherwise. */
struct worker {
	struct server *srv;
	struct io_ring *ring;
	struct fiber_sched *sched;    /* its inbox takes messages from any thread */
	struct fs_chan *fs;           /* the file-system layer's part of the ring (fs/fs.h) */
	pthread_t thread;
	bool started;
	unsigned id;
	/* connections and requests (server.c) */
	struct listener *listeners[SERVER_LISTEN_MAX];   /* ring 0 only */
	struct dgram *dgrams[SERVER_UDP_MAX];            /* ring 0 only */
	struct conn *conns;
	unsigned inflight;            /* request fibers running or waiting */
	unsigned nstalled;            /* connections held back because inflight hit the bound */
	unsigned nmem_wait;           /* connections waiting for record memory (receive_memory) */
	struct fiber_timer conn_timer;   /* 1 s: idle and slow connections close */
	struct fiber_timer mem_timer;    /* while nmem_wait: look again for record memory */
	struct fiber_timer win_timer;    /* while nwin: take back stalled receive windows */
	unsigned nwin;                /* connections whose pending recv has a charged window */
	struct conn *mem_token;       /* the one whose begun record may go past receive_memory */
	_Atomic unsigned active;      /* requests not parked (read by other rings: workers_busy) */
	_Atomic uint64_t last_start;  /* when its latest request began (workers_last_start) */
	struct fs_parked *parked;     /* its parked WRITEs (fileio.c), kicked when all goes idle */
	atomic_uint nparked;          /* how many (read by other rings) */
	atomic_bool idle_posted;      /* idle_msg is in its inbox */
	struct fiber_msg idle_msg;
	/* the loop: woken by ev_fd, which other threads write (worker_kick) */
	int ev_fd;
	uint64_t ev_buf;
	struct io_op ev_op;
	atomic_bool stop_req;         /* set by workers_stop() */
	bool stopping, done;
	struct ring_metrics *metrics; /* per-procedure figures (metrics.h): written by this ring only */
};

/* One RPC call being handled. */
struct record_mem;
struct nfs_req {
	struct worker *w;
	const struct rpc_call *call;
	struct sockaddr_storage peer;
	struct sockaddr_storage local;   /* the server's address the call came to (AF_UNSPEC: unknown) */
	int proto;                    /* IPPROTO_TCP or IPPROTO_UDP: what it came over */
	struct fs_call fs;            /* its use of the file system: credentials, exports, handles */
	struct arena arena;
	size_t reply_hint;            /* bytes the encoded result may need, when more than the default */
	struct fs_payload payload;    /* zero-copy tail of the reply (READ data) */
};

#endif
