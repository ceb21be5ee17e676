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
#include "rpc/oncrpc.h"

#include "io/cosync.h"
#include "io/fiber.h"
#include "io/ring.h"

/* TCP: NFS, MOUNT, NLM/NSM and the portmapper on each listen address; UDP: all but NFS. */
#define SERVER_LISTEN_MAX (4 * CFG_LISTEN_MAX + 1)   /* + the portmapper on 127.0.0.1 */
#define SERVER_UDP_MAX (3 * CFG_LISTEN_MAX + 1)

struct fh_cache;
struct fh_entry;
struct bcache;
struct conn;
struct listener;
struct dgram;
struct forget_ring;
struct pool;
struct cred_personalities;
struct conn_limits;
struct drc;
struct nlm;
struct ring_metrics;
struct export_table;
struct peer_names;
struct pmap_reg;

/* An export as served: its configuration plus what start-up learnt of its file system. */
struct export_rt {
	const struct export_cfg *cfg;
	int root_fd;              /* O_RDONLY of the export root: open_by_handle_at refuses O_PATH */
	dev_t dev;                /* st_dev of the root: lookups never leave it */
	uint64_t root_ino;
	size_t block;             /* boundary-cache block size (resolved "auto") */
	enum io_mode write_mode;  /* after the O_DIRECT probe (direct may fall back to dontcache) */
	enum io_mode read_mode;
	/* Paged-mode export (write_mode dontcache or buffered) of a file system that another
	 * export serves through nfsd-uc's cache: its calls first flush and drop what that cache
	 * holds of the file (fileio.c). */
	bool shares_cache;
	/* write_mode cached on a file system whose handles open for writes that keep mtime and
	 * ctime (nocmtime.h): write-behind writes through such a descriptor. */
	bool keeps_times;
	/* The file system keeps an extent size hint (XFS; ext4 drops it and moves the ctime):
	 * probed at start on a temporary file, asked for on a file's first WRITE. */
	bool extent_hints;
	/* The largest file size the export takes (FSINFO's maxfilesize): the file system's
	 * s_maxbytes as probed at start (exptable.c), at most RLIMIT_FSIZE, and for an export
	 * through the cache a whole number of blocks (the cache writes whole blocks). WRITE,
	 * SETATTR and COMMIT past it answer NFS3ERR_FBIG before any I/O. */
	uint64_t maxbytes;
	/* Some client rule has subtree_check: its handles are connectable (fh_kernel_at). */
	bool subtree_check;
	bool owns_root;           /* its export table closes root_fd (exptable.c) */
};

/* The metrics endpoint's refusals (metrics_http.c): written by its thread, read by any. */
struct metrics_http_counters {
	_Atomic uint64_t refused, timed_out;
};

/* Request counters (the boundary cache keeps its own). stable_alone: stable WRITEs that
 * completed a partial end block without the neighbour that shares it, from disk or zeros (no
 * other WRITE was running, or it stopped waiting: fileio.c): every fill read a stable WRITE
 * causes is one of these. */
struct server_counters {
	_Atomic uint64_t writes, reads, commits, bytes_written, bytes_read, stable_alone;
};

struct server {
	struct config *cfg;
	struct export_table *table;   /* the exports in force (exptable.h); the main thread's */
	struct export_table **retired;   /* tables a reload could not free yet (freed at exit) */
	size_t nretired;
	uint8_t fh_key[16];           /* SipHash key authenticating file handles; persisted */
	_Atomic uint64_t write_verf;  /* drawn at start, rotated after a write or fsync error */
	atomic_uint nparked;          /* parked WRITEs of every ring: the idle check's first look */
	atomic_uint wb_fibers;        /* write-behind fibers of every ring (worker_writeback) */
	struct bcache *cache;
	struct drc *drc;              /* duplicate request cache, NULL when off (drc.h) */
	struct nlm *nlm;              /* the lock manager, NULL when [lock] port = 0 (lock/nlm.h) */
	struct pmap_reg *pmap;        /* port 111's registry when we serve it (pmap/pmap.h); else NULL */
	struct conn_limits *limits;   /* connections and record memory (connlimit.h) */
	/* connlimit's warnings, a kind each */
	struct log_ratelimit limit_log, mem_log, slow_log, share_log;
	size_t place_align;           /* WRITE payloads placed modulo this: the largest export block */
	struct pool *pool;            /* blocking calls with no io_uring op (cred_offload) */
	struct pool *resolver;        /* clients' names for wildcard rules (peername.c) */
	bool stop_pending;            /* SIGTERM came while a reload waited (main thread only) */
	unsigned fh_cache_max;        /* handle-cache entries per ring, from RLIMIT_NOFILE */
	atomic_uint sweep_gen;        /* bumped to make every ring sweep its handle cache now */
	_Atomic uint64_t deleted_closed_ns;   /* when a ring last closed handles of deleted files */
	struct forget_ring *forgets;  /* inodes gone through one ring, for the others (worker.c) */
	struct worker *workers;       /* the rings */
	unsigned nworkers;
	int listen_fd[SERVER_LISTEN_MAX];   /* the TCP ports of each listen address */
	size_t nlisten_fds;           /* ring 0 accepts on them all */
	int udp_fd[SERVER_UDP_MAX];   /* the UDP ports of each listen address (dgram.h) */
	size_t nudp_fds;              /* ring 0 receives on them all */
	unsigned next_ring;           /* round robin of new connections (ring 0 only) */
	struct server_counters ctr;
	struct metrics_http_counters mhttp;
	struct log_ratelimit write_errors, accept_errors, udp_log;
	struct log_ratelimit fh_log, encode_log, pmap_log, sock_log;   /* lines a client can cause,
									 * a kind each */
	/* Fault seams for the tests, from the environment at start (see main.c); 0: off. */
	unsigned fault_readdir_delay_ms;
	/* MOUNT's list of who mounted what, for DUMP (mount/mountlist.h); its log lines */
	struct mount_list *mounts;
	struct log_ratelimit mount_log, mount_refused_log, mount_drop_log;
};

