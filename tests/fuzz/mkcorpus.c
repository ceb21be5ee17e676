/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Writes the seed corpus of every harness: real calls of every NFSv3 and MOUNT v3 procedure (and
 * the counters program), of the lock manager (NLM 1, 3, 4 and NSM) and of the portmapper (PMAP 2,
 * RPCBIND 3 and 4), their arguments encoded with the encoders a client uses (rpcgen's,
 * libtirpc's for the portmapper), file handles, export paths and GRANTED cookies as the
 * placeholders of fz_marks.h; and sequences of them (NLM: contention, blocked locks granted and
 * answered each way the fuzzed client host can, cancels, shares, _MSG calls, a client's restart).
 * Usage: mkcorpus OUTDIR; it makes OUTDIR/<target>/ for recmark, rpc_call, nfs3_args,
 * mount_args, dispatch, conn and metrics (HTTP requests). Kept in code rather than in binary
 * files, so a protocol change shows in a diff. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <netinet/in.h>
#include <rpc/rpc.h>
#include <rpc/pmap_prot.h>
#include <rpc/rpcb_prot.h>

#include "fz_marks.h"
#include "fz_xdr.h"
#include "xdr/mount3_prot.h"
#include "xdr/nfs3_prot.h"
#include "xdr/nlm_prot.h"
#include "xdr/nsm_prot.h"
#include "rpc/recmark.h"

#define STATS_PROGRAM 0x20004e55u   /* src/stats.h */
#define BUF_MAX (256 * 1024)

static const char *outdir;

struct buf {
	uint8_t b[BUF_MAX];
	size_t n;
};

static void put32(struct buf *b, uint32_t v)
{
	uint8_t *p = b->b + b->n;
	p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
	b->n += 4;
}

static void put_bytes(struct buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put_xdr(struct buf *b, xdrproc_t f, void *obj)
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

static void save(const char *target, const char *name, const struct buf *b)
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

static nfs_fh3 fh(unsigned exp, unsigned obj)
{
	uint8_t *m = fh_mark[exp][obj];
	const uint8_t v[FZ_MARK_FH_LEN] = {FZ_MARK0, 'F', 'Z', FZ_MARK_FH, (uint8_t)exp, (uint8_t)obj, 0, 0};
	memcpy(m, v, sizeof v);
	return (nfs_fh3){{FZ_MARK_FH_LEN, (char *)m}};
}

static char path_mark[FZ_NEXP][64][256];

static char *path(unsigned exp, const char *suffix)
{
	static unsigned next;
	char *p = path_mark[exp][next++ % 64];
	p[0] = (char)FZ_MARK0, p[1] = 'F', p[2] = 'Z', p[3] = FZ_MARK_PATH, p[4] = (char)exp;
	snprintf(p + 5, 250, "%s", suffix);
	return p;
}

/* ---- calls ---- */

enum auth { AUTH_ROOT, AUTH_USER, AUTH_NOBODY_NONE, AUTH_MANY_GROUPS };

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

struct call {
	const char *name;
	uint32_t prog, vers, proc;
	enum auth auth;
	xdrproc_t enc;                /* NULL: no arguments */
	void *args;
};

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
static void emit(const struct call *c)
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
static void emit_seq(const char *name, const struct call *cs, size_t n, bool split, uint32_t udp)
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

/* ---- NFSv3 ---- */

static sattr3 attrs(bool mode, uint32_t m, bool size, uint64_t sz)
{
	sattr3 a = {0};
	a.mode.set_it = mode;
	a.mode.set_mode3_u.mode = m;
	a.size.set_it = size;
	a.size.set_size3_u.size = sz;
	a.atime.set_it = DONT_CHANGE;
	a.mtime.set_it = SET_TO_SERVER_TIME;
	return a;
}

static char payload[65536];

#define NFS(NAME, PROC, TYPE, ...) \
	emit(&(struct call){NAME, NFS_PROGRAM, NFS_V3, PROC, AUTH_ROOT, (xdrproc_t)xdr_##TYPE, \
			    &(TYPE){__VA_ARGS__}})
#define NFS_AS(NAME, AUTH, PROC, TYPE, ...) \
	emit(&(struct call){NAME, NFS_PROGRAM, NFS_V3, PROC, AUTH, (xdrproc_t)xdr_##TYPE, \
			    &(TYPE){__VA_ARGS__}})

static void nfs3_calls(void)
{
	unsigned e = FZ_EXP_CACHED;
	emit(&(struct call){"nfs_null", NFS_PROGRAM, NFS_V3, NFSPROC3_NULL, AUTH_NOBODY_NONE, NULL, NULL});
	NFS("getattr", NFSPROC3_GETATTR, GETATTR3args, fh(e, FZ_OBJ_ROOT));
	NFS("getattr_direct", NFSPROC3_GETATTR, GETATTR3args, fh(FZ_EXP_DIRECT, FZ_OBJ_FILE));
	NFS("getattr_foreign", NFSPROC3_GETATTR, GETATTR3args, fh(FZ_EXP_FOREIGN, FZ_OBJ_ROOT));
	NFS("setattr_mode_size", NFSPROC3_SETATTR, SETATTR3args, fh(e, FZ_OBJ_FILE),
	    attrs(true, 0640, true, 12345), {.check = FALSE});
	NFS_AS("setattr_user_guard", AUTH_USER, NFSPROC3_SETATTR, SETATTR3args, fh(e, FZ_OBJ_EMPTY),
	       attrs(false, 0, true, 70000), {TRUE, .sattrguard3_u.obj_ctime = {1, 2}});
	NFS("lookup", NFSPROC3_LOOKUP, LOOKUP3args, {fh(e, FZ_OBJ_ROOT), "file"});
	NFS("lookup_dotdot", NFSPROC3_LOOKUP, LOOKUP3args, {fh(e, FZ_OBJ_DIR), ".."});
	NFS_AS("lookup_user", AUTH_MANY_GROUPS, NFSPROC3_LOOKUP, LOOKUP3args, {fh(e, FZ_OBJ_DIR), "a"});
	NFS("access", NFSPROC3_ACCESS, ACCESS3args, fh(e, FZ_OBJ_FILE), 0x3f);
	NFS_AS("access_user", AUTH_USER, NFSPROC3_ACCESS, ACCESS3args, fh(e, FZ_OBJ_RDONLY), 0x3f);
	NFS("readlink", NFSPROC3_READLINK, READLINK3args, fh(e, FZ_OBJ_LINK));
	NFS("read", NFSPROC3_READ, READ3args, fh(e, FZ_OBJ_FILE), 0, 4096);
	NFS("read_tail", NFSPROC3_READ, READ3args, fh(FZ_EXP_DIRECT, FZ_OBJ_FILE), 19000, 8192);
	NFS("read_ro", NFSPROC3_READ, READ3args, fh(FZ_EXP_RO, FZ_OBJ_DIR_A), 100, 1000);
	NFS("write_unstable", NFSPROC3_WRITE, WRITE3args, fh(e, FZ_OBJ_FILE), 1000, 3000, UNSTABLE,
	    {3000, payload});
	NFS("write_filesync_direct", NFSPROC3_WRITE, WRITE3args, fh(FZ_EXP_DIRECT, FZ_OBJ_FILE), 4000,
	    9000, FILE_SYNC, {9000, payload});
	NFS_AS("write_user", AUTH_USER, NFSPROC3_WRITE, WRITE3args, fh(e, FZ_OBJ_EMPTY), 0, 100,
	       DATA_SYNC, {100, payload});
	CREATE3args cr = {{fh(e, FZ_OBJ_ROOT), "new"}, {UNCHECKED, .createhow3_u.obj_attributes =
								attrs(true, 0644, false, 0)}};
	NFS("create", NFSPROC3_CREATE, CREATE3args, cr.where, cr.how);
	cr.how.mode = GUARDED;
	cr.where.dir = fh(FZ_EXP_DIRECT, FZ_OBJ_DIR);
	NFS("create_guarded", NFSPROC3_CREATE, CREATE3args, cr.where, cr.how);
	cr.how.mode = EXCLUSIVE;
	memcpy(cr.how.createhow3_u.verf, "verifier", 8);
	NFS("create_exclusive", NFSPROC3_CREATE, CREATE3args, cr.where, cr.how);
	NFS("mkdir", NFSPROC3_MKDIR, MKDIR3args, {fh(e, FZ_OBJ_ROOT), "newdir"}, attrs(true, 0755, false, 0));
	NFS("symlink", NFSPROC3_SYMLINK, SYMLINK3args, {fh(e, FZ_OBJ_ROOT), "sl"},
	    {attrs(false, 0, false, 0), "dir/a"});
	NFS("mknod_fifo", NFSPROC3_MKNOD, MKNOD3args, {fh(e, FZ_OBJ_DIR), "pipe"},
	    {NF3FIFO, .mknoddata3_u.pipe_attributes = attrs(true, 0600, false, 0)});
	NFS("mknod_chr", NFSPROC3_MKNOD, MKNOD3args, {fh(e, FZ_OBJ_DIR), "null"},
	    {NF3CHR, .mknoddata3_u.device = {attrs(true, 0600, false, 0), {1, 3}}});
	NFS("remove", NFSPROC3_REMOVE, REMOVE3args, {fh(e, FZ_OBJ_ROOT), "empty"});
	NFS("rmdir", NFSPROC3_RMDIR, RMDIR3args, {fh(e, FZ_OBJ_DIR), "b"});
	NFS("rename", NFSPROC3_RENAME, RENAME3args, {fh(e, FZ_OBJ_ROOT), "file"}, {fh(e, FZ_OBJ_DIR), "moved"});
	NFS("link", NFSPROC3_LINK, LINK3args, fh(e, FZ_OBJ_FILE), {fh(e, FZ_OBJ_ROOT), "hard"});
	NFS("readdir", NFSPROC3_READDIR, READDIR3args, fh(e, FZ_OBJ_ROOT), 0, {0}, 4096);
	NFS("readdir_small", NFSPROC3_READDIR, READDIR3args, fh(FZ_EXP_RO, FZ_OBJ_DIR), 0, {0}, 100);
	NFS("readdirplus", NFSPROC3_READDIRPLUS, READDIRPLUS3args, fh(e, FZ_OBJ_ROOT), 0, {0}, 4096, 32768);
	NFS("readdirplus_cookie", NFSPROC3_READDIRPLUS, READDIRPLUS3args, fh(FZ_EXP_DIRECT, FZ_OBJ_ROOT),
	    3, {1, 2, 3, 4, 5, 6, 7, 8}, 512, 1024);
	NFS("fsstat", NFSPROC3_FSSTAT, FSSTAT3args, fh(e, FZ_OBJ_ROOT));
	NFS("fsinfo", NFSPROC3_FSINFO, FSINFO3args, fh(e, FZ_OBJ_ROOT));
	NFS("pathconf", NFSPROC3_PATHCONF, PATHCONF3args, fh(e, FZ_OBJ_FILE));
	NFS("commit", NFSPROC3_COMMIT, COMMIT3args, fh(e, FZ_OBJ_FILE), 0, 0);
	NFS("commit_range", NFSPROC3_COMMIT, COMMIT3args, fh(FZ_EXP_DIRECT, FZ_OBJ_FILE), 4096, 8192);
}

/* ---- MOUNT, the counters program, and calls the header decides ---- */

#define MNT(NAME, PROC, ENC, ARG) \
	emit(&(struct call){NAME, MOUNT_PROGRAM, MOUNT_V3, PROC, AUTH_ROOT, (xdrproc_t)ENC, ARG})

static void mount_calls(void)
{
	char *p0 = path(FZ_EXP_CACHED, ""), *p1 = path(FZ_EXP_DIRECT, "/dir"), *bad = "/etc";
	MNT("mnt_null", MOUNTPROC3_NULL, NULL, NULL);
	MNT("mnt", MOUNTPROC3_MNT, xdr_dirpath, &p0);
	MNT("mnt_subdir", MOUNTPROC3_MNT, xdr_dirpath, &p1);
	MNT("mnt_unexported", MOUNTPROC3_MNT, xdr_dirpath, &bad);
	MNT("mnt_dump", MOUNTPROC3_DUMP, NULL, NULL);
	MNT("mnt_umnt", MOUNTPROC3_UMNT, xdr_dirpath, &p0);
	MNT("mnt_umntall", MOUNTPROC3_UMNTALL, NULL, NULL);
	MNT("mnt_export", MOUNTPROC3_EXPORT, NULL, NULL);
	emit(&(struct call){"stats_null", STATS_PROGRAM, 1, 0, AUTH_ROOT, NULL, NULL});
	emit(&(struct call){"stats", STATS_PROGRAM, 1, 1, AUTH_ROOT, NULL, NULL});
	/* header verdicts: unknown program, other versions, unknown procedure */
	emit(&(struct call){"prog_unavail", 100004, 3, 0, AUTH_ROOT, NULL, NULL});
	emit(&(struct call){"nfs_v4", NFS_PROGRAM, 4, 0, AUTH_ROOT, NULL, NULL});
	emit(&(struct call){"proc_unavail", NFS_PROGRAM, NFS_V3, 22, AUTH_ROOT, NULL, NULL});
	emit(&(struct call){"many_groups", NFS_PROGRAM, NFS_V3, 0, AUTH_MANY_GROUPS, NULL, NULL});
	/* NFS and the counters are not served over UDP; MOUNT is */
	struct call udp[] = {
		{"nfs_null", NFS_PROGRAM, NFS_V3, NFSPROC3_NULL, AUTH_ROOT, NULL, NULL},
		{"stats", STATS_PROGRAM, 1, 1, AUTH_ROOT, NULL, NULL},
		{"mnt_export", MOUNT_PROGRAM, MOUNT_V3, MOUNTPROC3_EXPORT, AUTH_ROOT, NULL, NULL},
	};
	emit_seq("over_udp", udp, 3, false, 0x07);
}

/* Headers no encoder of ours writes: RPC version 3, AUTH_DH and RPCSEC_GSS, 17 groups. */
static void odd_headers(void)
{
	static const uint32_t hdrs[][12] = {
		{1, 0, 3, NFS_PROGRAM, 3, 0, 0, 0, 0, 0},
		{2, 0, 2, NFS_PROGRAM, 3, 0, 3, 0, 0, 0},
		{3, 0, 2, NFS_PROGRAM, 3, 0, 6, 0, 0, 0},
		{4, 1, 0, 0, 0, 0, 0, 0, 0, 0},
	};
	static const char *const names[] = {"rpcvers3", "auth_dh", "rpcsec_gss", "a_reply"};
	for (size_t i = 0; i < sizeof hdrs / sizeof hdrs[0]; i++) {
		struct buf *b = calloc(1, sizeof *b), *d = calloc(1, sizeof *d);
		for (int k = 0; k < 10; k++)
			put32(b, hdrs[i][k]);
		save("rpc_call", names[i], b);
		put32(d, (uint32_t)b->n | RECMARK_LAST);
		put_bytes(d, b->b, b->n);
		save("dispatch", names[i], d);
		save("conn", names[i], d);
		free(b);
		free(d);
	}
	struct buf *b = calloc(1, sizeof *b);
	put32(b, 5), put32(b, 0), put32(b, 2), put32(b, NFS_PROGRAM), put32(b, 3), put32(b, 0);
	put32(b, 1), put32(b, 4 * (5 + 17)), put32(b, 0), put32(b, 0), put32(b, 0), put32(b, 0);
	put32(b, 17);
	for (int k = 0; k < 17; k++)
		put32(b, (uint32_t)k);
	put32(b, 0), put32(b, 0);
	save("rpc_call", "seventeen_groups", b);
	free(b);
}

/* ---- results (the codecs the server encodes with) ---- */

static void result(const char *target, const char *name, uint8_t sel, xdrproc_t enc, void *obj)
{
	struct buf *b = calloc(1, sizeof *b);
	put_bytes(b, &sel, 1);
	put_xdr(b, enc, obj);
	save(target, name, b);
	free(b);
}

/* A result seed of fuzz_mount_args: program, procedure, the encoded result. */
static void res2(const char *name, unsigned prog, unsigned proc, xdrproc_t enc, void *obj)
{
	struct buf *b = calloc(1, sizeof *b);
	uint8_t sel[2] = {(uint8_t)prog, (uint8_t)(proc | FZ_ARGS_RESULT)};
	put_bytes(b, sel, 2);
	put_xdr(b, enc, obj);
	save("mount_args", name, b);
	free(b);
}

static void results(void)
{
	uint8_t np = 22;
	GETATTR3res ga = {NFS3_OK, .GETATTR3res_u.resok.obj_attributes = {.type = NF3REG, .mode = 0644,
									   .nlink = 1, .size = 20000}};
	result("nfs3_args", "res_getattr", np + NFSPROC3_GETATTR, (xdrproc_t)xdr_GETATTR3res, &ga);
	READ3res rd = {NFS3_OK, .READ3res_u.resok = {.file_attributes.attributes_follow = FALSE, .count = 5,
						   .eof = TRUE, .data = {5, "hello"}}};
	result("nfs3_args", "res_read", np + NFSPROC3_READ, (xdrproc_t)xdr_READ3res, &rd);
	result("nfs3_args", "read_res_zc", 2 * np, (xdrproc_t)xdr_READ3res, &rd);
	LOOKUP3res lk = {.status = NFS3ERR_NOENT};
	result("nfs3_args", "res_lookup", np + NFSPROC3_LOOKUP, (xdrproc_t)xdr_LOOKUP3res, &lk);
	entry3 e2 = {7, "b", 2, NULL}, e1 = {6, "a", 1, &e2};
	READDIR3res rdd = {NFS3_OK, .READDIR3res_u.resok = {.dir_attributes.attributes_follow = FALSE,
							     .reply = {&e1, TRUE}}};
	result("nfs3_args", "res_readdir", np + NFSPROC3_READDIR, (xdrproc_t)xdr_READDIR3res, &rdd);
	WRITE3res wr = {NFS3_OK, .WRITE3res_u.resok = {.count = 100, .committed = FILE_SYNC, .verf = "verifier"}};
	result("nfs3_args", "res_write", np + NFSPROC3_WRITE, (xdrproc_t)xdr_WRITE3res, &wr);

	int flavors[] = {1};
	mountres3 mr = {MNT3_OK, .mountres3_u.mountinfo = {{8, "handle!!"}, {1, flavors}}};
	res2("res_mnt", FZ_ARGS_MOUNT3, MOUNTPROC3_MNT, (xdrproc_t)xdr_mountres3, &mr);
	mountbody m2 = {"h2", "/b", NULL}, m1 = {"h1", "/a", &m2};
	mountlist ml = &m1;
	res2("res_dump", FZ_ARGS_MOUNT3, MOUNTPROC3_DUMP, (xdrproc_t)xdr_mountlist, &ml);
	groupnode g = {"127.0.0.1", NULL};
	exportnode x = {"/srv", &g, NULL};
	exports ex = &x;
	res2("res_export", FZ_ARGS_MOUNT3, MOUNTPROC3_EXPORT, (xdrproc_t)xdr_exports, &ex);

	/* the lock manager's and the portmapper's */
	nlm4_testres t4 = {{8, "cookie!!"}, {NLM4_DENIED, .nlm4_testrply_u.holder =
						  {TRUE, 7, {5, "owner"}, 1ull << 40, 0}}};
	res2("res_nlm4_test", FZ_ARGS_NLM4, NLMPROC_TEST, (xdrproc_t)xdr_nlm4_testres, &t4);
	nlm_testres t1 = {{4, "ck01"}, {nlm_denied, .nlm_testrply_u.holder = {FALSE, 9, {2, "oh"}, 10, 20}}};
	res2("res_nlm1_test", FZ_ARGS_NLM1, NLMPROC_TEST, (xdrproc_t)xdr_nlm_testres, &t1);
	nlm4_res r4 = {{8, "cookie!!"}, {NLM4_BLOCKED}};
	res2("res_nlm4_lock", FZ_ARGS_NLM4, NLMPROC_LOCK, (xdrproc_t)xdr_nlm4_res, &r4);
	nlm4_shareres sh = {{0, NULL}, NLM4_GRANTED, 1};
	res2("res_nlm4_share", FZ_ARGS_NLM4, NLMPROC_SHARE, (xdrproc_t)xdr_nlm4_shareres, &sh);
	nlm_shareres sh1 = {{3, "abc"}, nlm_denied, 0};
	res2("res_nlm3_share", FZ_ARGS_NLM3, NLMPROC_SHARE, (xdrproc_t)xdr_nlm_shareres, &sh1);
	sm_stat_res ss = {stat_fail, 3};
	res2("res_sm_stat", FZ_ARGS_NSM1, SM_STAT, (xdrproc_t)xdr_sm_stat_res, &ss);
	struct pmaplist p2 = {{100021, 4, IPPROTO_UDP, 32803}, NULL}, p1 = {{100003, 3, IPPROTO_TCP, 2049}, &p2};
	struct pmaplist *pl = &p1;
	res2("res_pmap_dump", FZ_ARGS_PMAP2, PMAPPROC_DUMP, (xdrproc_t)xdr_pmaplist, &pl);
	u_int port = 2049;
	res2("res_pmap_getport", FZ_ARGS_PMAP2, PMAPPROC_GETPORT, (xdrproc_t)xdr_u_int, &port);
	rpcblist b2 = {{100005, 3, "udp6", "::1.78.80", "superuser"}, NULL};
	rpcblist b1 = {{100003, 3, "tcp", "127.0.0.1.8.1", "unknown"}, &b2};
	rpcblist_ptr bl = &b1;
	res2("res_rpcb_dump", FZ_ARGS_RPCB3, RPCBPROC_DUMP, (xdrproc_t)xdr_rpcblist_ptr, &bl);
	rpcb_entry_list l2 = {{"::1.8.1", "tcp6", 3, "inet6", "tcp"}, NULL};
	rpcb_entry_list l1 = {{"127.0.0.1.8.1", "udp", 1, "inet", "udp"}, &l2};
	rpcb_entry_list_ptr el = &l1;
	res2("res_rpcb_addrlist", FZ_ARGS_RPCB4, RPCBPROC_GETADDRLIST,
	     (xdrproc_t)xdr_rpcb_entry_list_ptr, &el);
	char *ua = "127.0.0.1.0.111";
	res2("res_rpcb_getaddr", FZ_ARGS_RPCB4, RPCBPROC_GETADDR, (xdrproc_t)xdr_wrapstring, &ua);
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(111),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct netbuf nb = {sizeof sin, sizeof sin, &sin};
	res2("res_rpcb_taddr", FZ_ARGS_RPCB3, RPCBPROC_UADDR2TADDR, (xdrproc_t)xdr_netbuf, &nb);
	static rpcb_stat_byvers st;
	rpcbs_addrlist al = {100003, 3, 5, 1, "tcp", NULL};
	rpcbs_rmtcalllist rl = {100021, 4, 12, 2, 1, 3, "udp", NULL};
	st[0].setinfo = 4;
	st[2].addrinfo = &al;
	st[2].rmtinfo = &rl;
	res2("res_rpcb_stat", FZ_ARGS_RPCB4, RPCBPROC_GETSTAT, (xdrproc_t)xdr_rpcb_stat_byvers, st);
}

/* ---- the lock manager ---- */

static netobj nobj(const char *s)
{
	return (netobj){(u_int)strlen(s), (char *)s};
}

/* An NFS handle placeholder as NLM's fh. */
static netobj nfh(unsigned exp, unsigned obj)
{
	nfs_fh3 f = fh(exp, obj);
	return (netobj){f.data.data_len, f.data.data_val};
}

static uint8_t cookie_mark[FZ_MARK_COOKIE_LEN] = {FZ_MARK0, 'F', 'Z', FZ_MARK_COOKIE, 0, 0, 0, 0};

/* Owners: A takes locks the others wait for; svid modulo 4 says how the fuzzed client host
 * answers the GRANTED callback of a blocked lock of theirs (fz_marks.h). */
#define SVID_A (0x100 + FZ_GRANTED_TAKE)
#define SVID_TAKE (0x200 + FZ_GRANTED_TAKE)
#define SVID_REFUSE (0x200 + FZ_GRANTED_REFUSE)
#define SVID_GARBAGE (0x200 + FZ_GRANTED_GARBAGE)
#define SVID_SILENT (0x200 + FZ_GRANTED_SILENT)

static nlm4_lock lk4(unsigned exp, unsigned obj, int32_t svid, uint64_t off, uint64_t len)
{
	return (nlm4_lock){"fuzzhost", nfh(exp, obj), nobj(svid == SVID_A ? "owner-a" : "owner-b"),
			   svid, off, len};
}

static nlm_lock lk1(unsigned exp, unsigned obj, int32_t svid, u_int off, u_int len)
{
	return (nlm_lock){"fuzzhost", nfh(exp, obj), nobj(svid == SVID_A ? "owner-a" : "owner-b"),
			  svid, off, len};
}

#define C_NLM(V, PROC, TYPE, ...) \
	{#PROC, NLM_PROG, V, PROC, AUTH_ROOT, (xdrproc_t)xdr_##TYPE, &(TYPE){__VA_ARGS__}}
#define NLM4(NAME, PROC, TYPE, ...) \
	emit(&(struct call){NAME, NLM_PROG, NLM4_VERS, PROC, AUTH_ROOT, (xdrproc_t)xdr_##TYPE, \
			    &(TYPE){__VA_ARGS__}})
#define NLMV(NAME, V, PROC, TYPE, ...) \
	emit(&(struct call){NAME, NLM_PROG, V, PROC, AUTH_ROOT, (xdrproc_t)xdr_##TYPE, \
			    &(TYPE){__VA_ARGS__}})

static void lock_calls(void)
{
	unsigned e = FZ_EXP_CACHED, f = FZ_OBJ_FILE;
	netobj ck = nobj("ck"), cm = {sizeof cookie_mark, (char *)cookie_mark};
	emit(&(struct call){"nlm4_null", NLM_PROG, NLM4_VERS, NLMPROC_NULL, AUTH_NOBODY_NONE, NULL, NULL});
	NLM4("nlm4_test", NLMPROC_TEST, nlm4_testargs, ck, TRUE, lk4(e, f, SVID_A, 0, 100));
	NLM4("nlm4_lock", NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, TRUE, lk4(e, f, SVID_A, 0, 100),
	     FALSE, 3);
	NLM4("nlm4_lock_block", NLMPROC_LOCK, nlm4_lockargs, ck, TRUE, TRUE,
	     lk4(e, f, SVID_SILENT, 0, 0), FALSE, 3);
	NLM4("nlm4_lock_reclaim", NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, FALSE,
	     lk4(FZ_EXP_DIRECT, f, SVID_A, 4096, 4096), TRUE, 3);
	NLM4("nlm4_lock_ro", NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, TRUE,
	     lk4(FZ_EXP_RO, FZ_OBJ_RDONLY, SVID_A, 0, 10), FALSE, 3);
	NLM4("nlm4_lock_dir", NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, TRUE,
	     lk4(e, FZ_OBJ_DIR, SVID_A, 0, 10), FALSE, 3);
	NLM4("nlm4_lock_foreign", NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, TRUE,
	     lk4(FZ_EXP_FOREIGN, f, SVID_A, 0, 10), FALSE, 3);
	NLM4("nlm4_lock_high", NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, FALSE,
	     lk4(e, FZ_OBJ_DIR_A, SVID_A, (1ull << 63) - 10, 0), FALSE, 3);
	NLM4("nlm4_lock_wrap", NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, TRUE,
	     lk4(e, f, SVID_A, UINT64_MAX - 5, 100), FALSE, 3);
	nlm4_lock stale = lk4(e, f, SVID_A, 0, 1);
	stale.fh = nobj("not a handle of ours");
	NLM4("nlm4_lock_stale", NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, TRUE, stale, FALSE, 3);
	NLM4("nlm4_cancel", NLMPROC_CANCEL, nlm4_cancargs, ck, TRUE, TRUE, lk4(e, f, SVID_SILENT, 0, 0));
	NLM4("nlm4_unlock", NLMPROC_UNLOCK, nlm4_unlockargs, ck, lk4(e, f, SVID_A, 0, 0));
	NLM4("nlm4_granted", NLMPROC_GRANTED, nlm4_testargs, ck, TRUE, lk4(e, f, SVID_A, 0, 100));
	NLM4("nlm4_test_msg", NLMPROC_TEST_MSG, nlm4_testargs, ck, FALSE, lk4(e, f, SVID_TAKE, 0, 100));
	NLM4("nlm4_lock_msg", NLMPROC_LOCK_MSG, nlm4_lockargs, ck, TRUE, TRUE,
	     lk4(e, f, SVID_TAKE, 50, 10), FALSE, 3);
	NLM4("nlm4_cancel_msg", NLMPROC_CANCEL_MSG, nlm4_cancargs, ck, TRUE, TRUE,
	     lk4(e, f, SVID_TAKE, 50, 10));
	NLM4("nlm4_unlock_msg", NLMPROC_UNLOCK_MSG, nlm4_unlockargs, ck, lk4(e, f, SVID_TAKE, 50, 10));
	NLM4("nlm4_granted_msg", NLMPROC_GRANTED_MSG, nlm4_testargs, ck, TRUE, lk4(e, f, SVID_A, 0, 1));
	NLM4("nlm4_test_res", NLMPROC_TEST_RES, nlm4_testres, ck,
	     {NLM4_DENIED, .nlm4_testrply_u.holder = {TRUE, 1, nobj("oh"), 0, 10}});
	NLM4("nlm4_lock_res", NLMPROC_LOCK_RES, nlm4_res, ck, {NLM4_GRANTED});
	NLM4("nlm4_cancel_res", NLMPROC_CANCEL_RES, nlm4_res, ck, {NLM4_DENIED});
	NLM4("nlm4_unlock_res", NLMPROC_UNLOCK_RES, nlm4_res, ck, {NLM4_GRANTED});
	NLM4("nlm4_granted_res", NLMPROC_GRANTED_RES, nlm4_res, cm, {NLM4_GRANTED});
	NLM4("nlm4_share", NLMPROC_SHARE, nlm4_shareargs, ck,
	     {"fuzzhost", nfh(e, f), nobj("owner-a"), fsm_DW, fsa_RW}, FALSE);
	NLM4("nlm4_share_reclaim", NLMPROC_SHARE, nlm4_shareargs, ck,
	     {"fuzzhost", nfh(FZ_EXP_RO, FZ_OBJ_DIR_A), {0, NULL}, fsm_DN, fsa_R}, TRUE);
	NLM4("nlm4_share_no_owner", NLMPROC_SHARE, nlm4_shareargs, ck,
	     {"fuzzhost", nfh(e, FZ_OBJ_EMPTY), {0, NULL}, fsm_DR, fsa_R}, FALSE);
	NLM4("nlm4_unshare", NLMPROC_UNSHARE, nlm4_shareargs, ck,
	     {"fuzzhost", nfh(e, f), nobj("owner-a"), fsm_DW, fsa_RW}, FALSE);
	NLM4("nlm4_nm_lock", NLMPROC_NM_LOCK, nlm4_lockargs, ck, FALSE, FALSE,
	     lk4(e, FZ_OBJ_EMPTY, SVID_A, 0, 0), FALSE, 0);
	NLM4("nlm4_free_all", NLMPROC_FREE_ALL, nlm4_notify, "fuzzhost", 5);
	/* versions 1 and 3 */
	NLMV("nlm1_test", NLM_VERS, NLMPROC_TEST, nlm_testargs, ck, TRUE, lk1(e, f, SVID_A, 0, 100));
	NLMV("nlm1_lock", NLM_VERS, NLMPROC_LOCK, nlm_lockargs, ck, TRUE, TRUE,
	     lk1(e, f, SVID_TAKE, 10, 0), FALSE, 1);
	NLMV("nlm1_cancel", NLM_VERS, NLMPROC_CANCEL, nlm_cancargs, ck, TRUE, TRUE,
	     lk1(e, f, SVID_TAKE, 10, 0));
	NLMV("nlm1_unlock", NLM_VERS, NLMPROC_UNLOCK, nlm_unlockargs, ck, lk1(e, f, SVID_A, 0, 0));
	NLMV("nlm1_lock_msg", NLM_VERS, NLMPROC_LOCK_MSG, nlm_lockargs, ck, FALSE, FALSE,
	     lk1(e, f, SVID_TAKE, 0xfffffff0u, 0x20), FALSE, 1);
	NLMV("nlm1_granted_res", NLM_VERS, NLMPROC_GRANTED_RES, nlm_res, cm, {nlm_granted});
	NLMV("nlm3_share", NLM_VERSX, NLMPROC_SHARE, nlm_shareargs, ck,
	     {"fuzzhost", nfh(e, f), nobj("owner-b"), fsm_DR, fsa_W}, FALSE);
	NLMV("nlm3_nm_lock", NLM_VERSX, NLMPROC_NM_LOCK, nlm_lockargs, ck, FALSE, TRUE,
	     lk1(e, f, SVID_A, 0, 1), FALSE, 0);
	NLMV("nlm3_free_all", NLM_VERSX, NLMPROC_FREE_ALL, nlm_notify, "fuzzhost", 7);
	emit(&(struct call){"nlm_v2", NLM_PROG, 2, NLMPROC_NULL, AUTH_ROOT, NULL, NULL});
	emit(&(struct call){"nlm1_share", NLM_PROG, NLM_VERS, NLMPROC_SHARE, AUTH_ROOT, NULL, NULL});
	emit(&(struct call){"nlm4_proc16", NLM_PROG, NLM4_VERS, 16, AUTH_ROOT, NULL, NULL});

	/* NSM */
	emit(&(struct call){"sm_null", SM_PROG, SM_VERS, SM_NULL, AUTH_ROOT, NULL, NULL});
	emit(&(struct call){"sm_stat", SM_PROG, SM_VERS, SM_STAT, AUTH_ROOT, (xdrproc_t)xdr_sm_name,
			    &(sm_name){"fuzzhost"}});
	mon m = {{"fuzzhost", {"127.0.0.1", 100021, 4, 16}}, "private data 16b"};
	emit(&(struct call){"sm_mon", SM_PROG, SM_VERS, SM_MON, AUTH_ROOT, (xdrproc_t)xdr_mon, &m});
	emit(&(struct call){"sm_unmon", SM_PROG, SM_VERS, SM_UNMON, AUTH_ROOT, (xdrproc_t)xdr_mon_id,
			    &m.mon_id});
	emit(&(struct call){"sm_unmon_all", SM_PROG, SM_VERS, SM_UNMON_ALL, AUTH_ROOT,
			    (xdrproc_t)xdr_my_id, &m.mon_id.my_id});
	emit(&(struct call){"sm_simu_crash", SM_PROG, SM_VERS, SM_SIMU_CRASH, AUTH_ROOT, NULL, NULL});
	emit(&(struct call){"sm_notify", SM_PROG, SM_VERS, SM_NOTIFY, AUTH_ROOT,
			    (xdrproc_t)xdr_stat_chge, &(stat_chge){"fuzzhost", 5}});
}

/* ---- the portmapper ---- */

#define PM(NAME, V, PROC, ENC, ARG) \
	emit(&(struct call){NAME, PMAPPROG, V, PROC, AUTH_ROOT, (xdrproc_t)ENC, ARG})

static void pmap_calls(void)
{
	struct pmap nfs = {NFS_PROGRAM, NFS_V3, IPPROTO_TCP, 0}, nlm = {NLM_PROG, NLM4_VERS, IPPROTO_UDP, 0};
	struct pmap other = {400123, 2, IPPROTO_UDP, 4321};
	PM("pmap_null", 2, PMAPPROC_NULL, NULL, NULL);
	PM("pmap_getport", 2, PMAPPROC_GETPORT, xdr_pmap, &nfs);
	PM("pmap_getport_nlm", 2, PMAPPROC_GETPORT, xdr_pmap, &nlm);
	PM("pmap_set", 2, PMAPPROC_SET, xdr_pmap, &other);
	PM("pmap_set_own", 2, PMAPPROC_SET, xdr_pmap, &nfs);
	PM("pmap_unset", 2, PMAPPROC_UNSET, xdr_pmap, &other);
	PM("pmap_dump", 2, PMAPPROC_DUMP, NULL, NULL);
	PM("pmap_callit", 2, PMAPPROC_CALLIT, NULL, NULL);
	RPCB nfs3 = {NFS_PROGRAM, NFS_V3, "tcp", "127.0.0.1.0.111", ""};
	RPCB nlm6 = {NLM_PROG, NLM4_VERS, "udp6", "::1.0.111", "superuser"};
	RPCB set = {400123, 1, "udp", "127.0.0.1.16.225", "superuser"};
	RPCB set6 = {400124, 1, "tcp6", "::1.3.4", "superuser"};
	RPCB any = {MOUNT_PROGRAM, 1, "", "", ""};
	char *u4 = "127.0.0.1.8.1", *u6 = "fe80::1:2.0.111", *bad = "1.2.3.4.256.1";
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(2049),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct netbuf nb = {sizeof sin, sizeof sin, &sin};
	for (uint32_t v = 3; v <= 4; v++) {
		char name[64];
#define RB(WHAT, PROC, ENC, ARG) \
		(snprintf(name, sizeof name, "rpcb%u_%s", v, WHAT), PM(name, v, PROC, ENC, ARG))
		RB("null", 0, NULL, NULL);
		RB("getaddr", RPCBPROC_GETADDR, xdr_rpcb, &nfs3);
		RB("getaddr_v6", RPCBPROC_GETADDR, xdr_rpcb, &nlm6);
		RB("getaddr_other_vers", RPCBPROC_GETADDR, xdr_rpcb, &any);
		RB("set", RPCBPROC_SET, xdr_rpcb, &set);
		RB("set6", RPCBPROC_SET, xdr_rpcb, &set6);
		RB("unset", RPCBPROC_UNSET, xdr_rpcb, &set);
		RB("unset_all", RPCBPROC_UNSET, xdr_rpcb, &any);
		RB("dump", RPCBPROC_DUMP, NULL, NULL);
		RB("gettime", RPCBPROC_GETTIME, NULL, NULL);
		RB("uaddr2taddr", RPCBPROC_UADDR2TADDR, xdr_wrapstring, &u4);
		RB("uaddr2taddr6", RPCBPROC_UADDR2TADDR, xdr_wrapstring, &u6);
		RB("uaddr2taddr_bad", RPCBPROC_UADDR2TADDR, xdr_wrapstring, &bad);
		RB("taddr2uaddr", RPCBPROC_TADDR2UADDR, xdr_netbuf, &nb);
		RB("callit", 5, NULL, NULL);
	}
	uint32_t v = 4;
	char name[64];
	RB("getversaddr", RPCBPROC_GETVERSADDR, xdr_rpcb, &nfs3);
	RB("getaddrlist", RPCBPROC_GETADDRLIST, xdr_rpcb, &nlm6);
	RB("getstat", RPCBPROC_GETSTAT, NULL, NULL);
	RB("indirect", RPCBPROC_INDIRECT, NULL, NULL);
#undef RB
	emit(&(struct call){"pmap_v5", PMAPPROG, 5, 0, AUTH_ROOT, NULL, NULL});
}

/* Locking in steps, as clients do it: each sequence one dispatch input (one conn stream). */
static void lock_sequences(void)
{
	unsigned e = FZ_EXP_CACHED, f = FZ_OBJ_FILE;
	netobj ck = nobj("ck"), cm = {sizeof cookie_mark, (char *)cookie_mark};
	const unsigned waiters[] = {SVID_TAKE, SVID_REFUSE, SVID_GARBAGE, SVID_SILENT};
	const char *const how[] = {"take", "refuse", "garbage", "silent"};
	for (size_t i = 0; i < 4; i++) {
		int32_t w = (int32_t)waiters[i];
		struct call s[] = {
			C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, TRUE,
			      lk4(e, f, SVID_A, 0, 1000), FALSE, 3),
			C_NLM(NLM4_VERS, NLMPROC_TEST, nlm4_testargs, ck, FALSE, lk4(e, f, w, 500, 1)),
			C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, TRUE, TRUE,
			      lk4(e, f, w, 100, 100), FALSE, 3),
			C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, TRUE, TRUE,
			      lk4(e, f, w, 100, 100), FALSE, 3),
			C_NLM(NLM4_VERS, NLMPROC_UNLOCK, nlm4_unlockargs, ck, lk4(e, f, SVID_A, 0, 0)),
			C_NLM(NLM4_VERS, NLMPROC_GRANTED_RES, nlm4_res, cm, {NLM4_GRANTED}),
			C_NLM(NLM4_VERS, NLMPROC_TEST, nlm4_testargs, ck, TRUE, lk4(e, f, SVID_A, 0, 0)),
			C_NLM(NLM4_VERS, NLMPROC_UNLOCK, nlm4_unlockargs, ck, lk4(e, f, w, 0, 0)),
		};
		char name[64];
		snprintf(name, sizeof name, "seq_nlm_block_%s", how[i]);
		/* the blocked LOCKs of two of them over UDP: so are their GRANTED callbacks */
		emit_seq(name, s, sizeof s / sizeof s[0], i == 1, i % 2 ? 0x0c : 0);
	}
	/* A granted lock on its way (the client host holds its GRANTED): cancelled, or asked for
	 * again, then refused. */
	struct call c[] = {
		C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, TRUE, lk4(e, f, SVID_A, 0, 0),
		      FALSE, 3),
		C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, TRUE, FALSE,
		      lk4(e, f, SVID_SILENT, 10, 10), FALSE, 3),
		C_NLM(NLM4_VERS, NLMPROC_UNLOCK, nlm4_unlockargs, ck, lk4(e, f, SVID_A, 0, 0)),
		C_NLM(NLM4_VERS, NLMPROC_CANCEL, nlm4_cancargs, ck, TRUE, FALSE,
		      lk4(e, f, SVID_SILENT, 10, 10)),
		C_NLM(NLM4_VERS, NLMPROC_TEST, nlm4_testargs, ck, TRUE, lk4(e, f, SVID_A, 0, 0)),
	};
	emit_seq("seq_nlm_cancel_granting", c, sizeof c / sizeof c[0], false, 0x02);
	struct call r[] = {
		C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, TRUE,
		      lk4(FZ_EXP_DIRECT, f, SVID_A, 0, 0), FALSE, 3),
		C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, TRUE, TRUE,
		      lk4(FZ_EXP_DIRECT, f, SVID_SILENT, 0, 4096), FALSE, 3),
		C_NLM(NLM4_VERS, NLMPROC_UNLOCK, nlm4_unlockargs, ck, lk4(FZ_EXP_DIRECT, f, SVID_A, 0, 0)),
		C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, TRUE, TRUE,
		      lk4(FZ_EXP_DIRECT, f, SVID_SILENT, 0, 4096), FALSE, 3),
		C_NLM(NLM4_VERS, NLMPROC_GRANTED_RES, nlm4_res, cm, {NLM4_DENIED}),
		C_NLM(NLM4_VERS, NLMPROC_TEST, nlm4_testargs, ck, TRUE,
		      lk4(FZ_EXP_DIRECT, f, SVID_A, 0, 0)),
	};
	emit_seq("seq_nlm_reassert", r, sizeof r / sizeof r[0], false, 0);
	/* One owner's ranges: split, up- and downgraded, merged, partly unlocked. */
	struct call g[] = {
		C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, TRUE, lk4(e, f, SVID_A, 0, 1000),
		      FALSE, 3),
		C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, FALSE,
		      lk4(e, f, SVID_A, 100, 100), FALSE, 3),
		C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, FALSE,
		      lk4(e, f, SVID_A, 1000, 500), FALSE, 3),
		C_NLM(NLM4_VERS, NLMPROC_UNLOCK, nlm4_unlockargs, ck, lk4(e, f, SVID_A, 500, 100)),
		C_NLM(NLM4_VERS, NLMPROC_TEST, nlm4_testargs, ck, FALSE, lk4(e, f, SVID_TAKE, 0, 0)),
		C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, FALSE,
		      lk4(e, f, SVID_TAKE, 150, 10), FALSE, 3),
		C_NLM(NLM4_VERS, NLMPROC_TEST, nlm4_testargs, ck, TRUE, lk4(e, f, SVID_TAKE, 540, 10)),
		C_NLM(NLM4_VERS, NLMPROC_UNLOCK, nlm4_unlockargs, ck, lk4(e, f, SVID_A, 0, 0)),
		C_NLM(NLM4_VERS, NLMPROC_FREE_ALL, nlm4_notify, "fuzzhost", 0),
	};
	emit_seq("seq_nlm_ranges", g, sizeof g / sizeof g[0], false, 0x55);
	/* Shares, then the client restarts with a lock and a waiter. */
	struct call sh[] = {
		C_NLM(NLM4_VERS, NLMPROC_SHARE, nlm4_shareargs, ck,
		      {"fuzzhost", nfh(e, f), nobj("owner-a"), fsm_DW, fsa_RW}, FALSE),
		C_NLM(NLM4_VERS, NLMPROC_SHARE, nlm4_shareargs, ck,
		      {"fuzzhost", nfh(e, f), nobj("owner-b"), fsm_DN, fsa_W}, FALSE),
		C_NLM(NLM4_VERS, NLMPROC_UNSHARE, nlm4_shareargs, ck,
		      {"fuzzhost", nfh(e, f), nobj("owner-a"), fsm_DW, fsa_RW}, FALSE),
		C_NLM(NLM4_VERS, NLMPROC_SHARE, nlm4_shareargs, ck,
		      {"fuzzhost", nfh(e, f), nobj("owner-b"), fsm_DN, fsa_W}, FALSE),
		C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, TRUE, lk4(e, f, SVID_A, 0, 0),
		      FALSE, 3),
		C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, TRUE, TRUE, lk4(e, f, SVID_TAKE, 0, 0),
		      FALSE, 3),
		{"SM_NOTIFY", SM_PROG, SM_VERS, SM_NOTIFY, AUTH_ROOT, (xdrproc_t)xdr_stat_chge,
		 &(stat_chge){"fuzzhost", 7}},
		C_NLM(NLM4_VERS, NLMPROC_TEST, nlm4_testargs, ck, TRUE, lk4(e, f, SVID_TAKE, 0, 0)),
	};
	emit_seq("seq_nlm_share_notify", sh, sizeof sh / sizeof sh[0], false, 0xc0);
	/* The _MSG calls: their results come back as _RES calls to the client host. */
	struct call m[] = {
		C_NLM(NLM4_VERS, NLMPROC_LOCK_MSG, nlm4_lockargs, ck, FALSE, TRUE,
		      lk4(e, FZ_OBJ_DIR_A, SVID_A, 0, 10), FALSE, 3),
		C_NLM(NLM4_VERS, NLMPROC_TEST_MSG, nlm4_testargs, ck, TRUE,
		      lk4(e, FZ_OBJ_DIR_A, SVID_TAKE, 5, 1)),
		C_NLM(NLM4_VERS, NLMPROC_LOCK_MSG, nlm4_lockargs, ck, TRUE, TRUE,
		      lk4(e, FZ_OBJ_DIR_A, SVID_TAKE, 5, 1), FALSE, 3),
		C_NLM(NLM4_VERS, NLMPROC_UNLOCK_MSG, nlm4_unlockargs, ck, lk4(e, FZ_OBJ_DIR_A, SVID_A, 0, 0)),
		C_NLM(NLM4_VERS, NLMPROC_CANCEL_MSG, nlm4_cancargs, ck, TRUE, TRUE,
		      lk4(e, FZ_OBJ_DIR_A, SVID_TAKE, 5, 1)),
		C_NLM(NLM4_VERS, NLMPROC_UNLOCK_MSG, nlm4_unlockargs, ck,
		      lk4(e, FZ_OBJ_DIR_A, SVID_TAKE, 0, 0)),
	};
	emit_seq("seq_nlm_msg", m, sizeof m / sizeof m[0], false, 0x3f);
	/* Version 1 and 3 clients, and a version 4 one, on the same file. */
	struct call v1[] = {
		C_NLM(NLM_VERS, NLMPROC_LOCK, nlm_lockargs, ck, FALSE, TRUE, lk1(e, f, SVID_A, 0, 0),
		      FALSE, 1),
		C_NLM(NLM4_VERS, NLMPROC_TEST, nlm4_testargs, ck, TRUE,
		      lk4(e, f, SVID_TAKE, 1ull << 33, 1)),
		C_NLM(NLM_VERS, NLMPROC_TEST, nlm_testargs, ck, FALSE, lk1(e, f, SVID_TAKE, 7, 1)),
		C_NLM(NLM_VERSX, NLMPROC_LOCK, nlm_lockargs, ck, TRUE, TRUE,
		      lk1(e, f, SVID_TAKE, 100, 1), FALSE, 1),
		C_NLM(NLM_VERS, NLMPROC_UNLOCK, nlm_unlockargs, ck, lk1(e, f, SVID_A, 0, 0)),
		C_NLM(NLM_VERSX, NLMPROC_SHARE, nlm_shareargs, ck,
		      {"fuzzhost", nfh(e, f), nobj("owner-b"), fsm_DR, fsa_RW}, FALSE),
		C_NLM(NLM_VERSX, NLMPROC_FREE_ALL, nlm_notify, "fuzzhost", 0),
	};
	emit_seq("seq_nlm_v1", v1, sizeof v1 / sizeof v1[0], false, 0x0b);
	/* A local service registers, is found, and goes. */
	RPCB set = {400123, 1, "udp", "127.0.0.1.16.225", "superuser"};
	RPCB get = {400123, 1, "udp", "", ""};
	struct pmap pm = {400123, 1, IPPROTO_UDP, 0}, pm2 = {400125, 2, IPPROTO_TCP, 999};
	struct call p[] = {
		{"RPCB_SET", PMAPPROG, 3, RPCBPROC_SET, AUTH_ROOT, (xdrproc_t)xdr_rpcb, &set},
		{"RPCB_GETADDR", PMAPPROG, 4, RPCBPROC_GETADDR, AUTH_ROOT, (xdrproc_t)xdr_rpcb, &get},
		{"PMAP_GETPORT", PMAPPROG, 2, PMAPPROC_GETPORT, AUTH_ROOT, (xdrproc_t)xdr_pmap, &pm},
		{"PMAP_SET", PMAPPROG, 2, PMAPPROC_SET, AUTH_ROOT, (xdrproc_t)xdr_pmap, &pm2},
		{"RPCB_DUMP", PMAPPROG, 4, RPCBPROC_DUMP, AUTH_ROOT, NULL, NULL},
		{"RPCB_GETADDRLIST", PMAPPROG, 4, RPCBPROC_GETADDRLIST, AUTH_ROOT, (xdrproc_t)xdr_rpcb, &get},
		{"RPCB_UNSET", PMAPPROG, 3, RPCBPROC_UNSET, AUTH_ROOT, (xdrproc_t)xdr_rpcb, &set},
		{"PMAP_UNSET", PMAPPROG, 2, PMAPPROC_UNSET, AUTH_ROOT, (xdrproc_t)xdr_pmap, &pm2},
		{"PMAP_DUMP", PMAPPROG, 2, PMAPPROC_DUMP, AUTH_ROOT, NULL, NULL},
	};
	emit_seq("seq_pmap_register", p, sizeof p / sizeof p[0], false, 0x1f);
}

