/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "ops/metrics.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "ops/metrics_int.h"
#include "ops/ops_int.h"
#include "xdr/mount3_prot.h"
#include "xdr/nfs3_prot.h"
#include "xdr/nlm_prot.h"

/* RFC 1813's procedure names, as Prometheus labels take them. */
static const char *const nfs_names[MET_NFS_PROCS] = {
	"null", "getattr", "setattr", "lookup", "access", "readlink", "read", "write", "create",
	"mkdir", "symlink", "mknod", "remove", "rmdir", "rename", "link", "readdir", "readdirplus",
	"fsstat", "fsinfo", "pathconf", "commit"};
static const char *const mount_names[MET_MOUNT_PROCS] = {
	"null", "mnt", "dump", "umnt", "umntall", "export"};
/* The lock manager's, versions 1, 3 and 4 alike (NULL: no such procedure). */
static const char *const nlm_names[MET_NLM_PROCS] = {
	"null", "test", "lock", "cancel", "unlock", "granted", "test_msg", "lock_msg",
	"cancel_msg", "unlock_msg", "granted_msg", "test_res", "lock_res", "cancel_res",
	"unlock_res", "granted_res", NULL, NULL, NULL, NULL, "share", "unshare", "nm_lock",
	"free_all"};

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

void metrics_record(struct ring_metrics *m, enum met_prog prog, uint32_t proc, int64_t status,
		    uint64_t ns)
{
	struct met_proc *p;
	if (prog == MET_NFS && proc < MET_NFS_PROCS)
		p = &m->nfs[proc];
	else if (prog == MET_MOUNT && proc < MET_MOUNT_PROCS)
		p = &m->mount[proc];
	else if (prog == MET_NLM && proc < MET_NLM_PROCS)
		p = &m->nlm[proc];
	else
		return;
	unsigned b = 0;
	for (uint64_t us = (ns + 999) / 1000; b < MET_LAT_BUCKETS && us > (1ull << b); b++)
		;
	met_bump(&p->calls, 1);
	met_bump(&p->lat[b], 1);
	met_bump(&p->lat_sum_ns, ns);
	met_bump(&p->status[slot_of(status < 0 ? 0 : status)], 1);
}

void metrics_call_begin(void *ring_metrics, uint32_t prog, uint32_t proc)
{
	struct ring_metrics *m = ring_metrics;
	(void)prog, (void)proc;
	met_bump(&m->begun, 1);
}

void metrics_call_handled(void *ring_metrics, const struct svc_call *rq, const void *res)
{
	metrics_export_count(ring_metrics, rq, res);
}

void metrics_call_done(void *ring_metrics, uint32_t prog, uint32_t proc, int64_t status,
		       uint64_t ns)
{
	struct ring_metrics *m = ring_metrics;
	/* release: a reader that sees this end sees its begin too (the gauge never dips below 0) */
	atomic_store_explicit(&m->ended, met_load(&m->ended) + 1, memory_order_release);
	if (prog == NFS_PROGRAM)
		metrics_record(m, MET_NFS, proc, status, ns);
	else if (prog == MOUNT_PROGRAM)
		metrics_record(m, MET_MOUNT, proc, status, ns);
	else if (prog == NLM_PROG)
		metrics_record(m, MET_NLM, proc, -1, ns);   /* nlm4_stats is no nfsstat3 */
}

/* ---- rendering ---- */