/* The file-system identity applied to a thread (cred.c). */
struct cred_state {
	struct rpc_cred cur;
	bool is_root;
};

/* One ring (worker.c): a thread with its own io_uring and fibers, owning its connections from
 * accept to close, its handle cache and the credentials applied to its thread. Only its own
 * thread touches it, except the fields marked otherwise. */
struct worker {
	struct server *srv;
	struct io_ring *ring;
	struct fiber_sched *sched;    /* its inbox takes messages from any thread */
	struct fh_cache *fhc;
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
	struct parked_call *parked;   /* its parked WRITEs (fileio.c), kicked when all goes idle */
	atomic_uint nparked;          /* how many (read by other rings) */
	atomic_bool idle_posted;      /* idle_msg is in its inbox */
	struct fiber_msg idle_msg;
	/* the loop: woken by ev_fd, which other threads write (worker_kick) */
	int ev_fd;
	uint64_t ev_buf;
	struct io_op ev_op;
	atomic_bool stop_req;         /* set by workers_stop() */
	bool stopping, done;
	/* handle-cache housekeeping */
	long next_sweep;              /* CLOCK_MONOTONIC second of the next handle-cache sweep */
	atomic_uint sweep_gen;        /* the server's sweep_gen as of our last sweep (read by others) */
	unsigned sweep_pending;       /* ... as of the sweep whose handles are being closed */
	bool closing;                 /* a fiber closes the handles the sweeps took out (fh_doomed) */
	uint64_t forget_seq;          /* forget_ring entries applied to our handle cache */
	/* credentials currently applied to this thread (cred.c keeps it to skip no-op switches) */
	struct cred_state creds;
	struct cred_personalities *personalities;   /* cred.c: their io_uring personalities */
	struct ring_metrics *metrics; /* per-procedure figures (metrics.h): written by this ring only */
	/* the exports its requests use (exptable.h): the table in force, the one before it while
	 * requests that began under it run, and how many do */
	struct export_table *table, *old_table, *table_next;
	unsigned table_refs, old_refs;
	atomic_uint table_released;   /* gen of table once old_table is let go (read by main) */
	struct fiber_msg table_msg;
	struct peer_names *names;     /* clients' confirmed names, for wildcard rules (peername.c) */
};

/* Handle-cache entries a request resolved: kept open until it ends, whatever other fibers of the
 * ring do to the cache meanwhile. */
#define NFS_REQ_PINS 4

/* One RPC call being handled. */
/* The memory of a request's record. A WRITE that the cache keeps (write_mode = cached) lends it
 * the record instead of copying the payload: record_buf() turns the memory into a reference-
 * counted holder, which the request's end releases like any other reference. */
struct bcache_buf;
struct record_mem {
	void *mem;
	struct bcache_buf *hold;
};
struct bcache_buf *record_buf(struct record_mem *rm);
void record_mem_release(struct record_mem *rm);

struct nfs_req {
	struct worker *w;
	struct record_mem *rec;       /* NULL when the caller keeps no record (tests) */
	const struct rpc_call *call;
	struct sockaddr_storage peer;
	struct sockaddr_storage local;   /* the server's address the call came to (AF_UNSPEC: unknown) */
	int proto;                    /* IPPROTO_TCP or IPPROTO_UDP: what it came over */
	struct rpc_cred cred;         /* as sent; squashed per export when a handle is resolved */
	struct export_table *tbl;     /* the exports as they were when the call began */
	const struct export_rt *exp;  /* the export of the (first) handle resolved */
	const struct client_rule *rule;
	struct arena arena;
	size_t reply_hint;            /* bytes the encoded result may need, when more than the default */
	void *payload;                /* zero-copy tail of the reply (READ data) */
	size_t payload_len;
	const struct iovec *payload_iov;  /* or, when set, payload_len bytes in these (cache hits) */
	int payload_iovcnt;
	void *payload_mem;            /* what payload_free releases once the reply has been sent */
	void (*payload_free)(void *);
	struct fh_entry *pins[NFS_REQ_PINS];
	unsigned npins;
};

/* The current write verifier as the 8 bytes a WRITE/COMMIT reply carries. */
void server_write_verf(struct server *srv, char out[8]);
/* A write or fsync failed: clients must resend what they sent UNSTABLE. */
void server_rotate_verf(struct server *srv);
/* Whether a WRITE or COMMIT that failed with err (-errno) may have lost data acknowledged as
 * UNSTABLE, so that the verifier must change: synced when the failure was writing out or syncing
 * data held before (a COMMIT, a stable WRITE), not when it was the request's own bytes. */
bool server_verf_lost(int err, bool synced);

#endif
