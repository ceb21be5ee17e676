/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfsclient: see nfsclient.h. */
#include "nfsclient.h"

#include <endian.h>
#include <inttypes.h>
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROG program_invocation_short_name

/* glibc hands a block of 128 KiB or more back to the kernel when it is freed (munmap, or a trim
 * of the heap's top), so a generator that allocates a call's buffer per RPC (libnfs encodes each
 * WRITE into a PDU of its own) took page faults and page clearing on every 1 MiB WRITE: half of
 * nfs-workload's CPU in a seqwrite, which on a machine shared with the server is the server's
 * CPU too. Freed memory now stays in the heap, warm for the next call. */
void nb_keep_heap_warm(void)
{
	if (!mallopt(M_MMAP_THRESHOLD, 32 << 20) || !mallopt(M_TRIM_THRESHOLD, 1 << 30))
		fprintf(stderr, "%s: mallopt failed: freed memory may go back to the kernel\n", PROG);
}

long long nb_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

double nb_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int nb_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	default: break;
	}
	if (*end != '\0')
		return -1;
	*out = v;
	return 0;
}

int nb_cmdline(int argc, char **argv, const char *shortopts, const struct option *longopts,
	       nb_opt_fn *opt, void *o, void (*usage)(FILE *), int npos, struct nb_args *out)
{
	int c;

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		if (opt(o, c, optarg) < 0) {
			fprintf(stderr, "%s: bad option %s\n", PROG, argv[optind - 1]);
			return -1;
		}
	}
	if (argc - optind != npos || npos < 4)
		return -1;
	out->host = argv[optind];
	out->nfs_port = atoi(argv[optind + 1]);
	out->mount_port = atoi(argv[optind + 2]);
	out->export = argv[optind + 3];
	out->rest = argv + optind + 4;
	return 0;
}

/* ---- the data pattern ---- */

uint64_t nb_pattern_word(uint64_t seed, uint64_t index)
{
	uint64_t z = seed + (index + 1) * 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Word i of a 4 KiB block is the block's splitmix64 word xor (i + 1) * golden: one hash per
 * block and an add per word. A hash per word cost the client 0.166 CPU s/GiB (0.052 now), a
 * tenth of the machine at 1 MiB WRITEs, where the load generator already set the rate. Still a
 * function of the seed, the block and the word. */
#define PATTERN_GOLDEN 0x9e3779b97f4a7c15ULL
#define PATTERN_BLOCK_WORDS 512u

static uint64_t pattern_word(uint64_t seed, uint64_t index)
{
	return nb_pattern_word(seed, index / PATTERN_BLOCK_WORDS) ^
	       ((index % PATTERN_BLOCK_WORDS) + 1) * PATTERN_GOLDEN;
}

uint8_t nb_pattern_byte(uint64_t seed, uint64_t off)
{
	return (uint8_t)(pattern_word(seed, off >> 3) >> (8 * (off & 7)));
}

/* One block's words from index on (n of them), into buf: the add the compiler vectorizes. */
static void pattern_words(uint64_t seed, uint64_t index, uint8_t *buf, size_t n)
{
	uint64_t base = nb_pattern_word(seed, index / PATTERN_BLOCK_WORDS);
	uint64_t acc = ((index % PATTERN_BLOCK_WORDS) + 1) * PATTERN_GOLDEN;

	for (size_t k = 0; k < n; k++, acc += PATTERN_GOLDEN) {
		uint64_t w = htole64(base ^ acc);

		memcpy(buf + 8 * k, &w, 8);
	}
}

void nb_pattern_fill(uint64_t seed, uint64_t off, uint8_t *buf, size_t len)
{
	size_t i = 0;

	for (; i < len && ((off + i) & 7) != 0; i++)
		buf[i] = nb_pattern_byte(seed, off + i);
	while (i + 8 <= len) {
		uint64_t index = (off + i) >> 3;
		size_t n = PATTERN_BLOCK_WORDS - index % PATTERN_BLOCK_WORDS;

		if (n > (len - i) / 8)
			n = (len - i) / 8;
		pattern_words(seed, index, buf + i, n);
		i += 8 * n;
	}
	for (; i < len; i++)
		buf[i] = nb_pattern_byte(seed, off + i);
}

/* ---- synchronous calls for set-up ---- */

struct sync_call {
	bool done, ok;
	int nfs_status;
	struct nb_fh fh;
	uint64_t a, b;
	char err[256];
};

static bool call_done(struct sync_call *c, int status, void *data)
{
	c->done = true;
	if (status == RPC_STATUS_SUCCESS)
		return true;
	snprintf(c->err, sizeof(c->err), "%s", status == RPC_STATUS_ERROR && data != NULL ?
		 (const char *)data : status == RPC_STATUS_TIMEOUT ? "timed out" : "cancelled");
	return false;
}

void nb_fh_set(struct nb_fh *to, u_int len, const char *data)
{
	to->len = len <= NFS3_FHSIZE ? len : NFS3_FHSIZE;
	memcpy(to->data, data, to->len);
}

nfs_fh3 nb_fh3(struct nb_fh *f)
{
	nfs_fh3 v = { .data = { .data_len = f->len, .data_val = f->data } };
	return v;
}

/* Service rpc until c is done: true when the reply came (c->ok says if it was a success). */
static bool sync_wait(struct rpc_context *rpc, struct sync_call *c, int queued, const char *what)
{
	long long deadline = nb_now_ms() + NB_STALL_MS;

	if (queued != 0) {
		fprintf(stderr, "%s: %s: not queued: %s\n", PROG, what, rpc_get_error(rpc));
		return false;
	}
	while (!c->done) {
		struct pollfd p = { .fd = rpc_get_fd(rpc), .events = (short)rpc_which_events(rpc) };
		int n = poll(&p, 1, 100);

		if ((n < 0 && errno != EINTR) || rpc_service(rpc, n > 0 ? p.revents : 0) < 0 ||
		    rpc_get_fd(rpc) < 0) {
			if (!c->done)
				snprintf(c->err, sizeof(c->err), "connection failed: %s", rpc_get_error(rpc));
			break;
		}
		if (nb_now_ms() > deadline) {
			snprintf(c->err, sizeof(c->err), "no reply in %d ms", NB_STALL_MS);
			break;
		}
	}
	if (c->err[0] != '\0')
		fprintf(stderr, "%s: %s: %s\n", PROG, what, c->err);
	return c->done && c->err[0] == '\0';
}

/* A reply came: false (message printed) when it says the call failed. */
static bool sync_ok(struct sync_call *c, const char *what, const char *name)
{
	if (!c->ok)
		fprintf(stderr, "%s: %s%s%s: %s\n", PROG, what, *name ? " " : "", name,
			nfsstat3_to_str(c->nfs_status));
	return c->ok;
}

static void connect_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct sync_call *c = priv;
	c->ok = call_done(c, status, data);
}

