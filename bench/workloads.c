/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfs-workload: bench/run's workloads besides the interleaved records (nfs-interleave), over
 * NFSv3 with libnfs's raw RPC layer: one rpc_context and TCP connection per writer (-w), each
 * keeping up to -q RPCs in flight.
 *
 *   seqwrite   create (or truncate) NAME and write --size bytes of it in --bs WRITEs (1 MiB) in
 *              ascending order, UNSTABLE then one COMMIT (or FILE_SYNC with --sync file)
 *   seqread    READ NAME's first --size bytes in --bs READs (1 MiB), each one checked; --passes
 *              times over (1), timed as one phase
 *   randwrite  --ops WRITEs of --bs (4 KiB) at random --bs-aligned offsets below --size,
 *              UNSTABLE then one COMMIT; the data is that of --rseed
 *   randread   --ops READs of --bs (4 KiB) at random aligned offsets below --size, each checked
 *   meta       in a new directory NAME: CREATE --files files, LOOKUP each one, READDIRPLUS the
 *              directory --passes times, REMOVE each file, then RMDIR; every step is checked (each
 *              listing holds every name once, the last one after the removals none)
 *   small      in a new directory NAME, --files files of --bs bytes (16K) as `tar x` or `cp -r`
 *              through a Linux client makes them: each file's CREATE, its WRITE (UNSTABLE, or
 *              FILE_SYNC with --sync file) and its COMMIT (what close() waits for) one after the
 *              other, files side by side in the slots (-w 1 -q 1: one tar); then each file READ
 *              back and checked, REMOVEd, and the directory RMDIRed
 *
 * Data: byte x of NAME is the pattern of (--seed, x), except in the blocks a randwrite wrote,
 * which hold the pattern of (--rseed, x). The blocks are drawn from --rseed and --rops again by
 * every later reader that is given the same --rseed, --rops and --rbs, so that seqread checks the
 * whole file after a randwrite. A verifier that changes between a WRITE and the COMMIT (a server
 * restart) fails the run: the bench restarts no server mid-run.
 *
 * Prints one line of key=value words: workload= bytes= seconds= MiB/s= ops= iops= writes= reads=
 * commits= verified= (meta: files= rpcs= seconds= and, per step, <step>_s= and <step>/s=).
 * seconds is the measured phase, the final COMMIT included.
 * Exit status: 0 verified, 1 data or listing differ, 2 usage, 3 server or protocol error. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/nfsloop.h"

#define EXIT_MISMATCH NB_EXIT_MISMATCH
#define EXIT_USAGE 2
#define EXIT_SERVER NB_EXIT_SERVER

#define NAME_FMT "f%07" PRIu64
#define RDP_DIRCOUNT 16384
#define RDP_MAXCOUNT 65536

enum workload { WL_SEQWRITE, WL_SEQREAD, WL_RANDWRITE, WL_RANDREAD, WL_META, WL_SMALL };
static const char *const wl_names[] = { "seqwrite", "seqread", "randwrite", "randread", "meta",
					"small" };

struct opts {
	const char *host, *export, *name;
	int nfs_port, mount_port;
	enum workload wl;
	unsigned writers, qd, passes;
	uint64_t size, bs, ops, files;
	bool file_sync;
	uint64_t seed, rseed, rops, rbs;
	bool seed_set, rseed_set;
};

struct wl {
	struct nl_loop l;       /* first: a connection's l is the workload */
	const struct opts *o;
	struct nb_fh root, file;
	uint32_t wtmax, rtmax;
	uint64_t next_idx, count;       /* ops of the step issued, and to issue */
	uint64_t writes, reads, commits, bytes_acked, bytes_verified;
	/* data: the blocks of the randwrite, and one expected READ reply */
	uint8_t *rmap;
	uint64_t rblocks;
	uint8_t *scratch;
	char verf[NFS3_WRITEVERFSIZE];
	bool verf_set;
	bool commit_done;
	/* meta: the listing */
	struct nb_fh dir;
	uint8_t *seen;
	uint64_t listed;
	cookie3 cookie;
	cookieverf3 cookieverf;
	bool listing, rdp_inflight, rdp_eof;
	/* small: each file's handle, next call and WRITE verifier; files whose next call may go */
	struct nb_fh *fhs;
	uint8_t *phase;
	char (*verfs)[NFS3_WRITEVERFSIZE];
	uint64_t *ready, ready_head, ready_n;
};

/* ---- small helpers ---- */

#define fail(w, status, ...) nb_fail_first(&(w)->l.failed, (status), __VA_ARGS__)

static struct wl *wl_of(const struct nl_conn *c)
{
	return (struct wl *)c->l;
}

static bool bit_get(const uint8_t *map, uint64_t i)
{
	return map[i >> 3] & (1u << (i & 7));
}

static void bit_set(uint8_t *map, uint64_t i)
{
	map[i >> 3] |= (uint8_t)(1u << (i & 7));
}

/* The block the i-th random WRITE writes: drawn from --rseed, so readers draw the same. */
static uint64_t rand_block(uint64_t rseed, uint64_t i, uint64_t nblocks)
{
	return nb_pattern_word(rseed ^ 0x72616e64ULL, i) % nblocks;
}

