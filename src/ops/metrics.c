/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "ops/metrics.h"

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "ops/ops_int.h"
#include "ops/stats.h"
#include "xdr/mount3_prot.h"
#include "xdr/nfs3_prot.h"

/* RFC 1813's procedure names, as Prometheus labels take them. */
static const char *const nfs_names[MET_NFS_PROCS] = {
	"null", "getattr", "setattr", "lookup", "access", "readlink", "read", "write", "create",
	"mkdir", "symlink", "mknod", "remove", "rmdir", "rename", "link", "readdir", "readdirplus",
	"fsstat", "fsinfo", "pathconf", "commit"};
static const char *const mount_names[MET_MOUNT_PROCS] = {
	"null", "mnt", "dump", "umnt", "umntall", "export"};

/* Status values and their slots: nfsstat3 (mountstat3's values are a subset). */
static const struct { int64_t value; const char *name; } statuses[] = {
	{0, "OK"}, {1, "PERM"}, {2, "NOENT"}, {5, "IO"}, {6, "NXIO"}, {13, "ACCES"},
	{17, "EXIST"}, {18, "XDEV"}, {19, "NODEV"}, {20, "NOTDIR"}, {21, "ISDIR"}, {22, "INVAL"},
	{27, "FBIG"}, {28, "NOSPC"}, {30, "ROFS"}, {31, "MLINK"}, {63, "NAMETOOLONG"},
	{66, "NOTEMPTY"}, {69, "DQUOT"}, {70, "STALE"}, {71, "REMOTE"}, {10001, "BADHANDLE"},
	{10002, "NOT_SYNC"}, {10003, "BAD_COOKIE"}, {10004, "NOTSUPP"}, {10005, "TOOSMALL"},
	{10006, "SERVERFAULT"}, {10007, "BADTYPE"}, {10008, "JUKEBOX"},
};
#define NSTATUS (sizeof statuses / sizeof statuses[0])
#define SLOT_OTHER (MET_STATUS_SLOTS - 1)
_Static_assert(NSTATUS < MET_STATUS_SLOTS, "a slot per status and one for the rest");

static unsigned slot_of(int64_t status)
{
	for (unsigned i = 0; i < NSTATUS; i++)
		if (statuses[i].value == status)
			return i;
	return SLOT_OTHER;
}

/* Only this ring writes these: a plain load and store, no locked instruction. */
static void bump(_Atomic uint64_t *c, uint64_t by)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + by,
			      memory_order_relaxed);
}

void metrics_record(struct ring_metrics *m, enum met_prog prog, uint32_t proc, int64_t status,
		    uint64_t ns)
{
	struct met_proc *p;
	if (prog == MET_NFS && proc < MET_NFS_PROCS)
		p = &m->nfs[proc];
	else if (prog == MET_MOUNT && proc < MET_MOUNT_PROCS)
		p = &m->mount[proc];
	else
		return;
	unsigned b = 0;
	for (uint64_t us = (ns + 999) / 1000; b < MET_LAT_BUCKETS && us > (1ull << b); b++)
		;
	bump(&p->calls, 1);
	bump(&p->lat[b], 1);
	bump(&p->lat_sum_ns, ns);
	bump(&p->status[slot_of(status < 0 ? 0 : status)], 1);
}

void metrics_call_done(void *ring_metrics, uint32_t prog, uint32_t proc, int64_t status,
		       uint64_t ns)
{
	if (prog == NFS_PROGRAM || prog == MOUNT_PROGRAM)
		metrics_record(ring_metrics, prog == NFS_PROGRAM ? MET_NFS : MET_MOUNT, proc, status,
			       ns);
}

/* ---- rendering ---- */

/* One procedure's figures summed over the rings. */
struct met_sum {
	uint64_t calls, lat[MET_LAT_BUCKETS + 1], lat_sum_ns, status[MET_STATUS_SLOTS];
};

static void sum_proc(struct ops *o, enum met_prog prog, unsigned proc, struct met_sum *s)
{
	*s = (struct met_sum){0};
	for (unsigned r = 0; r < o->nrings; r++) {
		struct ring_metrics *m = o->rings[r];
		if (!m)
			continue;
		struct met_proc *p = prog == MET_NFS ? &m->nfs[proc] : &m->mount[proc];
		s->calls += atomic_load_explicit(&p->calls, memory_order_relaxed);
		s->lat_sum_ns += atomic_load_explicit(&p->lat_sum_ns, memory_order_relaxed);
		for (unsigned i = 0; i <= MET_LAT_BUCKETS; i++)
			s->lat[i] += atomic_load_explicit(&p->lat[i], memory_order_relaxed);
		for (unsigned i = 0; i < MET_STATUS_SLOTS; i++)
			s->status[i] += atomic_load_explicit(&p->status[i], memory_order_relaxed);
	}
}

struct prog_view {
	enum met_prog prog;
	const char *label;
	const char *const *names;
	unsigned n;
	const char *status_prefix;
};

