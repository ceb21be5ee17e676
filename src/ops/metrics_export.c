/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Per export: each ring counts the NFS calls whose handles resolved to an export, and its READs
 * and WRITEs with their bytes, in an open table of its own keyed by a hash of the export's path:
 * no lock and no line shared with another ring. A slot, once a ring takes it for a path, is that
 * path's for the daemon's life, so a reader never sees a slot change hands. Rendering sums the
 * rings' slots for each export in force now (fs_exports_each): the series are as many as the
 * exports configured, whatever reloads came before, and an export a reload brings back goes on
 * from its old figures. */
#include <stdlib.h>
#include <string.h>

#include "fs/exptable.h"
#include "ops/metrics_int.h"
#include "ops/ops_int.h"
#include "svc/dispatch.h"
#include "xdr/nfs3_prot.h"

_Static_assert((MET_EXPORT_SLOTS & (MET_EXPORT_SLOTS - 1)) == 0, "a power of two");

/* FNV-1a of the path; never 0, which marks a free slot. */
static uint64_t path_key(const char *path)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (const unsigned char *p = (const unsigned char *)path; *p; p++)
		h = (h ^ *p) * 0x100000001b3ull;
	return h ? h : 1;
}

/* key's slot in m: found, or taken when create (by m's own ring only); NULL when absent, or
 * when every slot is taken (that export is then not counted on this ring). */
static struct met_export *slot_find(struct ring_metrics *m, uint64_t key, bool create)
{
	unsigned i = (unsigned)key & (MET_EXPORT_SLOTS - 1);
	for (unsigned n = 0; n < MET_EXPORT_SLOTS; n++, i = (i + 1) & (MET_EXPORT_SLOTS - 1)) {
		struct met_export *e = &m->exports[i];
		uint64_t k = atomic_load_explicit(&e->key, memory_order_acquire);
		if (k == key)
			return e;
		if (k != 0)
			continue;
		if (create)
			atomic_store_explicit(&e->key, key, memory_order_release);
		return create ? e : NULL;
	}
	return NULL;
}

void metrics_export_count(struct ring_metrics *m, const struct svc_call *rq, const void *res)
{
	if (rq->call->prog != NFS_PROGRAM || !rq->fs.exp)
		return;
	struct met_export *e = slot_find(m, path_key(rq->fs.exp->cfg->path), true);
	if (!e)
		return;
	met_bump(&e->calls, 1);
	if (rq->call->proc == NFSPROC3_READ) {
		const READ3res *r = res;
		if (r->status == NFS3_OK) {
			met_bump(&e->reads, 1);
			met_bump(&e->read_bytes, r->READ3res_u.resok.count);
		}
	} else if (rq->call->proc == NFSPROC3_WRITE) {
		const WRITE3res *r = res;
		if (r->status == NFS3_OK) {
			met_bump(&e->writes, 1);
			met_bump(&e->written_bytes, r->WRITE3res_u.resok.count);
		}
	}
}

/* ---- rendering ---- */

/* An export's figures over the rings, in the order of families[] below. */
enum { X_CALLS, X_READS, X_WRITES, X_READ_BYTES, X_WRITTEN_BYTES, X_N };

struct exp_sum {
	char *path;
	uint64_t v[X_N];
};

struct exp_list {
	struct exp_sum *v;
	size_t n, cap;
};

/* Under the exports' lock: only copies the path. */
static void add_path(void *ctx, const char *path)
{
	struct exp_list *l = ctx;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct exp_sum *v = realloc(l->v, cap * sizeof *v);
		if (!v)
			return;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n] = (struct exp_sum){.path = strdup(path)};
	if (l->v[l->n].path)
		l->n++;
}

static void sum_export(struct ops *o, struct exp_sum *s)
{
	uint64_t key = path_key(s->path);
	for (unsigned r = 0; r < o->nrings; r++) {
		struct met_export *e = o->rings[r] ? slot_find(o->rings[r], key, false) : NULL;
		if (!e)
			continue;
		s->v[X_CALLS] += met_load(&e->calls);
		s->v[X_READS] += met_load(&e->reads);
		s->v[X_WRITES] += met_load(&e->writes);
		s->v[X_READ_BYTES] += met_load(&e->read_bytes);
		s->v[X_WRITTEN_BYTES] += met_load(&e->written_bytes);
	}
}

static const struct {
	const char *name, *help;
} families[X_N] = {
	[X_CALLS] = {"nfsd_uc_export_requests_total",
		     "NFS calls whose file handle resolved to the export."},
	[X_READS] = {"nfsd_uc_export_reads_total", "NFS READ calls of the export that succeeded."},
	[X_WRITES] = {"nfsd_uc_export_writes_total",
		      "NFS WRITE calls of the export that succeeded."},
	[X_READ_BYTES] = {"nfsd_uc_export_read_bytes_total",
			  "Bytes read from the export by NFS READs."},
	[X_WRITTEN_BYTES] = {"nfsd_uc_export_written_bytes_total",
			     "Bytes written to the export by NFS WRITEs."},
};

void metrics_render_exports(struct ops *o, FILE *f)
{
	struct exp_list l = {0};
	if (!o->src.fs)
		return;
	fs_exports_each(o->src.fs, add_path, &l);
	for (size_t i = 0; i < l.n; i++)
		sum_export(o, &l.v[i]);
	for (size_t k = 0; k < X_N; k++) {
		met_family(f, families[k].name, "counter", families[k].help);
		for (size_t i = 0; i < l.n; i++) {
			fprintf(f, "%s{export=\"", families[k].name);
			met_label_value(f, l.v[i].path);
			fprintf(f, "\"} %llu\n", (unsigned long long)l.v[i].v[k]);
		}
	}
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i].path);
	free(l.v);
}
