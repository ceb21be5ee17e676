/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfs-interleave: the interleaved-record workload of the seeds (shared/seeds/000, 002) driven over
 * NFSv3, then every byte read back and checked.
 *
 * Record i covers [i*R, (i+1)*R); writer t of N writes records t, t+N, t+2N, ... over its own TCP
 * connection, keeping up to --qd WRITEs in flight. With a record size that is not a multiple of
 * the file system block, every block at a record boundary is shared by two WRITEs from two
 * connections that arrive in any order: what the server's boundary cache is for.
 *
 * The raw RPC layer of libnfs is used (one rpc_context per writer): the high-level
 * nfs_pwrite_async() does not let the caller choose stable_how, and a benchmark of UNSTABLE
 * against FILE_SYNC must choose it. UNSTABLE runs end with COMMIT and compare its verifier with
 * each WRITE's, resending records whose verifier differs, as a real client does.
 *
 * The data is a function of (file offset, run seed): a rewrite with another seed is told apart
 * from stale bytes of an earlier run, and a block landed at the wrong offset is told apart from
 * the right one.
 *
 * Exit status: 0 all verified, 1 a byte read back differs, 2 usage, 3 server or protocol error. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ilcommon.h"
#include "lib/nfsclient.h"

#define EXIT_MISMATCH NB_EXIT_MISMATCH
#define EXIT_USAGE IL_EXIT_USAGE
#define EXIT_SERVER NB_EXIT_SERVER

#define STALL_MS NB_STALL_MS
#define MAX_COMMIT_ROUNDS 8     /* verifier changed this many times in a row: give up */
#define DEFAULT_RSIZE IL_DEFAULT_RSIZE

/* One piece of work: a whole record, or the rest of one after a short WRITE or READ. */
/* Per record: the verifier its UNSTABLE WRITE got, for the check against COMMIT's. */
enum { REC_VERF = 1, REC_MIXED = 2 };
struct recstate {
	char verf[NFS3_WRITEVERFSIZE];
	uint8_t flags;
};

struct run;

struct slot {
	struct writer *w;
	struct piece p;
	bool busy;
	uint8_t *buf;   /* WRITE data: kept until the reply, whatever libnfs does with it */
};

struct writer {
	struct run *r;
	unsigned id;
	struct rpc_context *rpc;
	uint64_t next_rec;      /* next record of this writer's sequence */
	unsigned inflight;
	struct slot *slots;
	struct pieces todo;     /* resends and remainders, before the sequence */
	bool writing_done, commit_sent, finished;
	unsigned commit_rounds;
};

enum phase { RUN_WRITE, RUN_READ, RUN_DONE };

struct run {
	const struct il_opts *o;
	struct nb_fh file;
	struct writer *w;
	uint64_t nrec, size;
	struct recstate *rec;
	enum phase phase;
	bool commit_inflight;   /* COMMIT_ONCE: writer 0's COMMIT */
	unsigned commit_rounds;
	uint64_t next_chunk;
	uint8_t *scratch;       /* expected bytes of one READ reply */
	uint32_t rsize, wtmax;
	uint64_t writes, resends, short_writes, commits, reads, bytes_verified;
	uint64_t acked_bytes;   /* bytes the server said it wrote */
	double t0, tick_t, next_tick;
	uint64_t tick_bytes;
	long long last_progress;
	int failed;             /* exit status of the first failure, 0 while none */
};

/* ---- small helpers ---- */

#define fail(r, status, ...) nb_fail_first(&(r)->failed, (status), __VA_ARGS__)

/* ---- the write phase ---- */

static struct slot *free_slot(struct writer *w)
{
	for (unsigned i = 0; i < w->r->o->qd; i++)
		if (!w->slots[i].busy)
			return &w->slots[i];
	return NULL;
}

static bool next_write_piece(struct writer *w, struct piece *p)
{
	struct run *r = w->r;

	if (w->todo.n > 0) {
		*p = w->todo.v[--w->todo.n];
		return true;
	}
	if (w->next_rec >= r->nrec)
		return false;
	p->off = w->next_rec * r->o->record;
	p->len = (uint32_t)r->o->record;
	w->next_rec += r->o->writers;
	return true;
}

static uint64_t rec_of(const struct run *r, uint64_t off)
{
	return off / r->o->record;
}

/* Remember the verifier an UNSTABLE piece of a record got; a record whose pieces got different
 * verifiers is resent whatever COMMIT says. */
