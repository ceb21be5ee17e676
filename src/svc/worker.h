/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Ring threads: one per core (conf `threads`), each with its own io_uring, fiber scheduler,
 * connections, handle cache and credentials. A request runs on the ring that received it, from
 * socket to reply, as a fiber (io/fiber.h): its file calls suspend it and their CQEs resume it,
 * so a ring has many requests in flight and no thread waits for one I/O. Rings talk to each
 * other only by message (the scheduler's inbox, woken through an eventfd the ring reads). */
#ifndef NFSD_UC_SVC_WORKER_H
#define NFSD_UC_SVC_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "base/log.h"
#include "conf/config.h"
#include "io/fiber.h"
#include "io/ring.h"
#include "svc/svc.h"

/* TCP: NFS, MOUNT, NLM/NSM and the portmapper on each listen address; UDP: all but NFS. */
#define SVC_LISTEN_MAX (4 * CFG_LISTEN_MAX + 1)   /* + the portmapper on 127.0.0.1 */
#define SVC_UDP_MAX (3 * CFG_LISTEN_MAX + 1)
#define SVC_PROGS_MAX 16

struct conn;
struct dgram;
struct listener;
struct seen_table;
struct svc_gss;

/* A program version served, and its state (dispatch_add). */
struct svc_prog {
	const struct prog_desc *desc;
	void *ctx;
};

/* The rings' layer: read-only once the rings run, or atomic, but for what is marked. */
struct svc {
	struct config *cfg;
	struct fs *fs;                /* the file-system layer (fs/fs.h) */
	struct svc_prog progs[SVC_PROGS_MAX];   /* what dispatch serves */
	size_t nprogs;
	struct svc_observer obs;      /* obs.call_done NULL: nobody watches */
	atomic_uint nparked;          /* parked WRITEs of every ring: the idle check's first look */
	struct drc *drc;              /* duplicate request cache, NULL when off (rpc/drc.h) */
	struct svc_gss *gss;          /* RPCSEC_GSS's contexts, NULL when off (gss_call.h) */
	struct conn_limits *limits;   /* connections and record memory (connlimit.h) */
	/* connlimit's warnings, a kind each */
	struct log_ratelimit limit_log, mem_log, slow_log, share_log, client_log;
	size_t place_align;           /* WRITE payloads placed modulo this (fs_place_align) */
	struct worker *workers;       /* the rings */
	unsigned nworkers;
	bool serve_lock, serve_pmap;  /* the lock manager's port and port 111 are listened on */
	int listen_fd[SVC_LISTEN_MAX];   /* the TCP ports of each listen address */
	size_t nlisten_fds;           /* ring 0 accepts on them all */
	int udp_fd[SVC_UDP_MAX];      /* the UDP ports of each listen address (dgram.h) */
	size_t nudp_fds;              /* ring 0 receives on them all */
	unsigned next_ring;           /* round robin of new connections (ring 0 only) */
	struct log_ratelimit accept_errors, udp_log;
	struct log_ratelimit encode_log, sock_log;   /* lines a client can cause, a kind each */
};

struct worker {
	struct svc *srv;                /* the rings' layer */
	struct io_ring *ring;
	struct fiber_sched *sched;    /* its inbox takes messages from any thread */
	struct fs_chan *fs;           /* the file-system layer's part of the ring (fs/fs.h) */
	pthread_t thread;
	bool started;
	unsigned id;
	/* connections and requests (server.c) */
	struct listener *listeners[SVC_LISTEN_MAX];   /* ring 0 only */
	struct dgram *dgrams[SVC_UDP_MAX];            /* ring 0 only */
	struct conn *conns;
	unsigned inflight;            /* request fibers running or waiting */
	unsigned nstalled;            /* connections held back because inflight hit the bound */
	unsigned nmem_wait;           /* connections waiting for record memory (receive_memory) */
	struct fiber_timer conn_timer;   /* 1 s: idle and slow connections close */
	struct fiber_timer mem_timer;    /* while nmem_wait: look again for record memory */
	struct fiber_timer win_timer;    /* while nwin or the token is held: take back stalled
					  * receive windows, pass on a stalled token */
	unsigned nwin;                /* connections whose pending recv has a charged window */
	struct conn *mem_token;       /* the one whose begun record may go past receive_memory */
	uint64_t token_ns;            /* when its holder last asked for it (its bytes came) */
	_Atomic unsigned active;      /* requests not parked (read by other rings: workers_busy) */
	_Atomic uint64_t last_start;  /* when its latest request began (workers_last_start) */
	struct fs_parked *parked;     /* its parked WRITEs (fs/park.c), kicked when all goes idle */
	atomic_uint nparked;          /* how many (read by other rings) */
	atomic_bool idle_posted;      /* idle_msg is in its inbox */
	struct fiber_msg idle_msg;
	/* the loop: woken by ev_fd, which other threads write (worker_kick) */
	int ev_fd;
	uint64_t ev_buf;
	struct io_op ev_op;
	atomic_bool stop_req;         /* set by svc_stop() */
	bool stopping, done;
	void *obs;                    /* the observer's state of this ring (svc_set_observer) */
	struct seen_table *seen;      /* when its clients last called (seen.h): written by it only */
};

/* The ring of the calling thread, NULL on other threads (the main thread, the blocking pool). */
struct worker *worker_self(void);
/* Wake w's loop from any thread (it then runs its inbox and housekeeping). */
void worker_kick(struct worker *w);
/* Whether any ring has a request running other than the caller's (parked ones excluded): one
 * of them may be the WRITE a parked one waits for. Sums per-ring counters: no shared hot line. */
bool workers_busy(struct svc *srv, const struct worker *self);
/* The calling request starts (a new one, or a parked one going on) or stops (ending, or
 * parking) being counted by workers_busy(); stopping runs worker_idle_check(). */
void worker_running(struct worker *w, bool running);
/* A new request begins on w: worker_running(w, true), and the time noted for
 * workers_last_start(). */
void worker_request_begin(struct worker *w);
/* When the latest request began, on any ring (CLOCK_MONOTONIC ns): while they keep coming, the
 * WRITE a parked one waits for may be among the next, even if every one so far has parked. */
uint64_t workers_last_start(struct svc *srv);
/* A WRITE parked for its neighbour (fs/park.c) is listed on its ring between begin and end:
 * when no request is left running anywhere, its wait is kicked (it then gives up waiting), so it
 * needs no periodic look at whether the server went idle. */
void worker_park_begin(struct worker *w, struct fs_parked *p);
void worker_park_end(struct worker *w, struct fs_parked *p);

#endif