struct rpc_context *nb_connect(const char *host, int port, int prog, int vers)
{
	struct rpc_context *rpc = rpc_init_context();
	struct sync_call c = { 0 };
	char what[64];

	if (rpc == NULL)
		return NULL;
	snprintf(what, sizeof(what), "connect to %s:%d", host, port);
	if (!sync_wait(rpc, &c, rpc_connect_port_async(rpc, host, port, prog, vers, connect_cb, &c),
		       what)) {
		rpc_destroy_context(rpc);
		return NULL;
	}
	return rpc;
}

static void mnt_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct sync_call *c = priv;
	mountres3 *res = data;

	if (!call_done(c, status, data))
		return;
	c->nfs_status = (int)res->fhs_status;
	c->ok = res->fhs_status == MNT3_OK;
	if (c->ok)
		nb_fh_set(&c->fh, res->mountres3_u.mountinfo.fhandle.fhandle3_len,
			  res->mountres3_u.mountinfo.fhandle.fhandle3_val);
}

int nb_mount_root(const char *host, int mount_port, const char *export, struct nb_fh *root)
{
	struct rpc_context *rpc = nb_connect(host, mount_port, MOUNT_PROGRAM, MOUNT_V3);
	struct sync_call c = { 0 };
	int rc = -1;

	if (rpc == NULL)
		return -1;
	if (sync_wait(rpc, &c, rpc_mount3_mnt_async(rpc, mnt_cb, (char *)export, &c), "MNT")) {
		if (c.ok) {
			*root = c.fh;
			rc = 0;
		} else {
			fprintf(stderr, "%s: MNT %s: %s\n", PROG, export, mountstat3_to_str(c.nfs_status));
		}
	}
	rpc_destroy_context(rpc);
	return rc;
}

static void lookup_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct sync_call *c = priv;
	LOOKUP3res *res = data;

	if (!call_done(c, status, data))
		return;
	c->nfs_status = (int)res->status;
	c->ok = res->status == NFS3_OK;
	if (c->ok)
		nb_fh_set(&c->fh, res->LOOKUP3res_u.resok.object.data.data_len,
			  res->LOOKUP3res_u.resok.object.data.data_val);
}

int nb_lookup(struct rpc_context *rpc, struct nb_fh *dir, const char *name, struct nb_fh *out)
{
	struct sync_call c = { 0 };
	LOOKUP3args args = { .what = { .dir = nb_fh3(dir), .name = (char *)name } };

	if (!sync_wait(rpc, &c, rpc_nfs3_lookup_async(rpc, lookup_cb, &args, &c), "LOOKUP") ||
	    !sync_ok(&c, "LOOKUP", name))
		return -1;
	*out = c.fh;
	return 0;
}

