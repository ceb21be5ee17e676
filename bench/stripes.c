/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfs-stripes: bench/run's ds workload, the load one data server (DS) of a pNFS flexfiles
 * cluster takes (issue 38; docs/data-server.md). A flexfiles client writes and reads each DS
 * directly with NFSv3, as the synthetic uid its layout names, one stripe unit per RPC; the
 * metadata server (MDS) made the data file as root and gave it to that uid.
 *
 * -w writers, each one client: its own TCP connection, its own file DIR/s<i>, its own uid and
 * gid (--uid + i), up to -q RPCs in flight. Writer i's file is striped over --stride DSs, this
 * one being DS (i mod stride), and keeps the client's offsets (sparse striping): its k-th unit
 * lies at (k * stride + i mod stride) * --bs, and the rest of the file is holes, the other DSs'
 * units. --stride 1 is one DS alone (the file dense).
 *
 *   write   as the MDS (root, a connection of its own): make DIR if missing, CREATE each file
 *           (UNCHECKED, truncating), SETATTR its owner, group and mode 0640; then the writers
 *           write their --units units each (UNSTABLE, then one COMMIT per file; or FILE_SYNC)
 *   read    READ every unit back, each checked
 *   holes   READ --units stripe units' worth of each file's holes (the first ones, those
 *           before its last unit), each checked to be zeros
 *
 * Data: writer i's byte x is the pattern of (--seed + i, x). The measured phase starts at the
 * first WRITE or READ and ends with the last reply (the COMMITs included); set-up is not in it.
 * Prints one line: workload=ds-<phase> bytes= seconds= MiB/s= writes= reads= commits=
 * verified= writers= qd= bs= stride= units=.
 * Exit status: 0 verified, 1 data differ, 2 usage, 3 server or protocol error. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/nfsloop.h"

enum phase { PH_WRITE, PH_READ, PH_HOLES };
static const char *const phase_names[] = { "write", "read", "holes" };

struct opts {
	const char *host, *export, *dir;
	int nfs_port, mount_port;
	enum phase phase;
	unsigned writers, qd, stride;
	uint64_t units, bs, uid, seed;
	bool file_sync, seed_set;
};

/* A client's own state beside its connection (l.c[idx]). */
struct writer {
	struct run *r;
	unsigned idx, lane;
	struct nb_fh fh;
	uint64_t next, count;   /* units (or hole units) issued, and to issue */
	char verf[NFS3_WRITEVERFSIZE];
	bool verf_set, commit_sent;
};

struct run {
	struct nl_loop l;       /* first: a connection's l is the run */
	const struct opts *o;
	struct writer *w;
	uint8_t *scratch;
	uint64_t writes, reads, commits, bytes_acked, bytes_verified;
};

#define fail(r, status, ...) nb_fail_first(&(r)->l.failed, (status), __VA_ARGS__)

static struct writer *writer_of(const struct nl_conn *c)
{
	return &((struct run *)c->l)->w[c->idx];
}

static uint64_t seed_of(const struct writer *wr)
{
	return wr->r->o->seed + wr->idx;
}

static uint64_t unit_off(const struct writer *wr, uint64_t k)
{
	const struct opts *o = wr->r->o;

	return (k * o->stride + wr->lane) * o->bs;
}

/* The k-th stripe unit of the file that is not this DS's: a hole. */
static uint64_t hole_off(const struct writer *wr, uint64_t k)
{
	const struct opts *o = wr->r->o;
	uint64_t q = k / (o->stride - 1), rem = k % (o->stride - 1);

	return (q * o->stride + (rem < wr->lane ? rem : rem + 1)) * o->bs;
}

/* The hole units before the file's last unit, of which the holes phase reads at most --units. */
static uint64_t holes_count(const struct writer *wr)
{
	const struct opts *o = wr->r->o;
	uint64_t before_last = (o->units - 1) * (o->stride - 1) + wr->lane;

	return before_last < o->units ? before_last : o->units;
}

/* The step has more to issue: a writer with units (or a COMMIT) left. */
static bool more(struct nl_loop *l)
{
	struct run *r = (struct run *)l;

	for (unsigned i = 0; i < r->o->writers; i++)
		if (r->w[i].next < r->w[i].count)
			return true;
	return false;
}

/* ---- WRITE, READ, COMMIT ---- */

static bool next_piece(struct nl_conn *c, struct nl_slot *s)
{
	struct writer *wr = writer_of(c);
	const struct opts *o = wr->r->o;

	if (nl_take_todo(c, s))
		return true;
	if (wr->next >= wr->count)
		return false;
	s->p.off = o->phase == PH_HOLES ? hole_off(wr, wr->next) : unit_off(wr, wr->next);
	s->p.len = (uint32_t)o->bs;
	wr->next++;
	return true;
}