void met_family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void met_label_value(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

/* One procedure's figures summed over the rings. */
struct met_sum {
	uint64_t calls, lat[MET_LAT_BUCKETS + 1], lat_sum_ns, status[MET_STATUS_SLOTS];
};

static struct met_proc *proc_of(struct ring_metrics *m, enum met_prog prog, unsigned proc)
{
	return prog == MET_NFS ? &m->nfs[proc] : prog == MET_MOUNT ? &m->mount[proc] : &m->nlm[proc];
}

static void sum_proc(struct ops *o, enum met_prog prog, unsigned proc, struct met_sum *s)
{
	*s = (struct met_sum){0};
	for (unsigned r = 0; r < o->nrings; r++) {
		struct ring_metrics *m = o->rings[r];
		if (!m)
			continue;
		struct met_proc *p = proc_of(m, prog, proc);
		s->calls += met_load(&p->calls);
		s->lat_sum_ns += met_load(&p->lat_sum_ns);
		for (unsigned i = 0; i <= MET_LAT_BUCKETS; i++)
			s->lat[i] += met_load(&p->lat[i]);
		for (unsigned i = 0; i < MET_STATUS_SLOTS; i++)
			s->status[i] += met_load(&p->status[i]);
	}
}

struct prog_view {
	enum met_prog prog;
	const char *label;
	const char *const *names;
	unsigned n;
	const char *status_prefix;
};

#define NPROGS 3
static const struct prog_view progs[NPROGS] = {
	{MET_NFS, "nfs", nfs_names, MET_NFS_PROCS, "NFS3ERR_"},
	{MET_MOUNT, "mount", mount_names, MET_MOUNT_PROCS, "MNT3ERR_"},
	{MET_NLM, "nlm", nlm_names, MET_NLM_PROCS, ""},
};

/* Every procedure's figures, summed over the rings once per rendering: sums[g][p]; shown[g]:
 * program g is rendered (the lock manager's only when it runs). */
struct met_sums {
	struct met_sum s[NPROGS][MET_PROCS_MAX];
	bool shown[NPROGS];
};

/* The procedures rendered: those of the programs shown that exist. */
#define FOR_EACH_PROC(sums, g, p)                                                            \
	for (size_t g = 0; g < NPROGS; g++)                                                  \
		for (unsigned p = 0; (sums)->shown[g] && p < progs[g].n; p++)                \
			if (progs[g].names[p])

static void render_requests(const struct met_sums *sums, FILE *f)
{
	met_family(f, "nfsd_uc_requests_total", "counter",
		   "RPC calls answered, per program (nfs, mount, nlm) and procedure.");
	FOR_EACH_PROC(sums, g, p)
		fprintf(f, "nfsd_uc_requests_total{program=\"%s\",procedure=\"%s\"} %llu\n",
			progs[g].label, progs[g].names[p], (unsigned long long)sums->s[g][p].calls);
}

static void render_errors(const struct met_sums *sums, FILE *f)
{
	met_family(f, "nfsd_uc_errors_total", "counter",
		   "NFS and MOUNT replies with a status other than OK, per program, procedure and "
		   "status (only statuses seen are listed).");
	FOR_EACH_PROC(sums, g, p) {
		const struct met_sum *s = &sums->s[g][p];
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

static void render_latency_one(FILE *f, const char *pl, const char *pn, const struct met_sum *s)
{
	uint64_t cum = 0;
	for (unsigned b = 0; b < MET_LAT_BUCKETS; b++) {
		cum += s->lat[b];
		fprintf(f, "nfsd_uc_request_duration_seconds_bucket{program=\"%s\",procedure=\"%s\","
			"le=\"%g\"} %llu\n", pl, pn, (double)(1ull << b) * 1e-6,
			(unsigned long long)cum);
	}
	cum += s->lat[MET_LAT_BUCKETS];
	fprintf(f, "nfsd_uc_request_duration_seconds_bucket{program=\"%s\",procedure=\"%s\","
		"le=\"+Inf\"} %llu\n", pl, pn, (unsigned long long)cum);
	fprintf(f, "nfsd_uc_request_duration_seconds_sum{program=\"%s\",procedure=\"%s\"} %.9f\n",
		pl, pn, (double)s->lat_sum_ns * 1e-9);
	fprintf(f, "nfsd_uc_request_duration_seconds_count{program=\"%s\",procedure=\"%s\"} %llu\n",
		pl, pn, (unsigned long long)cum);
}

static void render_latency(const struct met_sums *sums, FILE *f)
{
	met_family(f, "nfsd_uc_request_duration_seconds", "histogram",
		   "Time from a call's decoded arguments to its encoded reply, per program and "
		   "procedure.");
	FOR_EACH_PROC(sums, g, p)
		render_latency_one(f, progs[g].label, progs[g].names[p], &sums->s[g][p]);
}

/* Calls decoded and not yet answered, over the rings. Each ring's end is read before its begin,
 * and with acquire: the begin of every end seen is seen too. */
static void render_in_flight(struct ops *o, FILE *f)
{
	uint64_t n = 0;
	for (unsigned r = 0; r < o->nrings; r++) {
		struct ring_metrics *m = o->rings[r];
		if (!m)
			continue;
		uint64_t ended = atomic_load_explicit(&m->ended, memory_order_acquire);
		uint64_t begun = met_load(&m->begun);
		n += begun > ended ? begun - ended : 0;
	}
	met_family(f, "nfsd_uc_requests_in_flight", "gauge",
		   "RPC calls of any program decoded and not yet answered (a scrape through "
		   "nfsd-uc-stat counts itself).");
	fprintf(f, "nfsd_uc_requests_in_flight %llu\n", (unsigned long long)n);
}

static int render_procedures(struct ops *o, FILE *f)
{
	struct met_sums *sums = calloc(1, sizeof *sums);
	if (!sums)
		return -ENOMEM;
	for (size_t g = 0; g < NPROGS; g++)
		sums->shown[g] = progs[g].prog != MET_NLM || o->src.nlm;
	FOR_EACH_PROC(sums, g, p)
		sum_proc(o, progs[g].prog, p, &sums->s[g][p]);
	render_requests(sums, f);
	render_errors(sums, f);
	render_latency(sums, f);
	free(sums);
	render_in_flight(o, f);
	return 0;
}

int metrics_render(struct ops *o, char **out, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	if (!f)
		return -ENOMEM;
	int rc = render_procedures(o, f);
	if (rc == 0) {
		metrics_render_exports(o, f);
		rc = metrics_render_flat(o, f);
		metrics_render_process(f);
	}
	if (fclose(f) != 0 || !buf || rc < 0) {
		free(buf);
		return -ENOMEM;
	}
	*out = buf;
	*len = n;
	return 0;
}