/* CREATE and MKDIR replies both carry a post_op_fh3 */
static void new_object(struct sync_call *c, nfsstat3 status, post_op_fh3 *obj)
{
	c->nfs_status = (int)status;
	c->ok = status == NFS3_OK;
	c->a = c->ok && obj->handle_follows;
	if (c->a)
		nb_fh_set(&c->fh, obj->post_op_fh3_u.handle.data.data_len,
			  obj->post_op_fh3_u.handle.data.data_val);
}

static void create_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	CREATE3res *res = data;

	if (call_done(priv, status, data))
		new_object(priv, res->status, &res->CREATE3res_u.resok.obj);
}

static void mkdir_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	MKDIR3res *res = data;

	if (call_done(priv, status, data))
		new_object(priv, res->status, &res->MKDIR3res_u.resok.obj);
}

int nb_create_empty(struct rpc_context *rpc, struct nb_fh *dir, const char *name,
		    struct nb_fh *out)
{
	struct sync_call c = { 0 };
	CREATE3args args = { .where = { .dir = nb_fh3(dir), .name = (char *)name } };
	sattr3 *sa = &args.how.createhow3_u.obj_attributes;

	args.how.mode = UNCHECKED;
	sa->mode.set_it = 1;
	sa->mode.set_mode3_u.mode = 0644;
	sa->size.set_it = 1;
	sa->size.set_size3_u.size = 0;
	if (!sync_wait(rpc, &c, rpc_nfs3_create_async(rpc, create_cb, &args, &c), "CREATE") ||
	    !sync_ok(&c, "CREATE", name))
		return -1;
	if (!c.a)   /* no handle in the reply: ask for it */
		return nb_lookup(rpc, dir, name, out);
	*out = c.fh;
	return 0;
}

int nb_mkdir(struct rpc_context *rpc, struct nb_fh *dir, const char *name, struct nb_fh *out)
{
	struct sync_call c = { 0 };
	MKDIR3args args = { .where = { .dir = nb_fh3(dir), .name = (char *)name } };

	args.attributes.mode.set_it = 1;
	args.attributes.mode.set_mode3_u.mode = 0755;
	if (!sync_wait(rpc, &c, rpc_nfs3_mkdir_async(rpc, mkdir_cb, &args, &c), "MKDIR") ||
	    !sync_ok(&c, "MKDIR", name))
		return -1;
	if (!c.a)
		return nb_lookup(rpc, dir, name, out);
	*out = c.fh;
	return 0;
}

static void setattr_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct sync_call *c = priv;
	SETATTR3res *res = data;

	if (!call_done(c, status, data))
		return;
	c->nfs_status = (int)res->status;
	c->ok = res->status == NFS3_OK;
}

int nb_setattr_owner(struct rpc_context *rpc, struct nb_fh *f, uint32_t uid, uint32_t gid,
		     uint32_t mode)
{
	struct sync_call c = { 0 };
	SETATTR3args args = { .object = nb_fh3(f) };
	sattr3 *sa = &args.new_attributes;

	sa->uid.set_it = 1;
	sa->uid.set_uid3_u.uid = uid;
	sa->gid.set_it = 1;
	sa->gid.set_gid3_u.gid = gid;
	sa->mode.set_it = 1;
	sa->mode.set_mode3_u.mode = mode;
	if (!sync_wait(rpc, &c, rpc_nfs3_setattr_async(rpc, setattr_cb, &args, &c), "SETATTR") ||
	    !sync_ok(&c, "SETATTR", ""))
		return -1;
	return 0;
}

static void rmdir_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct sync_call *c = priv;
	RMDIR3res *res = data;

	if (!call_done(c, status, data))
		return;
	c->nfs_status = (int)res->status;
	c->ok = res->status == NFS3_OK;
}

int nb_rmdir(struct rpc_context *rpc, struct nb_fh *dir, const char *name)
{
	struct sync_call c = { 0 };
	RMDIR3args args = { .object = { .dir = nb_fh3(dir), .name = (char *)name } };

	if (!sync_wait(rpc, &c, rpc_nfs3_rmdir_async(rpc, rmdir_cb, &args, &c), "RMDIR") ||
	    !sync_ok(&c, "RMDIR", name))
		return -1;
	return 0;
}

static void fsinfo_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct sync_call *c = priv;
	FSINFO3res *res = data;

	if (!call_done(c, status, data))
		return;
	c->nfs_status = (int)res->status;
	c->ok = res->status == NFS3_OK;
	if (c->ok) {
		c->a = res->FSINFO3res_u.resok.rtmax;
		c->b = res->FSINFO3res_u.resok.wtmax;
	}
}