static const struct prog_view progs[] = {
	{MET_NFS, "nfs", nfs_names, MET_NFS_PROCS, "NFS3ERR_"},
	{MET_MOUNT, "mount", mount_names, MET_MOUNT_PROCS, "MNT3ERR_"},
};

/* Every procedure's figures, summed over the rings once per rendering: sums[g][p]. */
typedef struct met_sum met_sums[2][MET_NFS_PROCS];

static void render_requests(met_sums sums, FILE *f)
{
	fputs("# HELP nfsd_uc_requests_total Calls run, per program and procedure.\n"
	      "# TYPE nfsd_uc_requests_total counter\n", f);
	for (size_t g = 0; g < 2; g++)
		for (unsigned p = 0; p < progs[g].n; p++) {
			const struct met_sum *s = &sums[g][p];
			fprintf(f, "nfsd_uc_requests_total{program=\"%s\",procedure=\"%s\"} %llu\n",
				progs[g].label, progs[g].names[p], (unsigned long long)s->calls);
		}
}

static void render_errors(met_sums sums, FILE *f)
{
	fputs("# HELP nfsd_uc_errors_total Replies with a status other than OK, per program, "
	      "procedure and status.\n# TYPE nfsd_uc_errors_total counter\n", f);
	for (size_t g = 0; g < 2; g++)
		for (unsigned p = 0; p < progs[g].n; p++) {
			const struct met_sum *s = &sums[g][p];
			for (unsigned i = 1; i < MET_STATUS_SLOTS; i++) {
				if (!s->status[i])
					continue;
				const char *name = i < NSTATUS ? statuses[i].name : "OTHER";
				fprintf(f, "nfsd_uc_errors_total{program=\"%s\",procedure=\"%s\","
					"status=\"%s%s\"} %llu\n", progs[g].label, progs[g].names[p],
					progs[g].status_prefix, name, (unsigned long long)s->status[i]);
			}
		}
}

static void render_latency(met_sums sums, FILE *f)
{
	fputs("# HELP nfsd_uc_request_duration_seconds Time from a call's decode to its encoded "
	      "reply, per program and procedure.\n"
	      "# TYPE nfsd_uc_request_duration_seconds histogram\n", f);
	for (size_t g = 0; g < 2; g++)
		for (unsigned p = 0; p < progs[g].n; p++) {
			const struct met_sum *s = &sums[g][p];
			const char *pl = progs[g].label, *pn = progs[g].names[p];
			uint64_t cum = 0;
			for (unsigned b = 0; b < MET_LAT_BUCKETS; b++) {
				cum += s->lat[b];
				fprintf(f, "nfsd_uc_request_duration_seconds_bucket{program=\"%s\","
					"procedure=\"%s\",le=\"%g\"} %llu\n", pl, pn,
					(double)(1ull << b) * 1e-6, (unsigned long long)cum);
			}
			cum += s->lat[MET_LAT_BUCKETS];
			fprintf(f, "nfsd_uc_request_duration_seconds_bucket{program=\"%s\",procedure="
				"\"%s\",le=\"+Inf\"} %llu\n", pl, pn, (unsigned long long)cum);
			fprintf(f, "nfsd_uc_request_duration_seconds_sum{program=\"%s\",procedure="
				"\"%s\"} %.9f\n", pl, pn, (double)s->lat_sum_ns * 1e-9);
			fprintf(f, "nfsd_uc_request_duration_seconds_count{program=\"%s\",procedure="
				"\"%s\"} %llu\n", pl, pn, (unsigned long long)cum);
		}
}

/* The server's flat counters (stats.c), each as a family of its own. */
static void emit_flat(void *ctx, const char *name, uint64_t value, bool gauge)
{
	FILE *f = ctx;
	const char *suffix = gauge ? "" : "_total";
	fprintf(f, "# TYPE nfsd_uc_%s%s %s\nnfsd_uc_%s%s %llu\n", name, suffix,
		gauge ? "gauge" : "counter", name, suffix, (unsigned long long)value);
}

int metrics_render(struct ops *o, char **out, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	if (!f)
		return -ENOMEM;
	static_assert(MET_MOUNT_PROCS <= MET_NFS_PROCS, "one row size for both programs");
	met_sums *sums = malloc(sizeof *sums);
	if (!sums) {
		fclose(f);
		free(buf);
		return -ENOMEM;
	}
	for (size_t g = 0; g < 2; g++)
		for (unsigned p = 0; p < progs[g].n; p++)
			sum_proc(o, progs[g].prog, p, &(*sums)[g][p]);
	render_requests(*sums, f);
	render_errors(*sums, f);
	render_latency(*sums, f);
	free(sums);
	stats_collect(o, &(struct stats_sink){emit_flat, f});
	if (fclose(f) != 0 || !buf) {
		free(buf);
		return -ENOMEM;
	}
	*out = buf;
	*len = n;
	return 0;
}