/* The offset the i-th random READ reads, aligned to bs. */
static uint64_t rand_read_off(const struct opts *o, uint64_t i)
{
	return nb_pattern_word(o->seed ^ 0x72656164ULL, i) % (o->size / o->bs) * o->bs;
}

/* What [off, off+len) must hold: --seed's bytes, --rseed's in the randwrite's blocks. */
static void expected_fill(const struct wl *w, uint64_t off, uint8_t *buf, size_t len)
{
	const struct opts *o = w->o;

	while (len > 0) {
		uint64_t blk = w->rmap ? off / o->rbs : 0;
		size_t n = w->rmap ? (size_t)((blk + 1) * o->rbs - off) : len;
		bool rand = w->rmap && blk < w->rblocks && bit_get(w->rmap, blk);

		if (n > len)
			n = len;
		nb_pattern_fill(rand ? o->rseed : o->seed, off, buf, n);
		off += n;
		buf += n;
		len -= n;
	}
}

/* The step has more to issue: ops left, or a listing's next READDIRPLUS. */
static bool more(struct nl_loop *l)
{
	struct wl *w = (struct wl *)l;

	return w->next_idx < w->count || w->rdp_inflight || (w->listing && !w->rdp_eof) ||
	       w->ready_n > 0;
}

/* Run one step of count ops to its end: 0, or the failure's exit status. */
static int run_step(struct wl *w, const struct nl_step *st, uint64_t count)
{
	w->next_idx = 0;
	w->count = count;
	return nl_run(&w->l, st);
}

/* ---- WRITE and READ ---- */

static bool next_piece(struct nl_conn *c, struct nl_slot *s)
{
	struct wl *w = wl_of(c);

	const struct opts *o = w->o;
	bool seq = o->wl == WL_SEQWRITE || o->wl == WL_SEQREAD;

	if (nl_take_todo(c, s))
		return true;
	if (w->next_idx >= w->count)
		return false;
	if (seq) {
		s->p.off = w->next_idx % ((o->size + o->bs - 1) / o->bs) * o->bs;   /* seqread passes */
		s->p.len = (uint32_t)(o->size - s->p.off < o->bs ? o->size - s->p.off : o->bs);
	} else {
		s->p.off = o->wl == WL_RANDWRITE ? rand_block(o->rseed, w->next_idx, o->size / o->bs) *
			   o->bs : rand_read_off(o, w->next_idx);
		s->p.len = (uint32_t)o->bs;
	}
	w->next_idx++;
	return true;
}

static void write_reply(struct nl_slot *s, WRITE3res *res)
{
	struct wl *w = wl_of(s->c);
	WRITE3resok *ok = &res->WRITE3res_u.resok;

	if (!nb_write_check(&w->l.failed, res, &s->p, w->o->file_sync ? FILE_SYNC : UNSTABLE))
		return;
	if (ok->committed == UNSTABLE) {
		if (!w->verf_set)
			memcpy(w->verf, ok->verf, NFS3_WRITEVERFSIZE);
		else if (memcmp(w->verf, ok->verf, NFS3_WRITEVERFSIZE) != 0)
			fail(w, EXIT_SERVER, "the write verifier changed during the run: "
			     "the server restarted?");
		w->verf_set = true;
	}
	w->bytes_acked += ok->count;
	if (ok->count < s->p.len && nb_pieces_push(&s->c->todo, s->p.off + ok->count,
						s->p.len - ok->count) < 0)
		fail(w, EXIT_SERVER, "out of memory");
}

static void write_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct nl_slot *s = priv;

	if (nl_reply_begin(s, status, data, "WRITE"))
		write_reply(s, data);
}

static int send_write(struct nl_slot *s)
{
	struct wl *w = wl_of(s->c);
	WRITE3args args = {
		.file = nb_fh3(&w->file), .offset = s->p.off, .count = s->p.len,
		.stable = w->o->file_sync ? FILE_SYNC : UNSTABLE,
		.data = { .data_len = s->p.len, .data_val = (char *)s->buf },
	};

	nb_pattern_fill(w->o->wl == WL_RANDWRITE ? w->o->rseed : w->o->seed, s->p.off, s->buf,
			s->p.len);
	w->writes++;
	return rpc_nfs3_write_async(s->c->rpc, write_cb, &args, s);
}

static void report_mismatch(struct wl *w, uint64_t off, const uint8_t *got, size_t len,
			    const uint8_t *want)
{
	bool zeros;
	size_t i = nb_first_diff(got, want, len, &zeros);

	fail(w, EXIT_MISMATCH, "MISMATCH at offset %" PRIu64 ": expected 0x%02x, got 0x%02x%s",
	     off + i, want[i], got[i], zeros ? " (zeros follow: bytes never written?)" : "");
}