int nb_fsinfo(struct rpc_context *rpc, struct nb_fh *f, uint32_t *rtmax, uint32_t *wtmax)
{
	struct sync_call c = { 0 };
	FSINFO3args args = { .fsroot = nb_fh3(f) };

	if (!sync_wait(rpc, &c, rpc_nfs3_fsinfo_async(rpc, fsinfo_cb, &args, &c), "FSINFO") ||
	    !sync_ok(&c, "FSINFO", ""))
		return -1;
	*rtmax = (uint32_t)c.a;
	*wtmax = (uint32_t)c.b;
	return 0;
}

static void getattr_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct sync_call *c = priv;
	GETATTR3res *res = data;

	if (!call_done(c, status, data))
		return;
	c->nfs_status = (int)res->status;
	c->ok = res->status == NFS3_OK;
	if (c->ok)
		c->a = res->GETATTR3res_u.resok.obj_attributes.size;
}

int nb_size(struct rpc_context *rpc, struct nb_fh *f, uint64_t *size)
{
	struct sync_call c = { 0 };
	GETATTR3args args = { .object = nb_fh3(f) };

	if (!sync_wait(rpc, &c, rpc_nfs3_getattr_async(rpc, getattr_cb, &args, &c), "GETATTR") ||
	    !sync_ok(&c, "GETATTR", ""))
		return -1;
	*size = c.a;
	return 0;
}

int nb_service(struct rpc_context **rpcs, struct pollfd *pfd, unsigned n, int timeout_ms,
	       unsigned *bad)
{
	for (unsigned i = 0; i < n; i++) {
		pfd[i].fd = rpc_get_fd(rpcs[i]);
		pfd[i].events = (short)rpc_which_events(rpcs[i]);
		pfd[i].revents = 0;
	}
	if (poll(pfd, n, timeout_ms) < 0 && errno != EINTR) {
		*bad = 0;
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		if (rpc_service(rpcs[i], pfd[i].revents) < 0 || rpc_get_fd(rpcs[i]) < 0) {
			*bad = i;
			return -1;
		}
	}
	return 0;
}

int nb_pieces_push(struct pieces *q, uint64_t off, uint32_t len)
{
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 16;
		struct piece *v = realloc(q->v, cap * sizeof(*v));
		if (v == NULL)
			return -1;
		q->v = v;
		q->cap = cap;
	}
	q->v[q->n++] = (struct piece){ off, len };
	return 0;
}

void nb_vfail_first(int *failed, int status, const char *fmt, va_list ap)
{
	if (*failed)
		return;
	*failed = status;
	fprintf(stderr, "%s: ", PROG);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void nb_fail_first(int *failed, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	nb_vfail_first(failed, status, fmt, ap);
	va_end(ap);
}

uint32_t nb_write_check(int *failed, WRITE3res *res, const struct piece *p, stable_how want)
{
	WRITE3resok *ok = &res->WRITE3res_u.resok;

	if (res->status != NFS3_OK) {
		nb_fail_first(failed, NB_EXIT_SERVER, "WRITE offset %" PRIu64 " count %u: %s", p->off,
			      p->len, nfsstat3_to_str(res->status));
		return 0;
	}
	if (ok->count == 0 || ok->count > p->len) {
		nb_fail_first(failed, NB_EXIT_SERVER,
			      "WRITE offset %" PRIu64 " count %u: server says it wrote %u", p->off,
			      p->len, ok->count);
		return 0;
	}
	if (ok->committed < want) {
		nb_fail_first(failed, NB_EXIT_SERVER,
			      "WRITE offset %" PRIu64 " asked FILE_SYNC, got committed=%d", p->off,
			      (int)ok->committed);
		return 0;
	}
	return ok->count;
}

uint32_t nb_read_check(int *failed, READ3res *res, const struct piece *p)
{
	READ3resok *ok = &res->READ3res_u.resok;
	uint32_t n = ok->count;

	if (res->status != NFS3_OK) {
		nb_fail_first(failed, NB_EXIT_SERVER, "READ offset %" PRIu64 ": %s", p->off,
			      nfsstat3_to_str(res->status));
		return 0;
	}
	if (ok->data.data_len != n || n > p->len) {
		nb_fail_first(failed, NB_EXIT_SERVER,
			      "READ offset %" PRIu64 ": count %u, %u data bytes, asked %u", p->off, n,
			      ok->data.data_len, p->len);
		return 0;
	}
	if (n == 0)
		nb_fail_first(failed, NB_EXIT_MISMATCH, "READ offset %" PRIu64 ": no data%s: the file "
			      "is short", p->off, ok->eof ? " and eof" : "");
	return n;
}

size_t nb_first_diff(const uint8_t *got, const uint8_t *want, size_t len, bool *zeros_follow)
{
	size_t i = 0, zeros = 0;

	while (got[i] == want[i])
		i++;
	for (size_t j = i; j < len && got[j] == 0; j++)
		zeros++;
	*zeros_follow = zeros >= 8;
	return i;
}