/* ---- sequences, streams ---- */

#define C_NFS(PROC, TYPE, ...) \
	{#PROC, NFS_PROGRAM, NFS_V3, PROC, AUTH_ROOT, (xdrproc_t)xdr_##TYPE, &(TYPE){__VA_ARGS__}}

static void sequences(void)
{
	for (unsigned e = 0; e < FZ_NEXP; e++) {
		char name[64];
		nfs_fh3 last = fh(e, FZ_OBJ_LAST);
		CREATE3args cr = {{fh(e, FZ_OBJ_ROOT), "seq"}, {UNCHECKED, .createhow3_u.obj_attributes =
								    attrs(true, 0666, false, 0)}};
		struct call s[] = {
			C_NFS(NFSPROC3_CREATE, CREATE3args, cr.where, cr.how),
			C_NFS(NFSPROC3_WRITE, WRITE3args, last, 100, 5000, UNSTABLE, {5000, payload}),
			C_NFS(NFSPROC3_WRITE, WRITE3args, last, 5100, 3092, UNSTABLE, {3092, payload}),
			C_NFS(NFSPROC3_COMMIT, COMMIT3args, last, 0, 0),
			C_NFS(NFSPROC3_READ, READ3args, last, 0, 9000),
			C_NFS(NFSPROC3_SETATTR, SETATTR3args, last, attrs(false, 0, true, 1000), {.check = FALSE}),
			C_NFS(NFSPROC3_GETATTR, GETATTR3args, last),
			C_NFS(NFSPROC3_REMOVE, REMOVE3args, {fh(e, FZ_OBJ_ROOT), "seq"}),
		};
		snprintf(name, sizeof name, "seq_write_e%u", e);
		emit_seq(name, s, sizeof s / sizeof s[0], e == FZ_EXP_DIRECT, 0);
		MKDIR3args md = {{fh(e, FZ_OBJ_ROOT), "d"}, attrs(true, 0777, false, 0)};
		struct call t[] = {
			C_NFS(NFSPROC3_MKDIR, MKDIR3args, md.where, md.attributes),
			C_NFS(NFSPROC3_SYMLINK, SYMLINK3args, {last, "s"}, {attrs(false, 0, false, 0), "../file"}),
			C_NFS(NFSPROC3_LOOKUP, LOOKUP3args, {fh(e, FZ_OBJ_ROOT), "d"}),
			C_NFS(NFSPROC3_READDIRPLUS, READDIRPLUS3args, last, 0, {0}, 4096, 8192),
			C_NFS(NFSPROC3_RENAME, RENAME3args, {last, "s"}, {fh(e, FZ_OBJ_ROOT), "s2"}),
			C_NFS(NFSPROC3_RMDIR, RMDIR3args, {fh(e, FZ_OBJ_ROOT), "d"}),
		};
		snprintf(name, sizeof name, "seq_dir_e%u", e);
		emit_seq(name, t, sizeof t / sizeof t[0], false, 0);
	}
	char *p1 = path(FZ_EXP_DIRECT, "");
	struct call m[] = {
		{"mnt", MOUNT_PROGRAM, MOUNT_V3, MOUNTPROC3_MNT, AUTH_ROOT, (xdrproc_t)xdr_dirpath, &p1},
		C_NFS(NFSPROC3_FSINFO, FSINFO3args, fh(FZ_EXP_DIRECT, FZ_OBJ_LAST)),
		C_NFS(NFSPROC3_READDIR, READDIR3args, fh(FZ_EXP_DIRECT, FZ_OBJ_LAST), 0, {0}, 8192),
		{"dump", MOUNT_PROGRAM, MOUNT_V3, MOUNTPROC3_DUMP, AUTH_ROOT, NULL, NULL},
	};
	emit_seq("seq_mount", m, sizeof m / sizeof m[0], true, 0x01);
	/* A WRITE larger than the server's 64 KiB stream buffer: received into a placed record. */
	struct call big[] = {
		C_NFS(NFSPROC3_WRITE, WRITE3args, fh(FZ_EXP_DIRECT, FZ_OBJ_FILE), 12288, 65536, UNSTABLE,
		      {65536, payload}),
		C_NFS(NFSPROC3_COMMIT, COMMIT3args, fh(FZ_EXP_DIRECT, FZ_OBJ_FILE), 0, 0),
	};
	emit_seq("seq_big_write", big, 2, false, 0);
}

/* Record-marking streams: byte 0 picks max_record, bytes 1-2 the receive sizes. */
static void recmark_streams(void)
{
	static const struct { const char *name; uint8_t cfg[3]; uint32_t frags[6]; } s[] = {
		{"one", {11, 255, 255}, {0x80000020}},
		{"two_frags", {11, 7, 3}, {0x10, 0x80000030}},
		{"three_records", {11, 0, 1}, {0x80000004, 0x80000000, 0x80000100}},
		{"large", {11, 100, 255}, {0x80012000}},
		{"over_max", {4, 10, 10}, {0x800, 0x80000100}},
		{"many_small_frags", {7, 3, 2}, {1, 2, 3, 4, 5, 0x80000006}},
		{"empty_frags", {7, 9, 1}, {0, 0, 3, 0, 0x80000001}},
	};
	for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
		struct buf *b = calloc(1, sizeof *b);
		put_bytes(b, s[i].cfg, 3);
		for (int k = 0; k < 6 && s[i].frags[k]; k++) {
			put32(b, s[i].frags[k]);
			for (uint32_t j = 0; j < recmark_len(s[i].frags[k]); j++)
				b->b[b->n++] = (uint8_t)(j * 7 + k);
		}
		save("recmark", s[i].name, b);
		free(b);
	}
}