static void read_reply(struct nl_slot *s, READ3res *res)
{
	struct wl *w = wl_of(s->c);
	READ3resok *ok = &res->READ3res_u.resok;
	uint32_t n = nb_read_check(&w->l.failed, res, &s->p);

	if (n == 0)
		return;
	expected_fill(w, s->p.off, w->scratch, n);
	if (memcmp(ok->data.data_val, w->scratch, n) != 0) {
		report_mismatch(w, s->p.off, (const uint8_t *)ok->data.data_val, n, w->scratch);
		return;
	}
	w->bytes_verified += n;
	if (n < s->p.len && nb_pieces_push(&s->c->todo, s->p.off + n, s->p.len - n) < 0)
		fail(w, EXIT_SERVER, "out of memory");
}

static void read_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct nl_slot *s = priv;

	if (nl_reply_begin(s, status, data, "READ"))
		read_reply(s, data);
}

static int send_read(struct nl_slot *s)
{
	struct wl *w = wl_of(s->c);
	READ3args args = { .file = nb_fh3(&w->file), .offset = s->p.off, .count = s->p.len };

	w->reads++;
	return rpc_nfs3_read_async(s->c->rpc, read_cb, &args, s);
}

static void commit_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct nl_slot *s = priv;
	struct wl *w = wl_of(s->c);
	COMMIT3res *res = data;

	if (!nl_reply_begin(s, status, data, "COMMIT"))
		return;
	if (res->status != NFS3_OK) {
		fail(w, EXIT_SERVER, "COMMIT: %s", nfsstat3_to_str(res->status));
		return;
	}
	if (w->verf_set && memcmp(w->verf, res->COMMIT3res_u.resok.verf, NFS3_WRITEVERFSIZE) != 0)
		fail(w, EXIT_SERVER, "COMMIT's verifier differs from the WRITEs': the server restarted?");
}

static bool next_commit(struct nl_conn *c, struct nl_slot *s)
{
	struct wl *w = wl_of(c);

	(void)s;
	if (c->idx != 0 || w->next_idx >= w->count)
		return false;
	w->next_idx++;
	return true;
}

static int send_commit(struct nl_slot *s)
{
	struct wl *w = wl_of(s->c);
	COMMIT3args args = { .file = nb_fh3(&w->file), .offset = 0, .count = 0 };

	w->commits++;
	return rpc_nfs3_commit_async(s->c->rpc, commit_cb, &args, s);
}

static const struct nl_step st_write = { "WRITE", next_piece, send_write };
static const struct nl_step st_read = { "READ", next_piece, send_read };
static const struct nl_step st_commit = { "COMMIT", next_commit, send_commit };

/* ---- metadata ---- */

static void name_of(uint64_t i, char *buf, size_t len)
{
	snprintf(buf, len, NAME_FMT, i);
}

static bool next_file(struct nl_conn *c, struct nl_slot *s)
{
	struct wl *w = wl_of(c);

	(void)c;
	if (w->next_idx >= w->count)
		return false;
	s->idx = w->next_idx++;
	return true;
}

static void check_status(struct nl_slot *s, const char *what, nfsstat3 st)
{
	if (st != NFS3_OK)
		fail(wl_of(s->c), EXIT_SERVER, "%s " NAME_FMT ": %s", what, s->idx, nfsstat3_to_str(st));
}

static void create_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	if (nl_reply_begin(priv, status, data, "CREATE"))
		check_status(priv, "CREATE", ((CREATE3res *)data)->status);
}

static int send_create_cb(struct nl_slot *s, rpc_cb cb)
{
	struct wl *w = wl_of(s->c);
	char name[32];
	CREATE3args args = { .where = { .dir = nb_fh3(&w->dir), .name = name } };

	name_of(s->idx, name, sizeof(name));
	args.how.mode = GUARDED;    /* a new directory: a name that exists is an error */
	args.how.createhow3_u.obj_attributes.mode.set_it = 1;
	args.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = 0644;
	return rpc_nfs3_create_async(s->c->rpc, cb, &args, s);
}

static int send_create(struct nl_slot *s)
{
	return send_create_cb(s, create_cb);
}

static void lookup_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct nl_slot *s = priv;
	LOOKUP3res *res = data;
	post_op_attr *a = &res->LOOKUP3res_u.resok.obj_attributes;

	if (!nl_reply_begin(s, status, data, "LOOKUP"))
		return;
	check_status(s, "LOOKUP", res->status);
	if (res->status == NFS3_OK && (!a->attributes_follow ||
				       a->post_op_attr_u.attributes.type != NF3REG ||
				       a->post_op_attr_u.attributes.size != 0))
		fail(wl_of(s->c), EXIT_MISMATCH, "LOOKUP " NAME_FMT ": not an empty regular file", s->idx);
}

static int send_lookup(struct nl_slot *s)
{
	struct wl *w = wl_of(s->c);
	char name[32];
	LOOKUP3args args = { .what = { .dir = nb_fh3(&w->dir), .name = name } };

	name_of(s->idx, name, sizeof(name));
	return rpc_nfs3_lookup_async(s->c->rpc, lookup_cb, &args, s);
}

static void remove_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	if (nl_reply_begin(priv, status, data, "REMOVE"))
		check_status(priv, "REMOVE", ((REMOVE3res *)data)->status);
}