static void write_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct nl_slot *s = priv;
	struct writer *wr = writer_of(s->c);
	struct run *r = wr->r;
	WRITE3res *res = data;
	WRITE3resok *ok = &res->WRITE3res_u.resok;

	if (!nl_reply_begin(s, status, data, "WRITE") ||
	    !nb_write_check(&r->l.failed, res, &s->p, r->o->file_sync ? FILE_SYNC : UNSTABLE))
		return;
	if (ok->committed == UNSTABLE) {
		if (wr->verf_set && memcmp(wr->verf, ok->verf, NFS3_WRITEVERFSIZE) != 0)
			fail(r, NB_EXIT_SERVER, "writer %u: the write verifier changed during the "
			     "run: the server restarted?", wr->idx);
		memcpy(wr->verf, ok->verf, NFS3_WRITEVERFSIZE);
		wr->verf_set = true;
	}
	r->bytes_acked += ok->count;
	if (ok->count < s->p.len &&
	    nb_pieces_push(&s->c->todo, s->p.off + ok->count, s->p.len - ok->count) < 0)
		fail(r, NB_EXIT_SERVER, "out of memory");
}

static int send_write(struct nl_slot *s)
{
	struct writer *wr = writer_of(s->c);
	WRITE3args args = {
		.file = nb_fh3(&wr->fh), .offset = s->p.off, .count = s->p.len,
		.stable = wr->r->o->file_sync ? FILE_SYNC : UNSTABLE,
		.data = { .data_len = s->p.len, .data_val = (char *)s->buf },
	};

	nb_pattern_fill(seed_of(wr), s->p.off, s->buf, s->p.len);
	wr->r->writes++;
	return rpc_nfs3_write_async(s->c->rpc, write_cb, &args, s);
}

static void read_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct nl_slot *s = priv;
	struct writer *wr = writer_of(s->c);
	struct run *r = wr->r;
	READ3res *res = data;
	uint32_t n;
	bool zeros;
	size_t i;

	if (!nl_reply_begin(s, status, data, "READ") ||
	    (n = nb_read_check(&r->l.failed, res, &s->p)) == 0)
		return;
	if (r->o->phase == PH_HOLES)
		memset(r->scratch, 0, n);
	else
		nb_pattern_fill(seed_of(wr), s->p.off, r->scratch, n);
	if (memcmp(res->READ3res_u.resok.data.data_val, r->scratch, n) != 0) {
		i = nb_first_diff((const uint8_t *)res->READ3res_u.resok.data.data_val, r->scratch,
				  n, &zeros);
		fail(r, NB_EXIT_MISMATCH, "writer %u: MISMATCH at offset %" PRIu64 "%s%s", wr->idx,
		     s->p.off + i, r->o->phase == PH_HOLES ? ": a hole is not zeros" : "",
		     zeros ? " (zeros follow: bytes never written?)" : "");
		return;
	}
	r->bytes_verified += n;
	if (n < s->p.len && nb_pieces_push(&s->c->todo, s->p.off + n, s->p.len - n) < 0)
		fail(r, NB_EXIT_SERVER, "out of memory");
}

static int send_read(struct nl_slot *s)
{
	struct writer *wr = writer_of(s->c);
	READ3args args = { .file = nb_fh3(&wr->fh), .offset = s->p.off, .count = s->p.len };

	wr->r->reads++;
	return rpc_nfs3_read_async(s->c->rpc, read_cb, &args, s);
}

static void commit_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct nl_slot *s = priv;
	struct writer *wr = writer_of(s->c);
	COMMIT3res *res = data;

	if (!nl_reply_begin(s, status, data, "COMMIT"))
		return;
	if (res->status != NFS3_OK)
		fail(wr->r, NB_EXIT_SERVER, "writer %u: COMMIT: %s", wr->idx,
		     nfsstat3_to_str(res->status));
	else if (wr->verf_set &&
		 memcmp(wr->verf, res->COMMIT3res_u.resok.verf, NFS3_WRITEVERFSIZE) != 0)
		fail(wr->r, NB_EXIT_SERVER, "writer %u: COMMIT's verifier differs from the "
		     "WRITEs': the server restarted?", wr->idx);
}

static bool next_commit(struct nl_conn *c, struct nl_slot *s)
{
	struct writer *wr = writer_of(c);

	(void)s;
	if (wr->commit_sent)
		return false;
	wr->commit_sent = true;
	return true;
}

