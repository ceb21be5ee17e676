/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the daemon tells its operators: per-procedure metrics of the NFS and MOUNT programs, the
 * counters program (STATS and METRICS, for nfsd-uc-stat), the Prometheus endpoint, and the list
 * of services the portmapper shows (service.h). It reads every layer's counters and owns none
 * but its own. */
#ifndef NFSD_UC_OPS_OPS_H
#define NFSD_UC_OPS_OPS_H

struct config;
struct fs;
struct mount_state;
struct nfs3_stats;
struct nlm;
struct ops;
struct svc;

/* Where the counters come from (nlm NULL: the lock manager is off). */
struct ops_sources {
	const struct config *cfg;
	struct fs *fs;
	struct svc *svc;
	const struct nfs3_stats *nfs3;
	struct mount_state *mount;
	struct nlm *nlm;
};

/* For rings rings. 0 or -1 (out of memory, logged). */
int ops_new(const struct ops_sources *src, unsigned rings, struct ops **out);
/* Watch src->svc's calls for the metrics and serve the counters program there: before the rings
 * start. 0 or -1. */
int ops_attach(struct ops *o);
/* After the rings are gone. NULL is a no-op. */
void ops_free(struct ops *o);

#endif