static int send_remove(struct nl_slot *s)
{
	struct wl *w = wl_of(s->c);
	char name[32];
	REMOVE3args args = { .object = { .dir = nb_fh3(&w->dir), .name = name } };

	name_of(s->idx, name, sizeof(name));
	return rpc_nfs3_remove_async(s->c->rpc, remove_cb, &args, s);
}

/* One listed name: each of ours exactly once, nothing else but "." and "..". */
static void listed(struct wl *w, const char *name)
{
	uint64_t i;
	char tail;

	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return;
	if (sscanf(name, "f%" SCNu64 "%c", &i, &tail) != 1 || i >= w->o->files) {
		fail(w, EXIT_MISMATCH, "READDIRPLUS lists \"%s\", which is not ours", name);
		return;
	}
	if (bit_get(w->seen, i)) {
		fail(w, EXIT_MISMATCH, "READDIRPLUS lists \"%s\" twice", name);
		return;
	}
	bit_set(w->seen, i);
	w->listed++;
}

static void readdirplus_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct nl_slot *s = priv;
	struct wl *w = wl_of(s->c);
	READDIRPLUS3res *res = data;
	READDIRPLUS3resok *ok = &res->READDIRPLUS3res_u.resok;

	w->rdp_inflight = false;
	if (!nl_reply_begin(s, status, data, "READDIRPLUS"))
		return;
	if (res->status != NFS3_OK) {
		fail(w, EXIT_SERVER, "READDIRPLUS: %s", nfsstat3_to_str(res->status));
		return;
	}
	memcpy(w->cookieverf, ok->cookieverf, NFS3_COOKIEVERFSIZE);
	for (entryplus3 *e = ok->reply.entries; e != NULL && !w->l.failed; e = e->nextentry) {
		listed(w, e->name);
		w->cookie = e->cookie;
	}
	if (ok->reply.eof)
		w->rdp_eof = true;
	else if (ok->reply.entries == NULL)
		fail(w, EXIT_SERVER, "READDIRPLUS: no entries and no eof");
}

/* A listing is one cookie chain: one RPC at a time, on the first connection. */
static bool next_readdirplus(struct nl_conn *c, struct nl_slot *s)
{
	struct wl *w = wl_of(c);

	(void)s;
	if (c->idx != 0 || w->rdp_inflight || w->rdp_eof)
		return false;
	w->rdp_inflight = true;
	return true;
}

static int send_readdirplus(struct nl_slot *s)
{
	struct wl *w = wl_of(s->c);
	READDIRPLUS3args args = { .dir = nb_fh3(&w->dir), .cookie = w->cookie,
				  .dircount = RDP_DIRCOUNT, .maxcount = RDP_MAXCOUNT };

	memcpy(args.cookieverf, w->cookieverf, NFS3_COOKIEVERFSIZE);
	return rpc_nfs3_readdirplus_async(s->c->rpc, readdirplus_cb, &args, s);
}

static const struct nl_step st_create = { "CREATE", next_file, send_create };
static const struct nl_step st_lookup = { "LOOKUP", next_file, send_lookup };
static const struct nl_step st_remove = { "REMOVE", next_file, send_remove };
static const struct nl_step st_readdirplus = { "READDIRPLUS", next_readdirplus, send_readdirplus };

/* List the directory once: the number of our names it held, or -1. */
static int64_t list_once(struct wl *w)
{
	w->cookie = 0;
	memset(w->cookieverf, 0, NFS3_COOKIEVERFSIZE);
	w->rdp_eof = false;
	w->listed = 0;
	memset(w->seen, 0, (w->o->files + 7) / 8);
	w->listing = true;
	run_step(w, &st_readdirplus, 0);
	w->listing = false;
	if (w->l.failed)
		return -1;
	return (int64_t)w->listed;
}

struct meta_times {
	double create, lookup, list, remove;
};

static int run_meta(struct wl *w, struct meta_times *t)
{
	const struct opts *o = w->o;
	double t0;

	w->seen = calloc((o->files + 7) / 8, 1);
	if (w->seen == NULL || nb_mkdir(w->l.c[0].rpc, &w->root, o->name, &w->dir) < 0)
		return EXIT_SERVER;
	t0 = nb_now_s();
	if (run_step(w, &st_create, o->files) != 0)
		return w->l.failed;
	t->create = nb_now_s() - t0;
	t0 = nb_now_s();
	if (run_step(w, &st_lookup, o->files) != 0)
		return w->l.failed;
	t->lookup = nb_now_s() - t0;
	t0 = nb_now_s();
	for (unsigned p = 0; p < o->passes; p++) {
		int64_t n = list_once(w);

		if (n < 0)
			return w->l.failed;
		if ((uint64_t)n != o->files) {
			fprintf(stderr, "nfs-workload: READDIRPLUS listed %" PRId64 " of %" PRIu64
				" files\n", n, o->files);
			return EXIT_MISMATCH;
		}
	}
	t->list = nb_now_s() - t0;
	t0 = nb_now_s();
	if (run_step(w, &st_remove, o->files) != 0)
		return w->l.failed;
	t->remove = nb_now_s() - t0;
	if (list_once(w) != 0) {
		fprintf(stderr, "nfs-workload: the directory is not empty after the removals\n");
		return w->l.failed ? w->l.failed : EXIT_MISMATCH;
	}
	return nb_rmdir(w->l.c[0].rpc, &w->root, o->name) < 0 ? EXIT_SERVER : 0;
}