static void note_verf(struct run *r, uint64_t rec, const char *verf)
{
	struct recstate *s = &r->rec[rec];

	if (!(s->flags & REC_VERF)) {
		memcpy(s->verf, verf, NFS3_WRITEVERFSIZE);
		s->flags |= REC_VERF;
	} else if (memcmp(s->verf, verf, NFS3_WRITEVERFSIZE) != 0) {
		s->flags |= REC_MIXED;
	}
}

static void write_reply(struct slot *s, WRITE3res *res)
{
	struct run *r = s->w->r;
	stable_how want = r->o->sync == SYNC_FILE ? FILE_SYNC : UNSTABLE;
	WRITE3resok *ok = &res->WRITE3res_u.resok;

	if (!nb_write_check(&r->failed, res, &s->p, want))
		return;
	if (ok->committed == UNSTABLE)
		note_verf(r, rec_of(r, s->p.off), ok->verf);
	r->acked_bytes += ok->count;
	if (ok->count < s->p.len) {
		r->short_writes++;
		if (nb_pieces_push(&s->w->todo, s->p.off + ok->count, s->p.len - ok->count) < 0)
			fail(r, EXIT_SERVER, "out of memory");
	}
}

static void write_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct slot *s = priv;
	struct run *r = s->w->r;

	s->busy = false;
	s->w->inflight--;
	r->last_progress = nb_now_ms();
	if (status != RPC_STATUS_SUCCESS) {
		fail(r, EXIT_SERVER, "WRITE offset %" PRIu64 ": %s", s->p.off,
		     status == RPC_STATUS_ERROR && data ? (const char *)data : "cancelled");
		return;
	}
	write_reply(s, data);
}

static void send_write(struct writer *w, struct slot *s, const struct piece *p)
{
	struct run *r = w->r;
	WRITE3args args = {
		.file = nb_fh3(&r->file), .offset = p->off, .count = p->len,
		.stable = r->o->sync == SYNC_FILE ? FILE_SYNC : UNSTABLE,
		.data = { .data_len = p->len, .data_val = (char *)s->buf },
	};

	nb_pattern_fill(r->o->seed, p->off, s->buf, p->len);
	s->p = *p;
	s->busy = true;
	if (rpc_nfs3_write_async(w->rpc, write_cb, &args, s) != 0) {
		s->busy = false;
		fail(r, EXIT_SERVER, "WRITE not queued: %s", rpc_get_error(w->rpc));
		return;
	}
	w->inflight++;
	r->writes++;
}

/* Records whose verifier differs from COMMIT's (or among their pieces) go back to their
 * writer's queue. Writer `only` (or every writer when only < 0) is checked. */
static size_t requeue_mismatched(struct run *r, int only, const char *verf)
{
	size_t n = 0;

	for (uint64_t i = only < 0 ? 0 : (uint64_t)only; i < r->nrec;
	     i += only < 0 ? 1 : r->o->writers) {
		struct recstate *s = &r->rec[i];
		struct writer *owner = &r->w[i % r->o->writers];

		if (!(s->flags & REC_VERF))
			continue;   /* FILE_SYNC'd by the server already */
		if (!(s->flags & REC_MIXED) && memcmp(s->verf, verf, NFS3_WRITEVERFSIZE) == 0)
			continue;
		s->flags = 0;
		if (nb_pieces_push(&owner->todo, i * r->o->record, (uint32_t)r->o->record) < 0) {
			fail(r, EXIT_SERVER, "out of memory");
			return n;
		}
		owner->writing_done = false;
		owner->commit_sent = false;
		n++;
	}
	r->resends += n;
	return n;
}

static void commit_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct writer *w = priv;
	struct run *r = w->r;
	bool once = r->o->commit == COMMIT_ONCE;
	COMMIT3res *res = data;

	r->last_progress = nb_now_ms();
	r->commit_inflight = false;
	if (status != RPC_STATUS_SUCCESS) {
		fail(r, EXIT_SERVER, "COMMIT: %s",
		     status == RPC_STATUS_ERROR && data ? (const char *)data : "cancelled");
		return;
	}
	if (res->status != NFS3_OK) {
		fail(r, EXIT_SERVER, "COMMIT: %s", nfsstat3_to_str(res->status));
		return;
	}
	if (requeue_mismatched(r, once ? -1 : (int)w->id, res->COMMIT3res_u.resok.verf) > 0) {
		w->commit_sent = false;     /* commit again once the resends are written */
		return;
	}
	/* once: every writer was done before this COMMIT was sent, and nothing was resent */
	for (unsigned i = 0; i < r->o->writers; i++)
		if (once || i == w->id)
			r->w[i].finished = true;
}

