/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Writes the seed corpus of every harness: real calls of every NFSv3 and MOUNT v3 procedure (and
 * the counters program), of the lock manager (NLM 1, 3, 4 and NSM) and of the portmapper (PMAP 2,
 * RPCBIND 3 and 4), their arguments encoded with the encoders a client uses (rpcgen's,
 * libtirpc's for the portmapper), file handles, export paths and GRANTED cookies as the
 * placeholders of fz_marks.h; and sequences of them (NLM: contention, blocked locks granted and
 * answered each way the fuzzed client host can, cancels, shares, _MSG calls, a client's restart).
 * Usage: mkcorpus OUTDIR; it makes OUTDIR/<target>/ for recmark, rpc_call, nfs3_args,
 * mount_args, dispatch, conn and metrics (HTTP requests). Kept in code rather than in binary
 * files, so a protocol change shows in a diff.
 *
 * This file holds the encoding of calls and the seeds they make for each target, and main(),
 * which runs each program's generators in an order that keeps every seed's xid: NFSv3 and
 * MOUNT in mkcorpus_nfs.c, the lock manager in mkcorpus_lock.c, the portmapper in
 * mkcorpus_pmap.c, the servers' results in mkcorpus_results.c, record-marking streams and HTTP
 * in mkcorpus_streams.c (mkcorpus.h declares them). */
#include "mkcorpus.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fz_xdr.h"
#include "rpc/recmark.h"

static const char *outdir;

char payload[65536];

void put32(struct buf *b, uint32_t v)
{
	uint8_t *p = b->b + b->n;
	p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
	b->n += 4;
}

void put_bytes(struct buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

void put_xdr(struct buf *b, xdrproc_t f, void *obj)
{
	XDR x;
	xdrmem_create(&x, (char *)b->b + b->n, (u_int)(BUF_MAX - b->n), XDR_ENCODE);
	if (!f(&x, obj)) {
		fprintf(stderr, "mkcorpus: encoding failed\n");
		exit(1);
	}
	b->n += xdr_getpos(&x);
	xdr_destroy(&x);
}

void save(const char *target, const char *name, const struct buf *b)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", outdir, target);
	if (mkdir(path, 0755) < 0 && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof path, "%s/%s/%s", outdir, target, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(b->b, 1, b->n, f) != b->n || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/* ---- placeholders ---- */

static uint8_t fh_mark[FZ_NEXP][256][FZ_MARK_FH_LEN];

nfs_fh3 fh(unsigned exp, unsigned obj)
{
	uint8_t *m = fh_mark[exp][obj];
	const uint8_t v[FZ_MARK_FH_LEN] = {FZ_MARK0, 'F', 'Z', FZ_MARK_FH, (uint8_t)exp, (uint8_t)obj, 0, 0};
	memcpy(m, v, sizeof v);
	return (nfs_fh3){{FZ_MARK_FH_LEN, (char *)m}};
}

static char path_mark[FZ_NEXP][64][256];

char *path(unsigned exp, const char *suffix)
{
	static unsigned next;
	char *p = path_mark[exp][next++ % 64];
	p[0] = (char)FZ_MARK0, p[1] = 'F', p[2] = 'Z', p[3] = FZ_MARK_PATH, p[4] = (char)exp;
	snprintf(p + 5, 250, "%s", suffix);
	return p;
}

/* ---- calls ---- */

/* xid, CALL, RPC 2, program, version, procedure, credential, verifier (AUTH_NONE). */
static void put_header(struct buf *b, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
		       enum auth auth)
{
	put32(b, xid), put32(b, 0), put32(b, 2), put32(b, prog), put32(b, vers), put32(b, proc);
	if (auth == AUTH_NOBODY_NONE) {
		put32(b, 0), put32(b, 0);
	} else {
		unsigned ng = auth == AUTH_MANY_GROUPS ? 16 : auth == AUTH_USER ? 2 : 0;
		uint32_t id = auth == AUTH_ROOT ? 0 : 1000;
		put32(b, 1);
		put32(b, 4 * (5 + ng) + 8);            /* stamp, name length, uid, gid, ngids, gids, name */
		put32(b, 0x5eed), put32(b, 8), put_bytes(b, "fuzzhost", 8);
		put32(b, id), put32(b, id), put32(b, ng);
		for (unsigned i = 0; i < ng; i++)
			put32(b, 100 + i);
	}
	put32(b, 0), put32(b, 0);
}

static uint32_t xid = 0x10000;

static void record(struct buf *b, const struct call *c)
{
	put_header(b, xid++, c->prog, c->vers, c->proc, c->auth);
	if (c->enc)
		put_xdr(b, c->enc, c->args);
}

/* The program of fuzz_mount_args (fz_xdr.h) that holds prog's version vers; -1: none. */
static int args_prog(uint32_t prog, uint32_t vers)
{
	if (prog == MOUNT_PROGRAM && vers == MOUNT_V3)
		return FZ_ARGS_MOUNT3;
	if (prog == NLM_PROG)
		return vers == NLM_VERS ? FZ_ARGS_NLM1 : vers == NLM_VERSX ? FZ_ARGS_NLM3 :
		       vers == NLM4_VERS ? FZ_ARGS_NLM4 : -1;
	if (prog == SM_PROG && vers == SM_VERS)
		return FZ_ARGS_NSM1;
	if (prog == PMAPPROG)
		return vers == 2 ? FZ_ARGS_PMAP2 : vers == 3 ? FZ_ARGS_RPCB3 : vers == 4 ? FZ_ARGS_RPCB4 : -1;
	return -1;
}

/* Every target's seed from one call. */
void emit(const struct call *c)
{
	struct buf *rec = calloc(1, sizeof *rec), *b = calloc(1, sizeof *b);
	record(rec, c);
	save("rpc_call", c->name, rec);
	int ap = args_prog(c->prog, c->vers);
	if ((c->prog == NFS_PROGRAM || ap >= 0) && c->proc < FZ_ARGS_RESULT) {
		uint8_t sel[2] = {(uint8_t)ap, (uint8_t)c->proc};
		if (c->prog == NFS_PROGRAM)
			put_bytes(b, sel + 1, 1);
		else
			put_bytes(b, sel, 2);
		if (c->enc)
			put_xdr(b, c->enc, c->args);
		save(c->prog == NFS_PROGRAM ? "nfs3_args" : "mount_args", c->name, b);
	}
	/* dispatch: the lock manager's and the portmapper's calls of odd xids come over UDP */
	bool udp = (c->prog == NLM_PROG || c->prog == SM_PROG || c->prog == PMAPPROG) &&
		   (xid - 1) % 2;
	b->n = 0;
	put32(b, (uint32_t)rec->n | (udp ? RECMARK_LAST : 0));
	put_bytes(b, rec->b, rec->n);
	save("dispatch", c->name, b);
	b->b[0] |= 0x80;
	save("conn", c->name, b);
	free(rec);
	free(b);
}

/* Several calls: for dispatch one input of records in a row (record i over UDP when bit i of
 * udp is set, else TCP), for conn one stream, with every record cut in two fragments when split
 * is set. */
void emit_seq(const char *name, const struct call *cs, size_t n, bool split, uint32_t udp)
{
	struct buf *rec = calloc(1, sizeof *rec), *d = calloc(1, sizeof *d), *s = calloc(1, sizeof *s);
	for (size_t i = 0; i < n; i++) {
		rec->n = 0;
		record(rec, &cs[i]);
		put32(d, (uint32_t)rec->n | (udp >> i & 1 ? RECMARK_LAST : 0));
		put_bytes(d, rec->b, rec->n);
		size_t cut = split ? rec->n / 3 : 0;
		if (cut) {
			put32(s, (uint32_t)cut);
			put_bytes(s, rec->b, cut);
		}
		put32(s, (uint32_t)(rec->n - cut) | RECMARK_LAST);
		put_bytes(s, rec->b + cut, rec->n - cut);
	}
	save("dispatch", name, d);
	save("conn", name, s);
	free(rec);
	free(d);
	free(s);
}

/* fuzz_gss: a window-size byte, the credential's length, the credential, sequence numbers. */
static void gss_seed(const char *name, uint8_t win, uint32_t proc, uint32_t svc, const char *handle)
{
	static struct buf b;
	size_t hl = strlen(handle), clen = 20 + ((hl + 3) & ~(size_t)3);
	b.n = 0;
	uint8_t head[3] = {win, (uint8_t)(clen >> 8), (uint8_t)clen};
	put_bytes(&b, head, 3);
	put32(&b, 1), put32(&b, proc), put32(&b, 5), put32(&b, svc), put32(&b, (uint32_t)hl);
	put_bytes(&b, handle, hl);
	static const uint8_t pad[3];
	put_bytes(&b, pad, clen - 20 - hl);
	static const uint8_t seqs[] = {0, 1, 0, 2, 0, 2, 0, 9, 0, 3, 1, 0, 0, 4, 0xff, 0, 0, 200};
	put_bytes(&b, seqs, sizeof seqs);
	save("gss", name, &b);
}

static void gss_seeds(void)
{
	gss_seed("init", 3, 1, 1, "");
	gss_seed("data-integ", 4, 0, 2, "ctx01");
	gss_seed("data-priv", 10, 0, 3, "0123456789abcdef");
	gss_seed("destroy", 0, 3, 1, "h");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mkcorpus OUTDIR\n");
		return 2;
	}
	outdir = argv[1];
	if (mkdir(outdir, 0755) < 0 && errno != EEXIST) {
		perror(outdir);
		return 1;
	}
	for (size_t i = 0; i < sizeof payload; i++)
		payload[i] = (char)('A' + i % 23);
	nfs3_calls();
	mount_calls();
	lock_calls();
	pmap_calls();
	lock_sequences();
	pmap_sequences();
	odd_headers();
	results();
	sequences();
	recmark_streams();
	recmark_one_byte_frags();
	http_requests();
	gss_seeds();
	return 0;
}