/* ---- small files ---- */

enum { SF_CREATE, SF_WRITE, SF_COMMIT, SF_DONE };

static void ready_push(struct wl *w, uint64_t f)
{
	w->ready[(w->ready_head + w->ready_n++) % w->o->files] = f;
}

/* A file whose next call may go (its previous one answered), else a new file. */
static bool next_small(struct nl_conn *c, struct nl_slot *s)
{
	struct wl *w = wl_of(c);

	if (w->ready_n > 0) {
		s->idx = w->ready[w->ready_head];
		w->ready_head = (w->ready_head + 1) % w->o->files;
		w->ready_n--;
		return true;
	}
	if (w->next_idx >= w->count)
		return false;
	s->idx = w->next_idx++;
	w->phase[s->idx] = SF_CREATE;
	return true;
}

static void small_next(struct nl_slot *s, uint8_t phase)
{
	struct wl *w = wl_of(s->c);

	w->phase[s->idx] = phase;
	if (phase != SF_DONE)
		ready_push(w, s->idx);
}

static void small_create_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct nl_slot *s = priv;
	CREATE3res *res = data;
	post_op_fh3 *fh = &res->CREATE3res_u.resok.obj;

	if (!nl_reply_begin(s, status, data, "CREATE"))
		return;
	check_status(s, "CREATE", res->status);
	if (res->status != NFS3_OK)
		return;
	if (!fh->handle_follows) {
		fail(wl_of(s->c), EXIT_SERVER, "CREATE " NAME_FMT ": no handle", s->idx);
		return;
	}
	nb_fh_set(&wl_of(s->c)->fhs[s->idx], fh->post_op_fh3_u.handle.data.data_len,
		  fh->post_op_fh3_u.handle.data.data_val);
	small_next(s, SF_WRITE);
}

static void small_write_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct nl_slot *s = priv;
	struct wl *w = wl_of(s->c);
	WRITE3res *res = data;

	if (!nl_reply_begin(s, status, data, "WRITE"))
		return;
	if (nb_write_check(&w->l.failed, res, &s->p, w->o->file_sync ? FILE_SYNC : UNSTABLE) !=
	    s->p.len) {
		fail(w, EXIT_SERVER, "WRITE " NAME_FMT ": short", s->idx);
		return;
	}
	memcpy(w->verfs[s->idx], res->WRITE3res_u.resok.verf, NFS3_WRITEVERFSIZE);
	w->bytes_acked += s->p.len;
	small_next(s, w->o->file_sync ? SF_DONE : SF_COMMIT);
}

static void small_commit_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct nl_slot *s = priv;
	struct wl *w = wl_of(s->c);
	COMMIT3res *res = data;

	if (!nl_reply_begin(s, status, data, "COMMIT"))
		return;
	check_status(s, "COMMIT", res->status);
	if (res->status == NFS3_OK &&
	    memcmp(w->verfs[s->idx], res->COMMIT3res_u.resok.verf, NFS3_WRITEVERFSIZE) != 0)
		fail(w, EXIT_SERVER, "COMMIT " NAME_FMT ": its verifier differs from the WRITE's",
		     s->idx);
	small_next(s, SF_DONE);
}

static int send_small(struct nl_slot *s)
{
	struct wl *w = wl_of(s->c);
	struct nb_fh *fh = &w->fhs[s->idx];

	switch (w->phase[s->idx]) {
	case SF_CREATE:
		return send_create_cb(s, small_create_cb);
	case SF_WRITE: {
		WRITE3args args = {
			.file = nb_fh3(fh), .offset = 0, .count = (count3)w->o->bs,
			.stable = w->o->file_sync ? FILE_SYNC : UNSTABLE,
			.data = { .data_len = (u_int)w->o->bs, .data_val = (char *)s->buf },
		};
		s->p = (struct piece){ .off = 0, .len = (uint32_t)w->o->bs };
		nb_pattern_fill(w->o->seed + s->idx, 0, s->buf, w->o->bs);
		w->writes++;
		return rpc_nfs3_write_async(s->c->rpc, small_write_cb, &args, s);
	}
	default: {
		COMMIT3args args = { .file = nb_fh3(fh), .offset = 0, .count = 0 };
		w->commits++;
		return rpc_nfs3_commit_async(s->c->rpc, small_commit_cb, &args, s);
	}
	}
}