static void send_commit(struct writer *w, unsigned *rounds)
{
	struct run *r = w->r;
	COMMIT3args args = { .file = nb_fh3(&r->file), .offset = 0, .count = 0 };

	if (++*rounds > MAX_COMMIT_ROUNDS) {
		fail(r, EXIT_SERVER, "the write verifier changed at %d COMMITs in a row", MAX_COMMIT_ROUNDS);
		return;
	}
	if (rpc_nfs3_commit_async(w->rpc, commit_cb, &args, w) != 0) {
		fail(r, EXIT_SERVER, "COMMIT not queued: %s", rpc_get_error(w->rpc));
		return;
	}
	w->commit_sent = true;
	r->commit_inflight = true;
	r->commits++;
}

static void pump_writer(struct writer *w)
{
	struct run *r = w->r;
	struct piece p;
	struct slot *s;

	while (!r->failed && (s = free_slot(w)) != NULL && next_write_piece(w, &p))
		send_write(w, s, &p);
	if (w->inflight == 0 && w->todo.n == 0 && w->next_rec >= r->nrec)
		w->writing_done = true;
	if (!w->writing_done || w->finished)
		return;
	if (r->o->sync == SYNC_FILE || r->o->commit == COMMIT_NONE)
		w->finished = true;
	else if (r->o->commit == COMMIT_EACH && !w->commit_sent)
		send_commit(w, &w->commit_rounds);
}

/* COMMIT_ONCE: writer 0 commits the whole file once every writer is done. */
static void pump_commit_once(struct run *r)
{
	for (unsigned i = 0; i < r->o->writers; i++)
		if (!r->w[i].writing_done)
			return;
	if (!r->commit_inflight && !r->w[0].commit_sent)
		send_commit(&r->w[0], &r->commit_rounds);
}

static void pump_write_phase(struct run *r)
{
	bool all = true;

	for (unsigned i = 0; i < r->o->writers; i++)
		pump_writer(&r->w[i]);
	if (r->o->sync == SYNC_UNSTABLE && r->o->commit == COMMIT_ONCE && !r->failed)
		pump_commit_once(r);
	for (unsigned i = 0; i < r->o->writers; i++)
		all = all && r->w[i].finished;
	if (all)
		r->phase = RUN_DONE;
}

/* ---- the read-back phase ---- */

static void read_reply(struct slot *s, READ3res *res)
{
	struct run *r = s->w->r;
	READ3resok *ok = &res->READ3res_u.resok;
	uint32_t n = nb_read_check(&r->failed, res, &s->p);

	if (n == 0)
		return;
	nb_pattern_fill(r->o->seed, s->p.off, r->scratch, n);
	if (memcmp(ok->data.data_val, r->scratch, n) != 0) {
		il_report_mismatch(&r->failed, r->o, s->p.off, (const uint8_t *)ok->data.data_val,
				   r->scratch, n);
		return;
	}
	r->bytes_verified += n;
	if (n < s->p.len && nb_pieces_push(&s->w->todo, s->p.off + n, s->p.len - n) < 0)
		fail(r, EXIT_SERVER, "out of memory");
}

static void read_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct slot *s = priv;
	struct run *r = s->w->r;

	s->busy = false;
	s->w->inflight--;
	r->last_progress = nb_now_ms();
	if (status != RPC_STATUS_SUCCESS) {
		fail(r, EXIT_SERVER, "READ offset %" PRIu64 ": %s", s->p.off,
		     status == RPC_STATUS_ERROR && data ? (const char *)data : "cancelled");
		return;
	}
	read_reply(s, data);
}

static bool next_read_piece(struct run *r, struct writer *w, struct piece *p)
{
	if (w->todo.n > 0) {
		*p = w->todo.v[--w->todo.n];
		return true;
	}
	if (r->next_chunk * r->rsize >= r->size)
		return false;
	p->off = r->next_chunk++ * r->rsize;
	p->len = (uint32_t)(r->size - p->off < r->rsize ? r->size - p->off : r->rsize);
	return true;
}

