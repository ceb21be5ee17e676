/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon, made of its layers bottom up (daemon.c): the file-system layer, the rings' layer,
 * the programs' states registered with the dispatcher, the operators' side. main.c runs it; the
 * fuzzers build the same one. */
#ifndef NFSD_UC_DAEMON_H
#define NFSD_UC_DAEMON_H

#include <stdint.h>

#include "nfs3/nfs3.h"
#include "pmap/pmap.h"

struct config;
struct fs;
struct metrics_http;
struct mount_state;
struct nlm;
struct ops;
struct rpccb;
struct svc;

struct daemon {
	struct config *cfg;
	unsigned rings;
	struct fs *fs;
	struct svc *svc;
	struct nfs3_stats nfs3;       /* the NFS program's state */
	struct mount_state *mount;    /* MOUNT's */
	struct nlm *nlm;              /* the lock manager, NULL when [lock] port = 0 */
	struct rpccb *cb;             /* its callback engine (the lock manager owns it) */
	enum pmap_mode pmap_mode;     /* who answers port 111 */
	struct pmap_reg *pmap;        /* ours, when it is us (PMAP_OWN); else NULL */
	struct ops *ops;
	struct metrics_http *mh;      /* the Prometheus endpoint, when [metrics] listen is set */
};

struct daemon_opts {
	const uint8_t *fh_key;        /* 16 bytes; NULL: state_dir/fh.key */
	unsigned fh_cache_max;        /* handles per ring; 0: from RLIMIT_NOFILE */
};

/* Every layer of cfg's daemon, nothing running yet. 0, or -1 with a log line (daemon_free()
 * then lets go of what was made). */
int daemon_build(struct daemon *d, struct config *cfg, const struct daemon_opts *o);
/* Listen as configured, start the rings and the metrics endpoint, register with the host's
 * rpcbind when that is the mode, and notify the clients that held locks. 0 or -1 (logged;
 * nothing is left running). */
int daemon_start(struct daemon *d);
/* Stop: unregister, stop the endpoint, answer what is in flight and stop the rings (their
 * handles close, writing what the cache held), then make the exports durable. 0, or -1 when a
 * sync failed. */
int daemon_stop(struct daemon *d);
void daemon_free(struct daemon *d);

#endif