static void small_read_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct nl_slot *s = priv;
	struct wl *w = wl_of(s->c);
	READ3res *res = data;

	if (!nl_reply_begin(s, status, data, "READ"))
		return;
	s->p = (struct piece){ .off = 0, .len = (uint32_t)w->o->bs };
	uint32_t n = nb_read_check(&w->l.failed, res, &s->p);
	if (n == 0)
		return;
	if (n != w->o->bs) {
		fail(w, EXIT_MISMATCH, "READ " NAME_FMT ": %u bytes of %" PRIu64, s->idx, n,
		     w->o->bs);
		return;
	}
	nb_pattern_fill(w->o->seed + s->idx, 0, w->scratch, n);
	if (memcmp(res->READ3res_u.resok.data.data_val, w->scratch, n) != 0)
		fail(w, EXIT_MISMATCH, "READ " NAME_FMT ": the data differs", s->idx);
	else
		w->bytes_verified += n;
}

static int send_small_read(struct nl_slot *s)
{
	struct wl *w = wl_of(s->c);
	READ3args args = { .file = nb_fh3(&w->fhs[s->idx]), .offset = 0, .count = (count3)w->o->bs };

	w->reads++;
	return rpc_nfs3_read_async(s->c->rpc, small_read_cb, &args, s);
}

static const struct nl_step st_small = { "CREATE+WRITE+COMMIT", next_small, send_small };
static const struct nl_step st_small_read = { "READ", next_file, send_small_read };

static int run_small(struct wl *w, double *secs, double *read_secs)
{
	const struct opts *o = w->o;
	double t0;

	w->fhs = calloc(o->files, sizeof(*w->fhs));
	w->phase = calloc(o->files, 1);
	w->verfs = calloc(o->files, sizeof(*w->verfs));
	w->ready = calloc(o->files, sizeof(*w->ready));
	w->scratch = malloc(o->bs);
	if (!w->fhs || !w->phase || !w->verfs || !w->ready || !w->scratch ||
	    nb_mkdir(w->l.c[0].rpc, &w->root, o->name, &w->dir) < 0)
		return EXIT_SERVER;
	t0 = nb_now_s();
	if (run_step(w, &st_small, o->files) != 0)
		return w->l.failed;
	*secs = nb_now_s() - t0;
	t0 = nb_now_s();
	if (run_step(w, &st_small_read, o->files) != 0)
		return w->l.failed;
	*read_secs = nb_now_s() - t0;
	if (run_step(w, &st_remove, o->files) != 0)
		return w->l.failed;
	return nb_rmdir(w->l.c[0].rpc, &w->root, o->name) < 0 ? EXIT_SERVER : 0;
}

/* ---- set-up ---- */

static int conns_open(struct wl *w)
{
	const struct opts *o = w->o;
	bool writes = o->wl == WL_SEQWRITE || o->wl == WL_RANDWRITE || o->wl == WL_SMALL;

	w->l.more = more;
	if (nl_open(&w->l, o->writers, o->qd, writes ? o->bs : 0) < 0)
		return -1;
	for (unsigned i = 0; i < o->writers; i++) {
		struct nl_conn *c = &w->l.c[i];

		c->rpc = w->l.rpcs[i] = nb_connect(o->host, o->nfs_port, NFS_PROGRAM, NFS_V3);
		if (c->rpc == NULL)
			return -1;
	}
	return 0;
}

/* The blocks a randwrite of --rseed/--rops/--rbs wrote (nothing without --rseed). */
static int rmap_build(struct wl *w)
{
	const struct opts *o = w->o;

	if (!o->rseed_set || o->rops == 0)
		return 0;
	w->rblocks = o->size / o->rbs;
	w->rmap = calloc((w->rblocks + 7) / 8, 1);
	if (w->rmap == NULL)
		return -1;
	for (uint64_t i = 0; i < o->rops; i++)
		bit_set(w->rmap, rand_block(o->rseed, i, w->rblocks));
	return 0;
}

/* Open (seqwrite: create) the file, check transfer sizes and, for readers, the file's size. */
static int open_file(struct wl *w)
{
	const struct opts *o = w->o;
	struct rpc_context *rpc = w->l.c[0].rpc;
	uint64_t size;

	if (o->wl == WL_SEQWRITE ? nb_create_empty(rpc, &w->root, o->name, &w->file)
				 : nb_lookup(rpc, &w->root, o->name, &w->file))
		return EXIT_SERVER;
	if (nb_fsinfo(rpc, &w->file, &w->rtmax, &w->wtmax) < 0)
		return EXIT_SERVER;
	if ((o->wl == WL_SEQWRITE || o->wl == WL_RANDWRITE) ? o->bs > w->wtmax : o->bs > w->rtmax) {
		fprintf(stderr, "nfs-workload: --bs %" PRIu64 " is over the server's maximum "
			"(rtmax %u, wtmax %u)\n", o->bs, w->rtmax, w->wtmax);
		return EXIT_SERVER;
	}
	if (o->wl == WL_SEQWRITE)
		return 0;
	if (nb_size(rpc, &w->file, &size) < 0)
		return EXIT_SERVER;
	if (size < o->size) {
		fprintf(stderr, "nfs-workload: %s is %" PRIu64 " bytes, --size says %" PRIu64 "\n",
			o->name, size, o->size);
		return EXIT_MISMATCH;
	}
	return 0;
}