static void pump_read_phase(struct run *r)
{
	bool busy = false;

	for (unsigned i = 0; i < r->o->writers && !r->failed; i++) {
		struct writer *w = &r->w[i];
		struct slot *s;
		struct piece p;

		while (!r->failed && (s = free_slot(w)) != NULL && next_read_piece(r, w, &p)) {
			READ3args args = { .file = nb_fh3(&r->file), .offset = p.off, .count = p.len };

			s->p = p;
			s->busy = true;
			if (rpc_nfs3_read_async(w->rpc, read_cb, &args, s) != 0) {
				s->busy = false;
				fail(r, EXIT_SERVER, "READ not queued: %s", rpc_get_error(w->rpc));
				break;
			}
			w->inflight++;
			r->reads++;
		}
		busy = busy || w->inflight > 0 || w->todo.n > 0;
	}
	if (!busy && r->next_chunk * r->rsize >= r->size)
		r->phase = RUN_DONE;
}

/* ---- the event loop ---- */

/* --interval: one line per interval of the write phase with the MiB/s the server acknowledged
 * in it, so that a server that slows down once its page cache fills shows it over time.
 * commit=1 marks the intervals when every WRITE was answered and only COMMIT is awaited: no
 * bytes are acknowledged then, yet the server is busy writing back. */
static void progress_tick(struct run *r)
{
	double now = nb_now_s();
	bool committing = true;

	if (r->o->interval <= 0 || r->phase != RUN_WRITE || now < r->next_tick)
		return;
	for (unsigned i = 0; i < r->o->writers; i++)
		committing = committing && r->w[i].writing_done;
	il_print_tick(now - r->t0, r->acked_bytes,
		      (double)(r->acked_bytes - r->tick_bytes) / 1048576.0 / (now - r->tick_t),
		      committing);
	r->tick_bytes = r->acked_bytes;
	r->tick_t = now;
	r->next_tick += r->o->interval;
	if (r->next_tick < now)
		r->next_tick = now + r->o->interval;
}

/* Service every connection until the phase is over. 0, or the failure's exit status. */
static int run_phase(struct run *r, void (*pump)(struct run *))
{
	unsigned n = r->o->writers;
	struct pollfd *pfd = calloc(n, sizeof(*pfd));

	if (pfd == NULL)
		return EXIT_SERVER;
	r->last_progress = nb_now_ms();
	pump(r);
	while (!r->failed && r->phase != RUN_DONE) {
		for (unsigned i = 0; i < n; i++) {
			pfd[i].fd = rpc_get_fd(r->w[i].rpc);
			pfd[i].events = (short)rpc_which_events(r->w[i].rpc);
			pfd[i].revents = 0;
		}
		if (poll(pfd, n, 100) < 0 && errno != EINTR) {
			fail(r, EXIT_SERVER, "poll: %s", strerror(errno));
			break;
		}
		for (unsigned i = 0; i < n && !r->failed; i++) {
			struct rpc_context *rpc = r->w[i].rpc;
			if (rpc_service(rpc, pfd[i].revents) < 0 || rpc_get_fd(rpc) < 0)
				fail(r, EXIT_SERVER, "connection %u lost: %s", i, rpc_get_error(rpc));
		}
		if (!r->failed && nb_now_ms() - r->last_progress > STALL_MS)
			fail(r, EXIT_SERVER, "no reply for %d s", STALL_MS / 1000);
		if (!r->failed)
			pump(r);
		progress_tick(r);
	}
	free(pfd);
	return r->failed;
}

/* ---- set-up and tear-down ---- */

static int writers_open(struct run *r)
{
	const struct il_opts *o = r->o;

	r->w = calloc(o->writers, sizeof(*r->w));
	if (r->w == NULL)
		return -1;
	for (unsigned i = 0; i < o->writers; i++) {
		struct writer *w = &r->w[i];

		w->r = r;
		w->id = i;
		w->next_rec = o->phases == PH_COMMIT ? r->nrec : i;  /* commit-only: nothing to write */
		w->slots = calloc(o->qd, sizeof(*w->slots));
		if (w->slots == NULL)
			return -1;
		for (unsigned k = 0; k < o->qd; k++) {
			w->slots[k].w = w;
			w->slots[k].buf = malloc(o->record);
			if (w->slots[k].buf == NULL)
				return -1;
		}
		w->rpc = nb_connect(o->host, o->nfs_port, NFS_PROGRAM, NFS_V3);
		if (w->rpc == NULL)
			return -1;
	}
	return 0;
}

