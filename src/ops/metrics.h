/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Per-procedure figures of the NFS, MOUNT and NLM programs: calls, replies by status (nfsstat3,
 * mountstat3) and a latency histogram each; the calls in flight; and per export, its calls and
 * bytes. All kept per ring (written by that ring alone, no shared line per request) and summed
 * when read; and their rendering, with the server's other counters (stats.c) and the process's,
 * in Prometheus's text exposition format: the one text both the HTTP endpoint (metrics_http.c)
 * and nfsd-uc-stat (the stats program's METRICS procedure) read. The families are listed in
 * nfsd-uc-metrics(7). */
#ifndef NFSD_UC_OPS_METRICS_H
#define NFSD_UC_OPS_METRICS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct ops;
struct svc_call;

#define MET_LAT_BUCKETS 24        /* upper bounds 2^i microseconds, i = 0..23 (1 us .. 8.4 s) */
#define MET_STATUS_SLOTS 32       /* nfsstat3 / mountstat3 values, mapped (metrics.c) */
#define MET_NFS_PROCS 22
#define MET_MOUNT_PROCS 6
#define MET_NLM_PROCS 24          /* NLMPROC_NULL .. NLMPROC_FREE_ALL (16-19 unused) */
#define MET_PROCS_MAX MET_NLM_PROCS
/* Exports counted per ring, in all the daemon's life (a reload may bring new ones): an open
 * table keyed by a hash of the path, whose slots are never reused. */
#define MET_EXPORT_SLOTS 256

struct met_proc {
	_Atomic uint64_t calls;
	_Atomic uint64_t lat[MET_LAT_BUCKETS + 1];   /* the last: longer than every bound */
	_Atomic uint64_t lat_sum_ns;
	_Atomic uint64_t status[MET_STATUS_SLOTS];
};

/* One export's figures on one ring. key: a hash of its path (never 0), stored last (release)
 * when the ring takes the slot, and never changed after. */
struct met_export {
	_Atomic uint64_t key;
	_Atomic uint64_t calls, reads, writes, read_bytes, written_bytes;
};

struct ring_metrics {
	struct met_proc nfs[MET_NFS_PROCS];
	struct met_proc mount[MET_MOUNT_PROCS];
	struct met_proc nlm[MET_NLM_PROCS];
	/* calls of any program decoded, and those whose reply is encoded: their difference is in
	 * flight (ended is stored with release, read with acquire, so never ahead of begun) */
	_Atomic uint64_t begun, ended;
	struct met_export exports[MET_EXPORT_SLOTS];
};

enum met_prog { MET_NFS, MET_MOUNT, MET_NLM };

/* A call of prog's procedure proc, answered with status (0: OK; -1: no status, as NULL) after
 * ns nanoseconds. On the calling ring, its own counters. */
void metrics_record(struct ring_metrics *m, enum met_prog prog, uint32_t proc, int64_t status,
		    uint64_t ns);
/* The rings' observer (svc/svc.h): a call decoded, handled (its export's figures), done (its
 * procedure's; only the NFS, MOUNT and NLM programs are counted by procedure). */
void metrics_call_begin(void *ring_metrics, uint32_t prog, uint32_t proc);
void metrics_call_handled(void *ring_metrics, const struct svc_call *rq, const void *res);
void metrics_call_done(void *ring_metrics, uint32_t prog, uint32_t proc, int64_t status,
		       uint64_t ns);

/* Everything, as Prometheus text (exposition format 0.0.4) in a malloc'd buffer (*len bytes,
 * NUL-terminated). 0 or -ENOMEM. Any thread. */
int metrics_render(struct ops *o, char **out, size_t *len);

#endif
