/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Per-procedure figures of the NFS and MOUNT programs: calls, replies by status (nfsstat3,
 * mountstat3) and a latency histogram each, kept per ring (written by that ring alone, no shared
 * line per request) and summed when read; and their rendering, with the server's other counters
 * (stats.c), in Prometheus's text exposition format: the one text both the HTTP endpoint
 * (metrics_http.c) and nfsd-uc-stat (the stats program's METRICS procedure) read. */
#ifndef NFSD_UC_OPS_METRICS_H
#define NFSD_UC_OPS_METRICS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct ops;

#define MET_LAT_BUCKETS 24        /* upper bounds 2^i microseconds, i = 0..23 (1 us .. 8.4 s) */
#define MET_STATUS_SLOTS 32       /* nfsstat3 / mountstat3 values, mapped (metrics.c) */
#define MET_NFS_PROCS 22
#define MET_MOUNT_PROCS 6

struct met_proc {
	_Atomic uint64_t calls;
	_Atomic uint64_t lat[MET_LAT_BUCKETS + 1];   /* the last: longer than every bound */
	_Atomic uint64_t lat_sum_ns;
	_Atomic uint64_t status[MET_STATUS_SLOTS];
};

struct ring_metrics {
	struct met_proc nfs[MET_NFS_PROCS];
	struct met_proc mount[MET_MOUNT_PROCS];
};

enum met_prog { MET_NFS, MET_MOUNT };

/* A call of prog's procedure proc, answered with status (0: OK; -1: no status, as NULL) after
 * ns nanoseconds. On the calling ring, its own counters. */
void metrics_record(struct ring_metrics *m, enum met_prog prog, uint32_t proc, int64_t status,
		    uint64_t ns);
/* The same for any RPC program's call (the rings' observer: svc/svc.h); only the NFS and MOUNT
 * programs are counted. */
void metrics_call_done(void *ring_metrics, uint32_t prog, uint32_t proc, int64_t status,
		       uint64_t ns);

/* Everything, as Prometheus text (exposition format 0.0.4) in a malloc'd buffer (*len bytes,
 * NUL-terminated). 0 or -ENOMEM. Any thread. */
int metrics_render(struct ops *o, char **out, size_t *len);

#endif
