/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Writes the seed corpus of every harness: real calls of every NFSv3 and MOUNT v3 procedure (and
 * the counters program), their arguments encoded with the rpcgen encoders a client uses, file
 * handles and export paths as the placeholders of fz_marks.h. Usage: mkcorpus OUTDIR; it makes
 * OUTDIR/<target>/ for recmark, rpc_call, nfs3_args, mount_args, dispatch and conn.
 * Kept in code rather than in binary files, so a protocol change shows in a diff. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rpc/rpc.h>

#include "fz_marks.h"
#include "mount3_prot.h"
#include "nfs3_prot.h"
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

/* Every target's seed from one call. */
static void emit(const struct call *c)
{
	struct buf *rec = calloc(1, sizeof *rec), *b = calloc(1, sizeof *b);
	record(rec, c);
	save("rpc_call", c->name, rec);
	if (c->prog == NFS_PROGRAM || c->prog == MOUNT_PROGRAM) {
		uint8_t sel = (uint8_t)c->proc;
		put_bytes(b, &sel, 1);
		if (c->enc)
			put_xdr(b, c->enc, c->args);
		save(c->prog == NFS_PROGRAM ? "nfs3_args" : "mount_args", c->name, b);
	}
	b->n = 0;
	put32(b, (uint32_t)rec->n);
	put_bytes(b, rec->b, rec->n);
	save("dispatch", c->name, b);
	b->b[0] |= 0x80;
	save("conn", c->name, b);
	free(rec);
	free(b);
}

/* Several calls: for dispatch one input of records in a row, for conn one stream, with every
 * record cut in two fragments when split is set. */
static void emit_seq(const char *name, const struct call *cs, size_t n, bool split)
{
	struct buf *rec = calloc(1, sizeof *rec), *d = calloc(1, sizeof *d), *s = calloc(1, sizeof *s);
	for (size_t i = 0; i < n; i++) {
		rec->n = 0;
		record(rec, &cs[i]);
		put32(d, (uint32_t)rec->n);
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

	uint8_t mp = 6;
	int flavors[] = {1};
	mountres3 mr = {MNT3_OK, .mountres3_u.mountinfo = {{8, "handle!!"}, {1, flavors}}};
	result("mount_args", "res_mnt", mp + MOUNTPROC3_MNT, (xdrproc_t)xdr_mountres3, &mr);
	mountbody m2 = {"h2", "/b", NULL}, m1 = {"h1", "/a", &m2};
	mountlist ml = &m1;
	result("mount_args", "res_dump", mp + MOUNTPROC3_DUMP, (xdrproc_t)xdr_mountlist, &ml);
	groupnode g = {"127.0.0.1", NULL};
	exportnode x = {"/srv", &g, NULL};
	exports ex = &x;
	result("mount_args", "res_export", mp + MOUNTPROC3_EXPORT, (xdrproc_t)xdr_exports, &ex);
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
		emit_seq(name, s, sizeof s / sizeof s[0], e == FZ_EXP_DIRECT);
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
		emit_seq(name, t, sizeof t / sizeof t[0], false);
	}
	char *p1 = path(FZ_EXP_DIRECT, "");
	struct call m[] = {
		{"mnt", MOUNT_PROGRAM, MOUNT_V3, MOUNTPROC3_MNT, AUTH_ROOT, (xdrproc_t)xdr_dirpath, &p1},
		C_NFS(NFSPROC3_FSINFO, FSINFO3args, fh(FZ_EXP_DIRECT, FZ_OBJ_LAST)),
		C_NFS(NFSPROC3_READDIR, READDIR3args, fh(FZ_EXP_DIRECT, FZ_OBJ_LAST), 0, {0}, 8192),
		{"dump", MOUNT_PROGRAM, MOUNT_V3, MOUNTPROC3_DUMP, AUTH_ROOT, NULL, NULL},
	};
	emit_seq("seq_mount", m, sizeof m / sizeof m[0], true);
	/* A WRITE larger than the server's 64 KiB stream buffer: received into a placed record. */
	struct call big[] = {
		C_NFS(NFSPROC3_WRITE, WRITE3args, fh(FZ_EXP_DIRECT, FZ_OBJ_FILE), 12288, 65536, UNSTABLE,
		      {65536, payload}),
		C_NFS(NFSPROC3_COMMIT, COMMIT3args, fh(FZ_EXP_DIRECT, FZ_OBJ_FILE), 0, 0),
	};
	emit_seq("seq_big_write", big, 2, false);
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
	odd_headers();
	results();
	sequences();
	recmark_streams();
	return 0;
}