/* A record of 600 bytes in fragments of one byte, received a few bytes at a time: the growth
 * recasm does must stay linear. */
static void recmark_one_byte_frags(void)
{
	struct buf *b = calloc(1, sizeof *b);
	put_bytes(b, (const uint8_t[]){11, 4, 0}, 3);
	for (uint32_t j = 0; j < 600; j++) {
		put32(b, (j == 599 ? 0x80000000u : 0) | 1);
		b->b[b->n++] = (uint8_t)j;
	}
	save("recmark", "one_byte_frags", b);
	free(b);
}

/* HTTP requests for the metrics endpoint: the scrape as Prometheus sends it, its variants, and
 * what the handler refuses. */
static void http_requests(void)
{
	static const struct { const char *name, *req; } r[] = {
		{"get", "GET /metrics HTTP/1.1\r\nHost: localhost:9101\r\nUser-Agent: Prometheus/2.45\r\n"
			"Accept: text/plain;version=0.0.4;q=1,*/*;q=0.1\r\nAccept-Encoding: gzip\r\n"
			"X-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n"},
		{"get_10", "GET /metrics HTTP/1.0\r\n\r\n"},
		{"head", "HEAD /metrics HTTP/1.1\r\nHost: h\r\n\r\n"},
		{"pipelined", "GET /metrics HTTP/1.1\r\nHost: h\r\n\r\nGET /other HTTP/1.1\r\nHost: h"
			      "\r\n\r\nHEAD /metrics HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"},
		{"post_body", "POST /metrics HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"},
		{"put_chunked", "PUT /metrics HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
				"5\r\nhello\r\n0\r\n\r\n"},
		{"expect", "GET /metrics HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n"
			   "Content-Length: 3\r\n\r\nabc"},
		{"not_found", "GET /metrics/../x?y=%00 HTTP/1.1\r\nHost: h\r\n\r\n"},
		{"bad_version", "GET /metrics HTTP/9.9\r\nHost: h\r\n\r\n"},
		{"no_host", "GET /metrics HTTP/1.1\r\n\r\n"},
		{"cut", "GET /metr"},
	};
	for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
		struct buf *b = calloc(1, sizeof *b);
		put_bytes(b, r[i].req, strlen(r[i].req));
		save("metrics", r[i].name, b);
		free(b);
	}
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
	odd_headers();
	results();
	sequences();
	recmark_streams();
	recmark_one_byte_frags();
	http_requests();
	return 0;
}