static void writers_close(struct run *r)
{
	if (r->w == NULL)
		return;
	for (unsigned i = 0; i < r->o->writers; i++) {
		struct writer *w = &r->w[i];

		if (w->rpc != NULL)
			rpc_destroy_context(w->rpc);
		for (unsigned k = 0; w->slots != NULL && k < r->o->qd; k++)
			free(w->slots[k].buf);
		free(w->slots);
		free(w->todo.v);
	}
	free(r->w);
	r->w = NULL;
}

/* Find (or make, with --fresh) the file and learn the transfer sizes. */
static int open_file(struct run *r)
{
	const struct il_opts *o = r->o;
	struct rpc_context *rpc = r->w[0].rpc;
	struct nb_fh root;
	uint32_t rtmax, wtmax;

	if (nb_mount_root(o->host, o->mount_port, o->export, &root) < 0)
		return -1;
	if (o->fresh && (o->phases == PH_BOTH || o->phases == PH_WRITE) ? nb_create_empty(rpc, &root, o->file, &r->file)
					     : nb_lookup(rpc, &root, o->file, &r->file))
		return -1;
	if (nb_fsinfo(rpc, &r->file, &rtmax, &wtmax) < 0)
		return -1;
	r->rsize = o->rsize ? o->rsize : DEFAULT_RSIZE;
	if (rtmax > 0 && r->rsize > rtmax)
		r->rsize = rtmax;
	if (wtmax > 0 && o->record > wtmax) {
		fprintf(stderr, "nfs-interleave: record %" PRIu64 " is larger than the server's "
			"wtmax %u\n", o->record, wtmax);
		return -1;
	}
	return 0;
}

/* The size the file must have now: exactly ours after --fresh, at least ours otherwise. */
static int check_size(struct run *r)
{
	uint64_t size;

	if (nb_size(r->w[0].rpc, &r->file, &size) < 0)
		return EXIT_SERVER;
	return il_check_size(r->o, size, r->size);
}

/* ---- options ---- */

static void usage(FILE *f)
{
	fputs("usage: nfs-interleave [options] HOST NFS_PORT MOUNT_PORT EXPORT FILE\n"
	      "  -w, --writers N     connections, one writer each (32)\n"
	      "  -q, --qd N          RPCs in flight per connection (4)\n", f);
	il_usage_options(f);
}

/* ---- main ---- */

static void print_result(const struct run *r, double secs)
{
	struct il_result res = {
		.nrec = r->nrec, .size = r->size, .writes = r->writes, .resends = r->resends,
		.short_writes = r->short_writes, .commits = r->commits,
		.verified = r->bytes_verified, .secs = secs,
	};

	il_print_result(r->o, &res);
}

static int run_all(struct run *r)
{
	double t0, secs = 0;
	int rc;

	if (writers_open(r) < 0 || open_file(r) < 0)
		return EXIT_SERVER;
	r->scratch = malloc(r->rsize);
	r->rec = calloc(r->nrec, sizeof(*r->rec));
	if (r->scratch == NULL || r->rec == NULL)
		return EXIT_SERVER;
	if (r->o->phases != PH_VERIFY) {
		t0 = nb_now_s();
		r->t0 = r->tick_t = t0;
		r->next_tick = t0 + r->o->interval;
		r->phase = RUN_WRITE;
		if ((rc = run_phase(r, pump_write_phase)) != 0)
			return rc;
		secs = nb_now_s() - t0;
	}
	if (r->o->phases == PH_COMMIT) {
		printf("commit=ok commits=%" PRIu64 "\n", r->commits);
		return 0;
	}
	if ((rc = check_size(r)) != 0)
		return rc;
	if (r->o->phases != PH_WRITE) {
		r->phase = RUN_READ;
		if ((rc = run_phase(r, pump_read_phase)) != 0)
			return rc;
		if (r->bytes_verified != r->size) {
			fprintf(stderr, "nfs-interleave: verified %" PRIu64 " bytes of %" PRIu64 "\n",
				r->bytes_verified, r->size);
			return EXIT_MISMATCH;
		}
	}
	print_result(r, secs);
	return 0;
}

int main(int argc, char **argv)
{
	struct il_opts o;
	struct run r = { .o = &o };
	int rc;

	nb_keep_heap_warm();

	if (il_parse_args(&o, argc, argv, usage) < 0) {
		usage(stderr);
		return EXIT_USAGE;
	}
	r.nrec = o.records;
	r.size = o.records * o.record;
	rc = run_all(&r);
	writers_close(&r);
	free(r.scratch);
	free(r.rec);
	return rc;
}