static int send_commit(struct nl_slot *s)
{
	struct writer *wr = writer_of(s->c);
	COMMIT3args args = { .file = nb_fh3(&wr->fh), .offset = 0, .count = 0 };

	wr->r->commits++;
	return rpc_nfs3_commit_async(s->c->rpc, commit_cb, &args, s);
}

static const struct nl_step st_write = { "WRITE", next_piece, send_write };
static const struct nl_step st_read = { "READ", next_piece, send_read };
static const struct nl_step st_commit = { "COMMIT", next_commit, send_commit };

/* ---- set-up: the MDS's part, then the clients' connections ---- */

/* As the MDS: DIR's files, made and given to their writers (write), or looked up. */
static int mds_files(struct run *r, struct rpc_context *mds, struct nb_fh *root)
{
	const struct opts *o = r->o;
	struct nb_fh dir;
	uint32_t rtmax, wtmax;
	char name[32];

	if (nb_lookup(mds, root, o->dir, &dir) < 0 &&
	    (o->phase != PH_WRITE || nb_mkdir(mds, root, o->dir, &dir) < 0))
		return -1;
	if (nb_fsinfo(mds, &dir, &rtmax, &wtmax) < 0)
		return -1;
	if (o->bs > (o->phase == PH_WRITE ? wtmax : rtmax)) {
		fprintf(stderr, "nfs-stripes: --bs %" PRIu64 " is over the server's maximum "
			"(rtmax %u, wtmax %u)\n", o->bs, rtmax, wtmax);
		return -1;
	}
	for (unsigned i = 0; i < o->writers; i++) {
		struct nb_fh *fh = &r->w[i].fh;
		uint32_t id = (uint32_t)(o->uid + i);

		snprintf(name, sizeof(name), "s%03u", i);
		if (o->phase != PH_WRITE ? nb_lookup(mds, &dir, name, fh) < 0 :
		    nb_create_empty(mds, &dir, name, fh) < 0 ||
		    nb_setattr_owner(mds, fh, id, id, 0640) < 0)
			return -1;
	}
	return 0;
}

static int writer_open(struct run *r, struct writer *wr, unsigned i)
{
	const struct opts *o = r->o;
	struct nl_conn *c = &r->l.c[i];

	wr->r = r;
	wr->idx = i;
	wr->lane = i % o->stride;
	wr->count = o->phase == PH_HOLES ? holes_count(wr) : o->units;
	c->rpc = r->l.rpcs[i] = nb_connect(o->host, o->nfs_port, NFS_PROGRAM, NFS_V3);
	if (c->rpc == NULL)
		return -1;
	rpc_set_uid(c->rpc, (int)(o->uid + i));     /* AUTH_SYS as the layout's uid */
	rpc_set_gid(c->rpc, (int)(o->uid + i));
	return 0;
}

static int run_open(struct run *r)
{
	const struct opts *o = r->o;
	struct rpc_context *mds;
	struct nb_fh root;
	int rc;

	r->l.more = more;
	r->w = calloc(o->writers, sizeof(*r->w));
	r->scratch = malloc(o->bs);
	if (nl_open(&r->l, o->writers, o->qd, o->phase == PH_WRITE ? o->bs : 0) < 0 ||
	    r->w == NULL || r->scratch == NULL)
		return -1;
	if (nb_mount_root(o->host, o->mount_port, o->export, &root) < 0 ||
	    (mds = nb_connect(o->host, o->nfs_port, NFS_PROGRAM, NFS_V3)) == NULL)
		return -1;
	rc = mds_files(r, mds, &root);
	rpc_destroy_context(mds);
	for (unsigned i = 0; rc == 0 && i < o->writers; i++)
		rc = writer_open(r, &r->w[i], i);
	return rc;
}

static void run_close(struct run *r)
{
	nl_close(&r->l);
	free(r->w);
	free(r->scratch);
}

static int run_phase(struct run *r, double *secs)
{
	const struct opts *o = r->o;
	double t0 = nb_now_s();
	int rc;

	if ((rc = nl_run(&r->l, o->phase == PH_WRITE ? &st_write : &st_read)) != 0)
		return rc;
	if (o->phase == PH_WRITE && !o->file_sync && (rc = nl_run(&r->l, &st_commit)) != 0)
		return rc;
	*secs = nb_now_s() - t0;
	return 0;
}

/* ---- options ---- */