static int run_io(struct wl *w, double *secs)
{
	const struct opts *o = w->o;
	bool seq = o->wl == WL_SEQWRITE || o->wl == WL_SEQREAD;
	bool writes = o->wl == WL_SEQWRITE || o->wl == WL_RANDWRITE;
	uint64_t n = seq ? (o->size + o->bs - 1) / o->bs : o->ops;
	int rc;
	double t0;

	if (o->wl == WL_SEQREAD)
		n *= o->passes;

	if ((rc = open_file(w)) != 0)
		return rc;
	if (rmap_build(w) < 0 || (w->scratch = malloc(o->bs)) == NULL)
		return EXIT_SERVER;
	t0 = nb_now_s();
	if ((rc = run_step(w, writes ? &st_write : &st_read, n)) != 0)
		return rc;
	if (writes && !o->file_sync && (rc = run_step(w, &st_commit, 1)) != 0)
		return rc;
	*secs = nb_now_s() - t0;
	return 0;
}

/* ---- options ---- */

static void usage(FILE *f)
{
	fputs("usage: nfs-workload [options] HOST NFS_PORT MOUNT_PORT EXPORT NAME WORKLOAD\n"
	      "WORKLOAD: seqwrite | seqread | randwrite | randread | meta | small (see the source's\n"
	      "          header)\n"
	      "  -w, --writers N   connections (4)\n"
	      "  -q, --qd N        RPCs in flight per connection (8)\n"
	      "      --size SIZE   file size, K/M/G suffixes (1G)\n"
	      "      --bs SIZE     WRITE/READ size (seq*: 1M, rand*: 4K; small: each file, 16K)\n"
	      "      --ops N       rand*: WRITEs or READs (10000)\n"
	      "  -s, --sync MODE   unstable (UNSTABLE + one COMMIT, default) | file (FILE_SYNC)\n"
	      "      --seed N      the file's data seed (required)\n"
	      "      --rseed N     the data seed of the random WRITEs (randwrite: required)\n"
	      "      --rops N      readers: how many random WRITEs were made (default --ops)\n"
	      "      --rbs SIZE    readers: their size (4K)\n"
	      "      --files N     meta, small: files (10000)\n"
	      "      --passes N    meta: READDIRPLUS listings of the full directory (3);\n"
	      "                    seqread: reads of the whole --size (1)\n"
	      "Exit 0 verified, 1 data or listing differ, 2 usage, 3 error.\n", f);
}

enum { OPT_SIZE = 256, OPT_BS, OPT_OPS, OPT_SEED, OPT_RSEED, OPT_ROPS, OPT_RBS, OPT_FILES,
       OPT_PASSES };

static const struct option long_opts[] = {
	{ "writers", required_argument, NULL, 'w' }, { "qd", required_argument, NULL, 'q' },
	{ "size", required_argument, NULL, OPT_SIZE }, { "bs", required_argument, NULL, OPT_BS },
	{ "ops", required_argument, NULL, OPT_OPS }, { "sync", required_argument, NULL, 's' },
	{ "seed", required_argument, NULL, OPT_SEED }, { "rseed", required_argument, NULL, OPT_RSEED },
	{ "rops", required_argument, NULL, OPT_ROPS }, { "rbs", required_argument, NULL, OPT_RBS },
	{ "files", required_argument, NULL, OPT_FILES },
	{ "passes", required_argument, NULL, OPT_PASSES }, { "help", no_argument, NULL, 'h' },
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
	case OPT_SIZE: o->size = v; return v >= 1 ? 0 : -1;
	case OPT_BS: o->bs = v; return v >= 512 && v <= (16u << 20) ? 0 : -1;
	case OPT_OPS: o->ops = v; return v >= 1 ? 0 : -1;
	case 's': o->file_sync = strcmp(arg, "file") == 0;
		return strcmp(arg, "file") == 0 || strcmp(arg, "unstable") == 0 ? 0 : -1;
	case OPT_SEED: o->seed = v; o->seed_set = true; return 0;
	case OPT_RSEED: o->rseed = v; o->rseed_set = true; return 0;
	case OPT_ROPS: o->rops = v; return 0;
	case OPT_RBS: o->rbs = v; return v >= 512 ? 0 : -1;
	case OPT_FILES: o->files = v; return v >= 1 && v <= 100000000 ? 0 : -1;
	case OPT_PASSES: o->passes = (unsigned)v; return v >= 1 && v <= 1000 ? 0 : -1;
	default: return -1;
	}
}

static int parse_workload(struct opts *o, const char *s)
{
	for (size_t i = 0; i < sizeof(wl_names) / sizeof(wl_names[0]); i++) {
		if (strcmp(s, wl_names[i]) == 0) {
			o->wl = (enum workload)i;
			return 0;
		}
	}
	fprintf(stderr, "nfs-workload: unknown workload %s\n", s);
	return -1;
}

