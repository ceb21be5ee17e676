/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mkcorpus's seeds of NFSv3 (every procedure, as root and as users, on each kind of export)
 * and MOUNT v3, of the counters program, of headers the dispatcher decides on alone, and the
 * NFS and MOUNT sequences (create, write, commit, read; directories; mount then use). */
#include "mkcorpus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/recmark.h"

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

#define NFS(NAME, PROC, TYPE, ...) \
	emit(&(struct call){NAME, NFS_PROGRAM, NFS_V3, PROC, AUTH_ROOT, (xdrproc_t)xdr_##TYPE, \
			    &(TYPE){__VA_ARGS__}})
#define NFS_AS(NAME, AUTH, PROC, TYPE, ...) \
	emit(&(struct call){NAME, NFS_PROGRAM, NFS_V3, PROC, AUTH, (xdrproc_t)xdr_##TYPE, \
			    &(TYPE){__VA_ARGS__}})

void nfs3_calls(void)
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

void mount_calls(void)
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
void odd_headers(void)
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

/* ---- sequences ---- */

#define C_NFS(PROC, TYPE, ...) \
	{#PROC, NFS_PROGRAM, NFS_V3, PROC, AUTH_ROOT, (xdrproc_t)xdr_##TYPE, &(TYPE){__VA_ARGS__}}

void sequences(void)
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