static void usage(FILE *f)
{
	fputs("usage: nfs-stripes [options] HOST NFS_PORT MOUNT_PORT EXPORT DIR PHASE\n"
	      "PHASE: write | read | holes (see the source's header)\n"
	      "  -w, --writers N   clients: a connection, a file and a uid each (32)\n"
	      "  -q, --qd N        RPCs in flight per client (2)\n"
	      "      --units N     stripe units per file (32)\n"
	      "      --bs SIZE     the stripe unit, one RPC (1M)\n"
	      "      --stride N    DSs a file is striped over, sparse (16); 1: dense\n"
	      "      --uid N       the first client's uid and gid (20000)\n"
	      "  -s, --sync MODE   unstable (UNSTABLE + a COMMIT per file, default) | file\n"
	      "      --seed N      the data's seed (required)\n"
	      "Exit 0 verified, 1 data differ, 2 usage, 3 error.\n", f);
}

enum { OPT_UNITS = 256, OPT_BS, OPT_STRIDE, OPT_UID, OPT_SEED };

static const struct option long_opts[] = {
	{ "writers", required_argument, NULL, 'w' }, { "qd", required_argument, NULL, 'q' },
	{ "units", required_argument, NULL, OPT_UNITS }, { "bs", required_argument, NULL, OPT_BS },
	{ "stride", required_argument, NULL, OPT_STRIDE },
	{ "uid", required_argument, NULL, OPT_UID }, { "sync", required_argument, NULL, 's' },
	{ "seed", required_argument, NULL, OPT_SEED }, { "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_opt(void *p, int c, const char *arg)
{
	struct opts *o = p;
	uint64_t v = 0;

	if (c != 's' && nb_parse_size(arg, &v) < 0)
		return -1;
	switch (c) {
	case 'w': o->writers = (unsigned)v; return v >= 1 && v <= 1024 ? 0 : -1;
	case 'q': o->qd = (unsigned)v; return v >= 1 && v <= 256 ? 0 : -1;
	case OPT_UNITS: o->units = v; return v >= 1 && v <= (1u << 24) ? 0 : -1;
	case OPT_BS: o->bs = v; return v >= 4096 && v <= (16u << 20) ? 0 : -1;
	case OPT_STRIDE: o->stride = (unsigned)v; return v >= 1 && v <= 4096 ? 0 : -1;
	case OPT_UID: o->uid = v; return v >= 1 && v < (1ull << 31) - 2048 ? 0 : -1;
	case 's': o->file_sync = strcmp(arg, "file") == 0;
		return strcmp(arg, "file") == 0 || strcmp(arg, "unstable") == 0 ? 0 : -1;
	case OPT_SEED: o->seed = v; o->seed_set = true; return 0;
	default: return -1;
	}
}

static int parse_args(struct opts *o, int argc, char **argv)
{
	struct nb_args a;
	unsigned i;

	*o = (struct opts){ .writers = 32, .qd = 2, .units = 32, .bs = 1u << 20, .stride = 16,
			    .uid = 20000 };
	if (nb_cmdline(argc, argv, "w:q:s:h", long_opts, parse_opt, o, usage, 6, &a) < 0)
		return -1;
	for (i = 0; i < 3 && strcmp(a.rest[1], phase_names[i]) != 0; i++)
		;
	if (i == 3) {
		fprintf(stderr, "nfs-stripes: unknown phase %s\n", a.rest[1]);
		return -1;
	}
	o->host = a.host;
	o->export = a.export;
	o->dir = a.rest[0];
	o->nfs_port = a.nfs_port;
	o->mount_port = a.mount_port;
	o->phase = (enum phase)i;
	if (!o->seed_set || (o->phase == PH_HOLES && o->stride < 2)) {
		fputs("nfs-stripes: needs --seed; holes needs --stride of 2 or more\n", stderr);
		return -1;
	}
	return o->nfs_port > 0 && o->mount_port > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct run r = { .o = &o };
	double secs = 0;
	int rc;

	nb_keep_heap_warm();

	if (parse_args(&o, argc, argv) < 0) {
		usage(stderr);
		return 2;
	}
	rc = run_open(&r) < 0 ? NB_EXIT_SERVER : run_phase(&r, &secs);
	if (rc == 0) {
		uint64_t bytes = o.phase == PH_WRITE ? r.bytes_acked : r.bytes_verified;

		printf("workload=ds-%s bytes=%" PRIu64 " seconds=%.3f MiB/s=%.1f writes=%" PRIu64
		       " reads=%" PRIu64 " commits=%" PRIu64 " verified=%" PRIu64 " writers=%u "
		       "qd=%u bs=%" PRIu64 " stride=%u units=%" PRIu64 "\n", phase_names[o.phase],
		       bytes, secs, secs > 0 ? (double)bytes / 1048576.0 / secs : 0.0, r.writes,
		       r.reads, r.commits, r.bytes_verified, o.writers, o.qd, o.bs, o.stride,
		       o.units);
	}
	run_close(&r);
	return rc;
}