static int parse_args(struct opts *o, int argc, char **argv)
{
	struct nb_args a;

	*o = (struct opts){ .writers = 4, .qd = 8, .size = 1u << 30, .ops = 10000,
			    .files = 10000, .rbs = 4096 };
	if (nb_cmdline(argc, argv, "w:q:s:h", long_opts, parse_opt, o, usage, 6, &a) < 0 ||
	    parse_workload(o, a.rest[1]) < 0)
		return -1;
	o->host = a.host;
	o->nfs_port = a.nfs_port;
	o->mount_port = a.mount_port;
	o->export = a.export;
	o->name = a.rest[0];
	if (o->bs == 0)
		o->bs = o->wl == WL_SEQWRITE || o->wl == WL_SEQREAD ? 1u << 20 :
			o->wl == WL_SMALL ? 16384 : 4096;
	if (o->wl == WL_RANDWRITE) {
		o->rops = o->ops;   /* the blocks it writes are the ones readers draw again */
		o->rbs = o->bs;
		if (!o->rseed_set) {
			fputs("nfs-workload: randwrite needs --rseed\n", stderr);
			return -1;
		}
	} else if (o->rseed_set && o->rops == 0) {
		o->rops = o->ops;
	}
	if (o->passes == 0)
		o->passes = o->wl == WL_META ? 3 : 1;
	if (o->wl != WL_META && (!o->seed_set || o->size < o->bs)) {
		fputs("nfs-workload: needs --seed, and --size of at least --bs\n", stderr);
		return -1;
	}
	return o->nfs_port > 0 && o->mount_port > 0 ? 0 : -1;
}

/* ---- main ---- */

static void print_io(const struct wl *w, double secs)
{
	const struct opts *o = w->o;
	bool writes = o->wl == WL_SEQWRITE || o->wl == WL_RANDWRITE;
	uint64_t bytes = writes ? w->bytes_acked : w->bytes_verified;
	uint64_t ops = writes ? w->writes : w->reads;

	printf("workload=%s bytes=%" PRIu64 " seconds=%.3f MiB/s=%.1f ops=%" PRIu64 " iops=%.0f "
	       "writes=%" PRIu64 " reads=%" PRIu64 " commits=%" PRIu64 " verified=%" PRIu64
	       " bs=%" PRIu64 " writers=%u qd=%u sync=%s\n", wl_names[o->wl], bytes, secs,
	       secs > 0 ? (double)bytes / 1048576.0 / secs : 0.0, ops, secs > 0 ? ops / secs : 0.0,
	       w->writes, w->reads, w->commits, w->bytes_verified, o->bs, o->writers, o->qd,
	       writes ? (o->file_sync ? "file" : "unstable") : "-");
}

static void print_meta(const struct wl *w, const struct meta_times *t)
{
	double n = (double)w->o->files;

	printf("workload=meta files=%" PRIu64 " rpcs=%" PRIu64 " seconds=%.3f create_s=%.3f "
	       "lookup_s=%.3f readdirplus_s=%.3f remove_s=%.3f create/s=%.0f lookup/s=%.0f "
	       "readdirplus_entries/s=%.0f remove/s=%.0f passes=%u writers=%u qd=%u\n",
	       w->o->files, w->l.sent, t->create + t->lookup + t->list + t->remove, t->create,
	       t->lookup, t->list, t->remove, n / t->create, n / t->lookup,
	       n * w->o->passes / t->list, n / t->remove, w->o->passes, w->o->writers, w->o->qd);
}

static void print_small(const struct wl *w, double secs, double read_secs)
{
	double n = (double)w->o->files, mib = n * (double)w->o->bs / 1048576.0;

	printf("workload=small files=%" PRIu64 " bs=%" PRIu64 " rpcs=%" PRIu64 " seconds=%.3f "
	       "files/s=%.0f MiB/s=%.1f read_s=%.3f read_MiB/s=%.1f writes=%" PRIu64
	       " commits=%" PRIu64 " verified=%s writers=%u qd=%u\n",
	       w->o->files, w->o->bs, w->l.sent, secs, n / secs, mib / secs, read_secs,
	       mib / read_secs, w->writes, w->commits,
	       w->bytes_verified == w->o->files * w->o->bs ? "yes" : "no", w->o->writers, w->o->qd);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct wl w = { .o = &o };
	struct meta_times t = { 0 };
	double secs = 0, read_secs = 0;
	int rc;

	nb_keep_heap_warm();

	if (parse_args(&o, argc, argv) < 0) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (conns_open(&w) < 0 || nb_mount_root(o.host, o.mount_port, o.export, &w.root) < 0)
		rc = EXIT_SERVER;
	else if (o.wl == WL_META)
		rc = run_meta(&w, &t);
	else if (o.wl == WL_SMALL)
		rc = run_small(&w, &secs, &read_secs);
	else
		rc = run_io(&w, &secs);
	if (rc == 0 && o.wl == WL_META)
		print_meta(&w, &t);
	else if (rc == 0 && o.wl == WL_SMALL)
		print_small(&w, secs, read_secs);
	else if (rc == 0)
		print_io(&w, secs);
	nl_close(&w.l);
	free(w.rmap);
	free(w.scratch);
	free(w.seen);
	free(w.fhs);
	free(w.phase);
	free(w.verfs);
	free(w.ready);
	return rc;
}
