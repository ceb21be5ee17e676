/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NFSv3 codecs: every procedure's arguments and results (both arms of each result union) round
 * trip and refuse every truncation; hand-built wire bytes decode to the RFC 1813 layout;
 * oversized lengths are refused; the zero-copy WRITE decoder and READ encoder. */

/* <rpc/rpc.h> and the usual system headers first: the generated headers must live with them. */
#include <rpc/rpc.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "xdr/mount3_prot.h"
#include "xdr/nfs3_prot.h"
#include "xdr/nfs3_zc.h"
#include "xdr_harness.h"

/* Where filled values keep what they point to. */
struct scratch {
	char fh[4][NFS3_FHSIZE];
	char data[64];
	entry3 e[3];
	entryplus3 ep[3];
};

/* ---- builders of the shared sub-structures ---- */

static nfs_fh3 mk_fh(struct scratch *s, int slot, u_int len)
{
	for (u_int i = 0; i < len; i++)
		s->fh[slot][i] = (char)(0x40 + slot * 16 + i);
	return (nfs_fh3){ .data = { len, s->fh[slot] } };
}

static nfstime3 mk_time(u_int seed)
{
	return (nfstime3){ 1700000000u + seed, 999999999u - seed };
}

static fattr3 mk_fattr(u_int seed)
{
	return (fattr3){
		.type = NF3REG, .mode = 0644 + seed, .nlink = 2 + seed, .uid = 1000 + seed,
		.gid = 2000 + seed, .size = 0x123456789aULL + seed, .used = 0x200000000ULL + seed,
		.rdev = { 8 + seed, 1 + seed }, .fsid = 0xfedcba9876543210ULL + seed,
		.fileid = 0x8000000000000001ULL + seed, .atime = mk_time(seed),
		.mtime = mk_time(seed + 1), .ctime = mk_time(seed + 2),
	};
}

static post_op_attr mk_poa(u_int seed)
{
	return (post_op_attr){ .attributes_follow = TRUE, .post_op_attr_u.attributes = mk_fattr(seed) };
}

static wcc_data mk_wcc(u_int seed)
{
	wcc_data w = { .before.attributes_follow = TRUE, .after = mk_poa(seed) };
	w.before.pre_op_attr_u.attributes =
		(wcc_attr){ 4096 + seed, mk_time(seed + 3), mk_time(seed + 4) };
	return w;
}

/* Every field set, atime from the client and mtime from the server clock. */
static sattr3 mk_sattr_all(void)
{
	sattr3 a = {
		.mode = { TRUE, .set_mode3_u.mode = 0755 },
		.uid = { TRUE, .set_uid3_u.uid = 65534 },
		.gid = { TRUE, .set_gid3_u.gid = 100 },
		.size = { TRUE, .set_size3_u.size = 0x100000000ULL },
		.atime = { SET_TO_CLIENT_TIME, .set_atime_u.atime = { 12345, 678 } },
		.mtime = { .set_it = SET_TO_SERVER_TIME },
	};
	return a;
}

static sattr3 mk_sattr_mode(mode3 mode)
{
	return (sattr3){ .mode = { TRUE, .set_mode3_u.mode = mode } };
}

static diropargs3 mk_dirop(struct scratch *s, int slot, char *name)
{
	return (diropargs3){ mk_fh(s, slot, 24 + (u_int)slot), name };
}

static post_op_fh3 mk_pofh(struct scratch *s, int slot)
{
	return (post_op_fh3){ TRUE, .post_op_fh3_u.handle = mk_fh(s, slot, NFS3_FHSIZE) };
}

/* ---- field comparators ---- */

static void chk_fh(const nfs_fh3 *w, const nfs_fh3 *g)
{
	assert_int_equal(w->data.data_len, g->data.data_len);
	if (w->data.data_len)
		assert_memory_equal(w->data.data_val, g->data.data_val, w->data.data_len);
}

static void chk_time(const nfstime3 *w, const nfstime3 *g)
{
	assert_int_equal(w->seconds, g->seconds);
	assert_int_equal(w->nseconds, g->nseconds);
}

static void chk_fattr(const fattr3 *w, const fattr3 *g)
{
	assert_int_equal(w->type, g->type);
	assert_int_equal(w->mode, g->mode);
	assert_int_equal(w->nlink, g->nlink);
	assert_int_equal(w->uid, g->uid);
	assert_int_equal(w->gid, g->gid);
	assert_int_equal(w->size, g->size);
	assert_int_equal(w->used, g->used);
	assert_int_equal(w->rdev.specdata1, g->rdev.specdata1);
	assert_int_equal(w->rdev.specdata2, g->rdev.specdata2);
	assert_int_equal(w->fsid, g->fsid);
	assert_int_equal(w->fileid, g->fileid);
	chk_time(&w->atime, &g->atime);
	chk_time(&w->mtime, &g->mtime);
	chk_time(&w->ctime, &g->ctime);
}

static void chk_poa(const post_op_attr *w, const post_op_attr *g)
{
	assert_int_equal(w->attributes_follow, g->attributes_follow);
	if (w->attributes_follow)
		chk_fattr(&w->post_op_attr_u.attributes, &g->post_op_attr_u.attributes);
}

static void chk_wcc(const wcc_data *w, const wcc_data *g)
{
	assert_int_equal(w->before.attributes_follow, g->before.attributes_follow);
	if (w->before.attributes_follow) {
		const wcc_attr *wa = &w->before.pre_op_attr_u.attributes;
		const wcc_attr *ga = &g->before.pre_op_attr_u.attributes;
		assert_int_equal(wa->size, ga->size);
		chk_time(&wa->mtime, &ga->mtime);
		chk_time(&wa->ctime, &ga->ctime);
	}
	chk_poa(&w->after, &g->after);
}

static void chk_pofh(const post_op_fh3 *w, const post_op_fh3 *g)
{
	assert_int_equal(w->handle_follows, g->handle_follows);
	if (w->handle_follows)
		chk_fh(&w->post_op_fh3_u.handle, &g->post_op_fh3_u.handle);
}

static void chk_sattr(const sattr3 *w, const sattr3 *g)
{
	assert_int_equal(w->mode.set_it, g->mode.set_it);
	if (w->mode.set_it)
		assert_int_equal(w->mode.set_mode3_u.mode, g->mode.set_mode3_u.mode);
	assert_int_equal(w->uid.set_it, g->uid.set_it);
	if (w->uid.set_it)
		assert_int_equal(w->uid.set_uid3_u.uid, g->uid.set_uid3_u.uid);
	assert_int_equal(w->gid.set_it, g->gid.set_it);
	if (w->gid.set_it)
		assert_int_equal(w->gid.set_gid3_u.gid, g->gid.set_gid3_u.gid);
	assert_int_equal(w->size.set_it, g->size.set_it);
	if (w->size.set_it)
		assert_int_equal(w->size.set_size3_u.size, g->size.set_size3_u.size);
	assert_int_equal(w->atime.set_it, g->atime.set_it);
	if (w->atime.set_it == SET_TO_CLIENT_TIME)
		chk_time(&w->atime.set_atime_u.atime, &g->atime.set_atime_u.atime);
	assert_int_equal(w->mtime.set_it, g->mtime.set_it);
	if (w->mtime.set_it == SET_TO_CLIENT_TIME)
		chk_time(&w->mtime.set_mtime_u.mtime, &g->mtime.set_mtime_u.mtime);
}

static void chk_dirop(const diropargs3 *w, const diropargs3 *g)
{
	chk_fh(&w->dir, &g->dir);
	assert_string_equal(w->name, g->name);
}

static void chk_opaque(u_int wlen, const char *w, u_int glen, const char *g)
{
	assert_int_equal(wlen, glen);
	if (wlen)
		assert_memory_equal(w, g, wlen);
}

/* ---- per-type fill and check functions ---- */

#define ARGS_CHECK(T, body) \
	static void chk_##T(const void *wv, const void *gv) \
	{ \
		const T *w = wv, *g = gv; \
		body \
	}

/* Checks the status, then the resok or resfail arm as `w` and `g`. */
#define RES_CHECK(T, okbody, failbody) \
	static void chk_##T(const void *wv, const void *gv) \
	{ \
		const T *W = wv, *G = gv; \
		assert_int_equal(W->status, G->status); \
		if (W->status == NFS3_OK) { \
			const T##ok *w = &W->T##_u.resok, *g = &G->T##_u.resok; \
			okbody \
		} else { \
			const T##fail *w = &W->T##_u.resfail, *g = &G->T##_u.resfail; \
			failbody \
		} \
	}

#define FILL(fname, T) static void fill_##fname(void *v, void *sv) \
	{ \
		T *x = v; \
		struct scratch *s = sv; \
		(void)s;
#define END }

/* GETATTR */
FILL(getattr_args, GETATTR3args) x->object = mk_fh(s, 0, 32); END
FILL(getattr_res_ok, GETATTR3res) x->GETATTR3res_u.resok.obj_attributes = mk_fattr(1); END
FILL(getattr_res_fail, GETATTR3res) x->status = NFS3ERR_STALE; END
ARGS_CHECK(GETATTR3args, chk_fh(&w->object, &g->object);)
static void chk_GETATTR3res(const void *wv, const void *gv)
{
	const GETATTR3res *w = wv, *g = gv;
	assert_int_equal(w->status, g->status);
	if (w->status == NFS3_OK)
		chk_fattr(&w->GETATTR3res_u.resok.obj_attributes,
			  &g->GETATTR3res_u.resok.obj_attributes);
}

/* SETATTR */
FILL(setattr_args_all, SETATTR3args)
	x->object = mk_fh(s, 0, 8);
	x->new_attributes = mk_sattr_all();
	x->guard = (sattrguard3){ TRUE, .sattrguard3_u.obj_ctime = mk_time(9) };
END
FILL(setattr_args_none, SETATTR3args)
	x->object = mk_fh(s, 0, 1);
	x->new_attributes.atime.set_it = SET_TO_SERVER_TIME;
	x->new_attributes.mtime = (set_mtime){ SET_TO_CLIENT_TIME, .set_mtime_u.mtime = mk_time(5) };
END
FILL(setattr_res_ok, SETATTR3res) x->SETATTR3res_u.resok.obj_wcc = mk_wcc(2); END
FILL(setattr_res_fail, SETATTR3res)
	x->status = NFS3ERR_NOT_SYNC;
	x->SETATTR3res_u.resfail.obj_wcc.after = mk_poa(3);
END
ARGS_CHECK(SETATTR3args,
	chk_fh(&w->object, &g->object);
	chk_sattr(&w->new_attributes, &g->new_attributes);
	assert_int_equal(w->guard.check, g->guard.check);
	if (w->guard.check)
		chk_time(&w->guard.sattrguard3_u.obj_ctime, &g->guard.sattrguard3_u.obj_ctime);)
RES_CHECK(SETATTR3res, chk_wcc(&w->obj_wcc, &g->obj_wcc);, chk_wcc(&w->obj_wcc, &g->obj_wcc);)

/* LOOKUP */
FILL(lookup_args, LOOKUP3args) x->what = mk_dirop(s, 0, "file.txt"); END
FILL(lookup_res_ok, LOOKUP3res)
	x->LOOKUP3res_u.resok.object = mk_fh(s, 1, 28);
	x->LOOKUP3res_u.resok.obj_attributes = mk_poa(3);
END
FILL(lookup_res_fail, LOOKUP3res)
	x->status = NFS3ERR_NOENT;
	x->LOOKUP3res_u.resfail.dir_attributes = mk_poa(4);
END
ARGS_CHECK(LOOKUP3args, chk_dirop(&w->what, &g->what);)
RES_CHECK(LOOKUP3res,
	chk_fh(&w->object, &g->object);
	chk_poa(&w->obj_attributes, &g->obj_attributes);
	chk_poa(&w->dir_attributes, &g->dir_attributes);,
	chk_poa(&w->dir_attributes, &g->dir_attributes);)

/* ACCESS */
FILL(access_args, ACCESS3args)
	x->object = mk_fh(s, 0, 16);
	x->access = ACCESS3_READ | ACCESS3_LOOKUP | ACCESS3_MODIFY | ACCESS3_EXTEND |
		    ACCESS3_DELETE | ACCESS3_EXECUTE;
END
FILL(access_res_ok, ACCESS3res)
	x->ACCESS3res_u.resok.obj_attributes = mk_poa(5);
	x->ACCESS3res_u.resok.access = ACCESS3_READ | ACCESS3_EXECUTE;
END
FILL(access_res_fail, ACCESS3res) x->status = NFS3ERR_BADHANDLE; END
ARGS_CHECK(ACCESS3args, chk_fh(&w->object, &g->object); assert_int_equal(w->access, g->access);)
RES_CHECK(ACCESS3res,
	chk_poa(&w->obj_attributes, &g->obj_attributes);
	assert_int_equal(w->access, g->access);,
	chk_poa(&w->obj_attributes, &g->obj_attributes);)

/* READLINK */
FILL(readlink_args, READLINK3args) x->symlink = mk_fh(s, 0, 20); END
FILL(readlink_res_ok, READLINK3res)
	x->READLINK3res_u.resok.symlink_attributes = mk_poa(6);
	x->READLINK3res_u.resok.data = "../some/target";
END
FILL(readlink_res_fail, READLINK3res) x->status = NFS3ERR_INVAL; END
ARGS_CHECK(READLINK3args, chk_fh(&w->symlink, &g->symlink);)
RES_CHECK(READLINK3res,
	chk_poa(&w->symlink_attributes, &g->symlink_attributes);
	assert_string_equal(w->data, g->data);,
	chk_poa(&w->symlink_attributes, &g->symlink_attributes);)

/* READ */
FILL(read_args, READ3args)
	x->file = mk_fh(s, 0, 32);
	x->offset = 0x100000001ULL;
	x->count = 65536;
END
FILL(read_res_ok, READ3res)
	READ3resok *ok = &x->READ3res_u.resok;
	memcpy(s->data, "hello", 5);
	ok->file_attributes = mk_poa(7);
	ok->count = 5;
	ok->eof = TRUE;
	ok->data.data_len = 5;
	ok->data.data_val = s->data;
END
FILL(read_res_fail, READ3res)
	x->status = NFS3ERR_IO;
	x->READ3res_u.resfail.file_attributes = mk_poa(8);
END
ARGS_CHECK(READ3args,
	chk_fh(&w->file, &g->file);
	assert_int_equal(w->offset, g->offset);
	assert_int_equal(w->count, g->count);)
RES_CHECK(READ3res,
	chk_poa(&w->file_attributes, &g->file_attributes);
	assert_int_equal(w->count, g->count);
	assert_int_equal(w->eof, g->eof);
	chk_opaque(w->data.data_len, w->data.data_val, g->data.data_len, g->data.data_val);,
	chk_poa(&w->file_attributes, &g->file_attributes);)

/* WRITE */
FILL(write_args, WRITE3args)
	memcpy(s->data, "1234567", 7);
	x->file = mk_fh(s, 0, 32);
	x->offset = 0x200000003ULL;
	x->count = 7;
	x->stable = FILE_SYNC;
	x->data.data_len = 7;
	x->data.data_val = s->data;
END
FILL(write_res_ok, WRITE3res)
	WRITE3resok *ok = &x->WRITE3res_u.resok;
	ok->file_wcc = mk_wcc(9);
	ok->count = 7;
	ok->committed = DATA_SYNC;
	memcpy(ok->verf, "verifier", NFS3_WRITEVERFSIZE);
END
FILL(write_res_fail, WRITE3res)
	x->status = NFS3ERR_NOSPC;
	x->WRITE3res_u.resfail.file_wcc = mk_wcc(10);
END
ARGS_CHECK(WRITE3args,
	chk_fh(&w->file, &g->file);
	assert_int_equal(w->offset, g->offset);
	assert_int_equal(w->count, g->count);
	assert_int_equal(w->stable, g->stable);
	chk_opaque(w->data.data_len, w->data.data_val, g->data.data_len, g->data.data_val);)
RES_CHECK(WRITE3res,
	chk_wcc(&w->file_wcc, &g->file_wcc);
	assert_int_equal(w->count, g->count);
	assert_int_equal(w->committed, g->committed);
	assert_memory_equal(w->verf, g->verf, NFS3_WRITEVERFSIZE);,
	chk_wcc(&w->file_wcc, &g->file_wcc);)

/* CREATE: the three modes, two arms of createhow3 */
FILL(create_args_unchecked, CREATE3args)
	x->where = mk_dirop(s, 0, "new");
	x->how.mode = UNCHECKED;
	x->how.createhow3_u.obj_attributes = mk_sattr_all();
END
FILL(create_args_guarded, CREATE3args)
	x->where = mk_dirop(s, 1, "guarded-file-name");
	x->how.mode = GUARDED;
	x->how.createhow3_u.obj_attributes = mk_sattr_mode(0600);
END
FILL(create_args_exclusive, CREATE3args)
	x->where = mk_dirop(s, 2, "x");
	x->how.mode = EXCLUSIVE;
	memcpy(x->how.createhow3_u.verf, "\x01\x02\x03\x04\x05\x06\x07\x08", NFS3_CREATEVERFSIZE);
END
FILL(create_res_ok, CREATE3res)
	x->CREATE3res_u.resok.obj = mk_pofh(s, 0);
	x->CREATE3res_u.resok.obj_attributes = mk_poa(11);
	x->CREATE3res_u.resok.dir_wcc = mk_wcc(12);
END
FILL(create_res_fail, CREATE3res)
	x->status = NFS3ERR_EXIST;
	x->CREATE3res_u.resfail.dir_wcc = mk_wcc(13);
END
ARGS_CHECK(CREATE3args,
	chk_dirop(&w->where, &g->where);
	assert_int_equal(w->how.mode, g->how.mode);
	if (w->how.mode == EXCLUSIVE)
		assert_memory_equal(w->how.createhow3_u.verf, g->how.createhow3_u.verf,
				    NFS3_CREATEVERFSIZE);
	else
		chk_sattr(&w->how.createhow3_u.obj_attributes, &g->how.createhow3_u.obj_attributes);)

/* The results of CREATE, MKDIR, SYMLINK and MKNOD share one shape. */
#define NEWOBJ_RES_CHECK(T) RES_CHECK(T, \
	chk_pofh(&w->obj, &g->obj); \
	chk_poa(&w->obj_attributes, &g->obj_attributes); \
	chk_wcc(&w->dir_wcc, &g->dir_wcc);, \
	chk_wcc(&w->dir_wcc, &g->dir_wcc);)
NEWOBJ_RES_CHECK(CREATE3res)

/* MKDIR */
FILL(mkdir_args, MKDIR3args)
	x->where = mk_dirop(s, 0, "subdir");
	x->attributes = mk_sattr_mode(0700);
END
FILL(mkdir_res_ok, MKDIR3res)   /* handle and attributes both absent: allowed by the RFC */
	x->MKDIR3res_u.resok.dir_wcc = mk_wcc(14);
END
FILL(mkdir_res_fail, MKDIR3res) x->status = NFS3ERR_ROFS; END
ARGS_CHECK(MKDIR3args,
	chk_dirop(&w->where, &g->where);
	chk_sattr(&w->attributes, &g->attributes);)
NEWOBJ_RES_CHECK(MKDIR3res)

/* SYMLINK */
FILL(symlink_args, SYMLINK3args)
	x->where = mk_dirop(s, 0, "link");
	x->symlink.symlink_attributes = mk_sattr_mode(0777);
	x->symlink.symlink_data = "/abs/path/to/target";
END
FILL(symlink_res_ok, SYMLINK3res)
	x->SYMLINK3res_u.resok.obj = mk_pofh(s, 1);
	x->SYMLINK3res_u.resok.obj_attributes = mk_poa(15);
END
FILL(symlink_res_fail, SYMLINK3res)
	x->status = NFS3ERR_NAMETOOLONG;
	x->SYMLINK3res_u.resfail.dir_wcc = mk_wcc(16);
END
ARGS_CHECK(SYMLINK3args,
	chk_dirop(&w->where, &g->where);
	chk_sattr(&w->symlink.symlink_attributes, &g->symlink.symlink_attributes);
	assert_string_equal(w->symlink.symlink_data, g->symlink.symlink_data);)
NEWOBJ_RES_CHECK(SYMLINK3res)

/* MKNOD: device, pipe and the void arm */
FILL(mknod_args_chr, MKNOD3args)
	x->where = mk_dirop(s, 0, "tty0");
	x->what.type = NF3CHR;
	x->what.mknoddata3_u.device = (devicedata3){ mk_sattr_mode(0620), { 4, 64 } };
END
FILL(mknod_args_fifo, MKNOD3args)
	x->where = mk_dirop(s, 1, "fifo");
	x->what.type = NF3FIFO;
	x->what.mknoddata3_u.pipe_attributes = mk_sattr_all();
END
FILL(mknod_args_reg, MKNOD3args)   /* NF3REG has no arm; the handler answers BADTYPE */
	x->where = mk_dirop(s, 2, "regular");
	x->what.type = NF3REG;
END
FILL(mknod_res_ok, MKNOD3res)
	x->MKNOD3res_u.resok.obj = mk_pofh(s, 2);
	x->MKNOD3res_u.resok.obj_attributes = mk_poa(17);
	x->MKNOD3res_u.resok.dir_wcc = mk_wcc(18);
END
FILL(mknod_res_fail, MKNOD3res) x->status = NFS3ERR_BADTYPE; END
ARGS_CHECK(MKNOD3args,
	chk_dirop(&w->where, &g->where);
	assert_int_equal(w->what.type, g->what.type);
	if (w->what.type == NF3CHR || w->what.type == NF3BLK) {
		const devicedata3 *wd = &w->what.mknoddata3_u.device;
		const devicedata3 *gd = &g->what.mknoddata3_u.device;
		chk_sattr(&wd->dev_attributes, &gd->dev_attributes);
		assert_int_equal(wd->spec.specdata1, gd->spec.specdata1);
		assert_int_equal(wd->spec.specdata2, gd->spec.specdata2);
	} else if (w->what.type == NF3SOCK || w->what.type == NF3FIFO) {
		chk_sattr(&w->what.mknoddata3_u.pipe_attributes,
			  &g->what.mknoddata3_u.pipe_attributes);
	})
NEWOBJ_RES_CHECK(MKNOD3res)

/* REMOVE, RMDIR */
FILL(remove_args, REMOVE3args) x->object = mk_dirop(s, 0, "victim"); END
FILL(remove_res_ok, REMOVE3res) x->REMOVE3res_u.resok.dir_wcc = mk_wcc(19); END
FILL(remove_res_fail, REMOVE3res)
	x->status = NFS3ERR_ACCES;
	x->REMOVE3res_u.resfail.dir_wcc = mk_wcc(20);
END
ARGS_CHECK(REMOVE3args, chk_dirop(&w->object, &g->object);)
RES_CHECK(REMOVE3res, chk_wcc(&w->dir_wcc, &g->dir_wcc);, chk_wcc(&w->dir_wcc, &g->dir_wcc);)

FILL(rmdir_args, RMDIR3args) x->object = mk_dirop(s, 0, "emptydir"); END
FILL(rmdir_res_ok, RMDIR3res) x->RMDIR3res_u.resok.dir_wcc = mk_wcc(21); END
FILL(rmdir_res_fail, RMDIR3res)
	x->status = NFS3ERR_NOTEMPTY;
	x->RMDIR3res_u.resfail.dir_wcc = mk_wcc(22);
END
ARGS_CHECK(RMDIR3args, chk_dirop(&w->object, &g->object);)
RES_CHECK(RMDIR3res, chk_wcc(&w->dir_wcc, &g->dir_wcc);, chk_wcc(&w->dir_wcc, &g->dir_wcc);)

/* RENAME */
FILL(rename_args, RENAME3args)
	x->from = mk_dirop(s, 0, "old name");
	x->to = mk_dirop(s, 1, "new.name");
END
FILL(rename_res_ok, RENAME3res)
	x->RENAME3res_u.resok.fromdir_wcc = mk_wcc(23);
	x->RENAME3res_u.resok.todir_wcc = mk_wcc(24);
END
FILL(rename_res_fail, RENAME3res)
	x->status = NFS3ERR_XDEV;
	x->RENAME3res_u.resfail.todir_wcc = mk_wcc(25);
END
ARGS_CHECK(RENAME3args, chk_dirop(&w->from, &g->from); chk_dirop(&w->to, &g->to);)
RES_CHECK(RENAME3res,
	chk_wcc(&w->fromdir_wcc, &g->fromdir_wcc); chk_wcc(&w->todir_wcc, &g->todir_wcc);,
	chk_wcc(&w->fromdir_wcc, &g->fromdir_wcc); chk_wcc(&w->todir_wcc, &g->todir_wcc);)

/* LINK */
FILL(link_args, LINK3args)
	x->file = mk_fh(s, 0, 12);
	x->link = mk_dirop(s, 1, "hardlink");
END
FILL(link_res_ok, LINK3res)
	x->LINK3res_u.resok.file_attributes = mk_poa(26);
	x->LINK3res_u.resok.linkdir_wcc = mk_wcc(27);
END
FILL(link_res_fail, LINK3res)
	x->status = NFS3ERR_MLINK;
	x->LINK3res_u.resfail.file_attributes = mk_poa(28);
END
ARGS_CHECK(LINK3args, chk_fh(&w->file, &g->file); chk_dirop(&w->link, &g->link);)
RES_CHECK(LINK3res,
	chk_poa(&w->file_attributes, &g->file_attributes);
	chk_wcc(&w->linkdir_wcc, &g->linkdir_wcc);,
	chk_poa(&w->file_attributes, &g->file_attributes);
	chk_wcc(&w->linkdir_wcc, &g->linkdir_wcc);)

/* READDIR */
FILL(readdir_args, READDIR3args)
	x->dir = mk_fh(s, 0, 32);
	x->cookie = 0xffffffff00000001ULL;
	memcpy(x->cookieverf, "cookieV!", NFS3_COOKIEVERFSIZE);
	x->count = 8192;
END
FILL(readdir_res_ok, READDIR3res)
	static char *const names[3] = { ".", "..", "a-longer-file-name" };
	READDIR3resok *ok = &x->READDIR3res_u.resok;
	ok->dir_attributes = mk_poa(29);
	memcpy(ok->cookieverf, "\0\1\2\3\4\5\6\7", NFS3_COOKIEVERFSIZE);
	for (int i = 0; i < 3; i++) {
		s->e[i] = (entry3){ 100u + (u_int)i, names[i], 0x10000000000ULL * (u_int)(i + 1),
				    i < 2 ? &s->e[i + 1] : NULL };
	}
	ok->reply.entries = &s->e[0];
	ok->reply.eof = TRUE;
END
FILL(readdir_res_empty, READDIR3res)   /* no entries, not at the end */
	x->READDIR3res_u.resok.dir_attributes = mk_poa(30);
END
FILL(readdir_res_fail, READDIR3res) x->status = NFS3ERR_BAD_COOKIE; END
ARGS_CHECK(READDIR3args,
	chk_fh(&w->dir, &g->dir);
	assert_int_equal(w->cookie, g->cookie);
	assert_memory_equal(w->cookieverf, g->cookieverf, NFS3_COOKIEVERFSIZE);
	assert_int_equal(w->count, g->count);)
static void chk_entries(const entry3 *w, const entry3 *g)
{
	for (; w; w = w->nextentry, g = g->nextentry) {
		assert_non_null(g);
		assert_int_equal(w->fileid, g->fileid);
		assert_string_equal(w->name, g->name);
		assert_int_equal(w->cookie, g->cookie);
	}
	assert_null(g);
}
RES_CHECK(READDIR3res,
	chk_poa(&w->dir_attributes, &g->dir_attributes);
	assert_memory_equal(w->cookieverf, g->cookieverf, NFS3_COOKIEVERFSIZE);
	chk_entries(w->reply.entries, g->reply.entries);
	assert_int_equal(w->reply.eof, g->reply.eof);,
	chk_poa(&w->dir_attributes, &g->dir_attributes);)

/* READDIRPLUS */
FILL(readdirplus_args, READDIRPLUS3args)
	x->dir = mk_fh(s, 0, 32);
	x->cookie = 3;
	memcpy(x->cookieverf, "\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8", NFS3_COOKIEVERFSIZE);
	x->dircount = 4096;
	x->maxcount = 32768;
END
FILL(readdirplus_res_ok, READDIRPLUS3res)   /* entries with and without attributes/handle */
	static char *const names[3] = { "a", "bb", "ccc" };
	READDIRPLUS3resok *ok = &x->READDIRPLUS3res_u.resok;
	ok->dir_attributes = mk_poa(31);
	for (int i = 0; i < 3; i++) {
		entryplus3 *e = &s->ep[i];
		*e = (entryplus3){ .fileid = 200u + (u_int)i, .name = names[i], .cookie = 4u + (u_int)i,
				   .nextentry = i < 2 ? &s->ep[i + 1] : NULL };
		if (i != 1)
			e->name_attributes = mk_poa(32 + (u_int)i);
		if (i != 2)
			e->name_handle = mk_pofh(s, i);
	}
	ok->reply.entries = &s->ep[0];
	ok->reply.eof = FALSE;
END
FILL(readdirplus_res_fail, READDIRPLUS3res)
	x->status = NFS3ERR_NOTSUPP;
	x->READDIRPLUS3res_u.resfail.dir_attributes = mk_poa(35);
END
ARGS_CHECK(READDIRPLUS3args,
	chk_fh(&w->dir, &g->dir);
	assert_int_equal(w->cookie, g->cookie);
	assert_memory_equal(w->cookieverf, g->cookieverf, NFS3_COOKIEVERFSIZE);
	assert_int_equal(w->dircount, g->dircount);
	assert_int_equal(w->maxcount, g->maxcount);)
static void chk_entriesplus(const entryplus3 *w, const entryplus3 *g)
{
	for (; w; w = w->nextentry, g = g->nextentry) {
		assert_non_null(g);
		assert_int_equal(w->fileid, g->fileid);
		assert_string_equal(w->name, g->name);
		assert_int_equal(w->cookie, g->cookie);
		chk_poa(&w->name_attributes, &g->name_attributes);
		chk_pofh(&w->name_handle, &g->name_handle);
	}
	assert_null(g);
}
RES_CHECK(READDIRPLUS3res,
	chk_poa(&w->dir_attributes, &g->dir_attributes);
	assert_memory_equal(w->cookieverf, g->cookieverf, NFS3_COOKIEVERFSIZE);
	chk_entriesplus(w->reply.entries, g->reply.entries);
	assert_int_equal(w->reply.eof, g->reply.eof);,
	chk_poa(&w->dir_attributes, &g->dir_attributes);)

/* FSSTAT */
FILL(fsstat_args, FSSTAT3args) x->fsroot = mk_fh(s, 0, 32); END
FILL(fsstat_res_ok, FSSTAT3res)
	x->FSSTAT3res_u.resok = (FSSTAT3resok){ mk_poa(36), 1ULL << 40, 1ULL << 39, 1ULL << 38,
		1000000, 900000, 800000, 0 };
END
FILL(fsstat_res_fail, FSSTAT3res) x->status = NFS3ERR_SERVERFAULT; END
ARGS_CHECK(FSSTAT3args, chk_fh(&w->fsroot, &g->fsroot);)
RES_CHECK(FSSTAT3res,
	chk_poa(&w->obj_attributes, &g->obj_attributes);
	assert_int_equal(w->tbytes, g->tbytes);
	assert_int_equal(w->fbytes, g->fbytes);
	assert_int_equal(w->abytes, g->abytes);
	assert_int_equal(w->tfiles, g->tfiles);
	assert_int_equal(w->ffiles, g->ffiles);
	assert_int_equal(w->afiles, g->afiles);
	assert_int_equal(w->invarsec, g->invarsec);,
	chk_poa(&w->obj_attributes, &g->obj_attributes);)

/* FSINFO */
FILL(fsinfo_args, FSINFO3args) x->fsroot = mk_fh(s, 0, 32); END
FILL(fsinfo_res_ok, FSINFO3res)
	x->FSINFO3res_u.resok = (FSINFO3resok){ mk_poa(37), 1048576, 1048576, 4096, 1048576,
		1048576, 4096, 65536, 0x7fffffffffffffffULL, { 0, 1 },
		FSF3_LINK | FSF3_SYMLINK | FSF3_HOMOGENEOUS | FSF3_CANSETTIME };
END
FILL(fsinfo_res_fail, FSINFO3res)
	x->status = NFS3ERR_STALE;
	x->FSINFO3res_u.resfail.obj_attributes = mk_poa(38);
END
ARGS_CHECK(FSINFO3args, chk_fh(&w->fsroot, &g->fsroot);)
RES_CHECK(FSINFO3res,
	chk_poa(&w->obj_attributes, &g->obj_attributes);
	assert_int_equal(w->rtmax, g->rtmax);
	assert_int_equal(w->rtpref, g->rtpref);
	assert_int_equal(w->rtmult, g->rtmult);
	assert_int_equal(w->wtmax, g->wtmax);
	assert_int_equal(w->wtpref, g->wtpref);
	assert_int_equal(w->wtmult, g->wtmult);
	assert_int_equal(w->dtpref, g->dtpref);
	assert_int_equal(w->maxfilesize, g->maxfilesize);
	chk_time(&w->time_delta, &g->time_delta);
	assert_int_equal(w->properties, g->properties);,
	chk_poa(&w->obj_attributes, &g->obj_attributes);)

/* PATHCONF */
FILL(pathconf_args, PATHCONF3args) x->object = mk_fh(s, 0, 32); END
FILL(pathconf_res_ok, PATHCONF3res)
	x->PATHCONF3res_u.resok = (PATHCONF3resok){ mk_poa(39), 65000, 255, TRUE, TRUE, FALSE, TRUE };
END
FILL(pathconf_res_fail, PATHCONF3res) x->status = NFS3ERR_IO; END
ARGS_CHECK(PATHCONF3args, chk_fh(&w->object, &g->object);)
RES_CHECK(PATHCONF3res,
	chk_poa(&w->obj_attributes, &g->obj_attributes);
	assert_int_equal(w->linkmax, g->linkmax);
	assert_int_equal(w->name_max, g->name_max);
	assert_int_equal(w->no_trunc, g->no_trunc);
	assert_int_equal(w->chown_restricted, g->chown_restricted);
	assert_int_equal(w->case_insensitive, g->case_insensitive);
	assert_int_equal(w->case_preserving, g->case_preserving);,
	chk_poa(&w->obj_attributes, &g->obj_attributes);)

/* COMMIT */
FILL(commit_args, COMMIT3args)
	x->file = mk_fh(s, 0, 32);
	x->offset = 0x1000;
	x->count = 0;   /* 0: to the end of the file */
END
FILL(commit_res_ok, COMMIT3res)
	x->COMMIT3res_u.resok.file_wcc = mk_wcc(40);
	memcpy(x->COMMIT3res_u.resok.verf, "\xde\xad\xbe\xef\x00\x11\x22\x33", NFS3_WRITEVERFSIZE);
END
FILL(commit_res_fail, COMMIT3res)
	x->status = NFS3ERR_JUKEBOX;
	x->COMMIT3res_u.resfail.file_wcc = mk_wcc(41);
END
ARGS_CHECK(COMMIT3args,
	chk_fh(&w->file, &g->file);
	assert_int_equal(w->offset, g->offset);
	assert_int_equal(w->count, g->count);)
RES_CHECK(COMMIT3res,
	chk_wcc(&w->file_wcc, &g->file_wcc);
	assert_memory_equal(w->verf, g->verf, NFS3_WRITEVERFSIZE);,
	chk_wcc(&w->file_wcc, &g->file_wcc);)

#define CASE(label, T, fname) { label, (xdrproc_t)xdr_##T, sizeof(T), fill_##fname, chk_##T }

static const struct xdr_case nfs3_cases[] = {
	CASE("GETATTR3args", GETATTR3args, getattr_args),
	CASE("GETATTR3res ok", GETATTR3res, getattr_res_ok),
	CASE("GETATTR3res fail", GETATTR3res, getattr_res_fail),
	CASE("SETATTR3args all set, guard", SETATTR3args, setattr_args_all),
	CASE("SETATTR3args none set", SETATTR3args, setattr_args_none),
	CASE("SETATTR3res ok", SETATTR3res, setattr_res_ok),
	CASE("SETATTR3res fail", SETATTR3res, setattr_res_fail),
	CASE("LOOKUP3args", LOOKUP3args, lookup_args),
	CASE("LOOKUP3res ok", LOOKUP3res, lookup_res_ok),
	CASE("LOOKUP3res fail", LOOKUP3res, lookup_res_fail),
	CASE("ACCESS3args", ACCESS3args, access_args),
	CASE("ACCESS3res ok", ACCESS3res, access_res_ok),
	CASE("ACCESS3res fail", ACCESS3res, access_res_fail),
	CASE("READLINK3args", READLINK3args, readlink_args),
	CASE("READLINK3res ok", READLINK3res, readlink_res_ok),
	CASE("READLINK3res fail", READLINK3res, readlink_res_fail),
	CASE("READ3args", READ3args, read_args),
	CASE("READ3res ok", READ3res, read_res_ok),
	CASE("READ3res fail", READ3res, read_res_fail),
	CASE("WRITE3args", WRITE3args, write_args),
	CASE("WRITE3res ok", WRITE3res, write_res_ok),
	CASE("WRITE3res fail", WRITE3res, write_res_fail),
	CASE("CREATE3args unchecked", CREATE3args, create_args_unchecked),
	CASE("CREATE3args guarded", CREATE3args, create_args_guarded),
	CASE("CREATE3args exclusive", CREATE3args, create_args_exclusive),
	CASE("CREATE3res ok", CREATE3res, create_res_ok),
	CASE("CREATE3res fail", CREATE3res, create_res_fail),
	CASE("MKDIR3args", MKDIR3args, mkdir_args),
	CASE("MKDIR3res ok", MKDIR3res, mkdir_res_ok),
	CASE("MKDIR3res fail", MKDIR3res, mkdir_res_fail),
	CASE("SYMLINK3args", SYMLINK3args, symlink_args),
	CASE("SYMLINK3res ok", SYMLINK3res, symlink_res_ok),
	CASE("SYMLINK3res fail", SYMLINK3res, symlink_res_fail),
	CASE("MKNOD3args chr", MKNOD3args, mknod_args_chr),
	CASE("MKNOD3args fifo", MKNOD3args, mknod_args_fifo),
	CASE("MKNOD3args reg (void arm)", MKNOD3args, mknod_args_reg),
	CASE("MKNOD3res ok", MKNOD3res, mknod_res_ok),
	CASE("MKNOD3res fail", MKNOD3res, mknod_res_fail),
	CASE("REMOVE3args", REMOVE3args, remove_args),
	CASE("REMOVE3res ok", REMOVE3res, remove_res_ok),
	CASE("REMOVE3res fail", REMOVE3res, remove_res_fail),
	CASE("RMDIR3args", RMDIR3args, rmdir_args),
	CASE("RMDIR3res ok", RMDIR3res, rmdir_res_ok),
	CASE("RMDIR3res fail", RMDIR3res, rmdir_res_fail),
	CASE("RENAME3args", RENAME3args, rename_args),
	CASE("RENAME3res ok", RENAME3res, rename_res_ok),
	CASE("RENAME3res fail", RENAME3res, rename_res_fail),
	CASE("LINK3args", LINK3args, link_args),
	CASE("LINK3res ok", LINK3res, link_res_ok),
	CASE("LINK3res fail", LINK3res, link_res_fail),
	CASE("READDIR3args", READDIR3args, readdir_args),
	CASE("READDIR3res ok", READDIR3res, readdir_res_ok),
	CASE("READDIR3res ok, empty", READDIR3res, readdir_res_empty),
	CASE("READDIR3res fail", READDIR3res, readdir_res_fail),
	CASE("READDIRPLUS3args", READDIRPLUS3args, readdirplus_args),
	CASE("READDIRPLUS3res ok", READDIRPLUS3res, readdirplus_res_ok),
	CASE("READDIRPLUS3res fail", READDIRPLUS3res, readdirplus_res_fail),
	CASE("FSSTAT3args", FSSTAT3args, fsstat_args),
	CASE("FSSTAT3res ok", FSSTAT3res, fsstat_res_ok),
	CASE("FSSTAT3res fail", FSSTAT3res, fsstat_res_fail),
	CASE("FSINFO3args", FSINFO3args, fsinfo_args),
	CASE("FSINFO3res ok", FSINFO3res, fsinfo_res_ok),
	CASE("FSINFO3res fail", FSINFO3res, fsinfo_res_fail),
	CASE("PATHCONF3args", PATHCONF3args, pathconf_args),
	CASE("PATHCONF3res ok", PATHCONF3res, pathconf_res_ok),
	CASE("PATHCONF3res fail", PATHCONF3res, pathconf_res_fail),
	CASE("COMMIT3args", COMMIT3args, commit_args),
	CASE("COMMIT3res ok", COMMIT3res, commit_res_ok),
	CASE("COMMIT3res fail", COMMIT3res, commit_res_fail),
};

/* ---- wire layout, from bytes written by hand after RFC 1813 ---- */

/* Procedure numbers and sizes are the RFC's. */
static void test_constants(void **state)
{
	(void)state;
	assert_int_equal(NFS_PROGRAM, 100003);
	assert_int_equal(NFS_V3, 3);
	assert_int_equal(NFSPROC3_NULL, 0);
	assert_int_equal(NFSPROC3_READ, 6);
	assert_int_equal(NFSPROC3_WRITE, 7);
	assert_int_equal(NFSPROC3_READDIRPLUS, 17);
	assert_int_equal(NFSPROC3_COMMIT, 21);
	assert_int_equal(NFS3_FHSIZE, 64);
	assert_int_equal(NFS3_COOKIEVERFSIZE, 8);
	assert_int_equal(NFS3_CREATEVERFSIZE, 8);
	assert_int_equal(NFS3_WRITEVERFSIZE, 8);
	assert_int_equal(NFS3ERR_JUKEBOX, 10008);
}

/* An opaque<> handle: length word, bytes, zero padding to 4. */
static void test_wire_fh(void **state)
{
	(void)state;
	char bytes[3] = { (char)0xaa, (char)0xbb, (char)0xcc };
	GETATTR3args a = { .object = { .data = { 3, bytes } } };
	static const uint8_t want[] = { 0, 0, 0, 3, 0xaa, 0xbb, 0xcc, 0 };
	size_t len;
	uint8_t *enc = xdr_encode_alloc((xdrproc_t)xdr_GETATTR3args, &a, &len);

	assert_int_equal(len, sizeof(want));
	assert_memory_equal(enc, want, sizeof(want));
	free(enc);
}

/* fattr3: 32-bit fields stay 4 bytes on the wire and 64-bit ones 8 (84 bytes in all). */
static void test_wire_fattr3(void **state)
{
	(void)state;
	uint8_t buf[4 + 84], *p = buf;
	p = put_be32(p, NFS3_OK);
	p = put_be32(p, NF3DIR);
	p = put_be32(p, 040755);
	p = put_be32(p, 3);                        /* nlink */
	p = put_be32(p, 0xfffffffe);               /* uid */
	p = put_be32(p, 7);                        /* gid */
	p = put_be64(p, 0x0102030405060708ULL);    /* size */
	p = put_be64(p, 0x1112131415161718ULL);    /* used */
	p = put_be32(p, 259);                      /* rdev */
	p = put_be32(p, 260);
	p = put_be64(p, 0xa1a2a3a4a5a6a7a8ULL);    /* fsid */
	p = put_be64(p, 0xb1b2b3b4b5b6b7b8ULL);    /* fileid */
	for (uint32_t t = 0; t < 3; t++) {         /* atime, mtime, ctime */
		p = put_be32(p, 1000 + t);
		p = put_be32(p, 2000 + t);
	}
	assert_int_equal(p - buf, sizeof(buf));

	GETATTR3res r = { 0 };
	assert_true(xdr_decode_exact((xdrproc_t)xdr_GETATTR3res, buf, sizeof(buf), &r));
	const fattr3 *f = &r.GETATTR3res_u.resok.obj_attributes;
	assert_int_equal(f->type, NF3DIR);
	assert_int_equal(f->mode, 040755);
	assert_int_equal(f->nlink, 3);
	assert_int_equal(f->uid, 0xfffffffe);
	assert_int_equal(f->gid, 7);
	assert_int_equal(f->size, 0x0102030405060708ULL);
	assert_int_equal(f->used, 0x1112131415161718ULL);
	assert_int_equal(f->rdev.specdata1, 259);
	assert_int_equal(f->rdev.specdata2, 260);
	assert_int_equal(f->fsid, 0xa1a2a3a4a5a6a7a8ULL);
	assert_int_equal(f->fileid, 0xb1b2b3b4b5b6b7b8ULL);
	assert_int_equal(f->atime.seconds, 1000);
	assert_int_equal(f->mtime.nseconds, 2001);
	assert_int_equal(f->ctime.seconds, 1002);
	xdr_free((xdrproc_t)xdr_GETATTR3res, &r);
}

/* SETATTR as a Linux client sends `chmod 600` plus a client mtime, guard on. */
static void test_wire_sattr3(void **state)
{
	(void)state;
	uint8_t buf[128], *p = buf;
	p = put_be32(p, 4);
	p = put_be32(p, 0x01020304);               /* handle */
	p = put_be32(p, TRUE);
	p = put_be32(p, 0600);                     /* mode */
	p = put_be32(p, FALSE);                    /* uid */
	p = put_be32(p, FALSE);                    /* gid */
	p = put_be32(p, TRUE);
	p = put_be64(p, 1ULL << 33);               /* size */
	p = put_be32(p, DONT_CHANGE);              /* atime */
	p = put_be32(p, SET_TO_CLIENT_TIME);
	p = put_be32(p, 77);
	p = put_be32(p, 88);                       /* mtime */
	p = put_be32(p, TRUE);
	p = put_be32(p, 99);
	p = put_be32(p, 100);                      /* guard ctime */

	SETATTR3args a = { 0 };
	assert_true(xdr_decode_exact((xdrproc_t)xdr_SETATTR3args, buf, (size_t)(p - buf), &a));
	assert_int_equal(a.object.data.data_len, 4);
	assert_true(a.new_attributes.mode.set_it);
	assert_int_equal(a.new_attributes.mode.set_mode3_u.mode, 0600);
	assert_false(a.new_attributes.uid.set_it);
	assert_false(a.new_attributes.gid.set_it);
	assert_int_equal(a.new_attributes.size.set_size3_u.size, 1ULL << 33);
	assert_int_equal(a.new_attributes.atime.set_it, DONT_CHANGE);
	assert_int_equal(a.new_attributes.mtime.set_it, SET_TO_CLIENT_TIME);
	assert_int_equal(a.new_attributes.mtime.set_mtime_u.mtime.seconds, 77);
	assert_int_equal(a.new_attributes.mtime.set_mtime_u.mtime.nseconds, 88);
	assert_true(a.guard.check);
	assert_int_equal(a.guard.sattrguard3_u.obj_ctime.nseconds, 100);
	xdr_free((xdrproc_t)xdr_SETATTR3args, &a);
}

/* READDIR entries are a value_follows-chained list ended by FALSE, then eof. */
static void test_wire_readdir_list(void **state)
{
	(void)state;
	uint8_t buf[128], *p = buf;
	p = put_be32(p, NFS3_OK);
	p = put_be32(p, FALSE);                    /* dir_attributes */
	p = put_be64(p, 0x0102030405060708ULL);    /* cookieverf */
	for (uint32_t i = 0; i < 2; i++) {
		p = put_be32(p, TRUE);             /* value follows */
		p = put_be64(p, 10 + i);           /* fileid */
		p = put_be32(p, 1);
		p = put_be32(p, (uint32_t)('x' + i) << 24);   /* name, padded */
		p = put_be64(p, 20 + i);           /* cookie */
	}
	p = put_be32(p, FALSE);                    /* no more entries */
	p = put_be32(p, TRUE);                     /* eof */

	READDIR3res r = { 0 };
	assert_true(xdr_decode_exact((xdrproc_t)xdr_READDIR3res, buf, (size_t)(p - buf), &r));
	const entry3 *e = r.READDIR3res_u.resok.reply.entries;
	assert_non_null(e);
	assert_string_equal(e->name, "x");
	assert_int_equal(e->fileid, 10);
	assert_non_null(e->nextentry);
	assert_string_equal(e->nextentry->name, "y");
	assert_int_equal(e->nextentry->cookie, 21);
	assert_null(e->nextentry->nextentry);
	assert_true(r.READDIR3res_u.resok.reply.eof);
	xdr_free((xdrproc_t)xdr_READDIR3res, &r);
}

/* ---- oversized lengths ---- */

/* Decodes a hand-built input that must be refused, and frees whatever the decoder took. */
static void assert_refused(xdrproc_t proc, const uint8_t *buf, size_t len, size_t size)
{
	void *val = calloc(1, size);
	assert_non_null(val);
	assert_false(xdr_decode_exact(proc, buf, len, val));
	xdr_free(proc, val);
	free(val);
}

static void test_fh_65_refused(void **state)
{
	(void)state;
	uint8_t buf[4 + 68] = { 0 };
	put_be32(buf, NFS3_FHSIZE + 1);
	assert_refused((xdrproc_t)xdr_nfs_fh3, buf, sizeof(buf), sizeof(nfs_fh3));
	assert_refused((xdrproc_t)xdr_GETATTR3args, buf, sizeof(buf), sizeof(GETATTR3args));

	/* The encoder refuses it too: a server bug must not put it on the wire. */
	char big[NFS3_FHSIZE + 1] = { 0 };
	nfs_fh3 fh = { .data = { sizeof(big), big } };
	char out[256];
	XDR x;
	xdrmem_create(&x, out, sizeof(out), XDR_ENCODE);
	assert_false(xdr_nfs_fh3(&x, &fh));
	xdr_destroy(&x);

	/* 64 bytes is the largest handle and is accepted. */
	put_be32(buf, NFS3_FHSIZE);
	nfs_fh3 ok = { 0 };
	assert_true(xdr_decode_exact((xdrproc_t)xdr_nfs_fh3, buf, 4 + NFS3_FHSIZE, &ok));
	assert_int_equal(ok.data.data_len, NFS3_FHSIZE);
	xdr_free((xdrproc_t)xdr_nfs_fh3, &ok);
}

/* A 2 GiB length in front of a short input is refused. (test_length_bounds checks that the
 * bound, not the missing bytes, refuses it: libtirpc would first try to allocate 2 GiB.) */
static void test_huge_lengths_refused(void **state)
{
	(void)state;
	uint8_t buf[64] = { 0 }, *p;

	p = put_be32(buf, 4);                 /* LOOKUP3args: handle, then the name's length */
	put_be32(p + 4, 0x7fffffff);
	assert_refused((xdrproc_t)xdr_LOOKUP3args, buf, sizeof(buf), sizeof(LOOKUP3args));

	p = put_be32(buf, 4);                 /* WRITE3args: handle, offset, count, stable, data */
	p = put_be64(p + 4, 0);
	p = put_be32(p, 0x7fffffff);
	p = put_be32(p, UNSTABLE);
	put_be32(p, 0x7fffffff);
	assert_refused((xdrproc_t)xdr_WRITE3args, buf, sizeof(buf), sizeof(WRITE3args));
	assert_refused((xdrproc_t)xdr_WRITE3args_zc, buf, sizeof(buf), sizeof(WRITE3args));

	p = put_be32(buf, NFS3_OK);           /* READ3res: no attributes, count, eof, data */
	p = put_be32(p, FALSE);
	p = put_be32(p, 0x7fffffff);
	p = put_be32(p, TRUE);
	put_be32(p, 0x7fffffff);
	assert_refused((xdrproc_t)xdr_READ3res, buf, sizeof(buf), sizeof(READ3res));
}

/* LOOKUP3args whose name is n bytes long, all of them present. */
static uint8_t *lookup_with_name(uint32_t n, size_t *len)
{
	*len = 4 + 4 + 4 + RNDUP((size_t)n);
	uint8_t *buf = calloc(1, *len);
	assert_non_null(buf);
	put_be32(buf, 4);
	put_be32(buf + 8, n);
	memset(buf + 12, 'n', n);
	return buf;
}

/* WRITE3args carrying n bytes of data, all of them present. */
static uint8_t *write_with_data(uint32_t n, size_t *len)
{
	*len = 4 + 8 + 4 + 4 + 4 + RNDUP((size_t)n);
	uint8_t *buf = calloc(1, *len);
	assert_non_null(buf);
	put_be32(buf + 4 + 8, n);               /* count (empty handle, offset 0) */
	put_be32(buf + 4 + 8 + 4 + 4, n);       /* data length */
	return buf;
}

/* The decoders' bounds: names and paths up to 4096 bytes, READ/WRITE data up to
 * NFS3_MAXDATA. One byte more is refused even with every byte present. */
static void test_length_bounds(void **state)
{
	(void)state;
	size_t len;
	uint8_t *buf;
	LOOKUP3args l;

	buf = lookup_with_name(NFS3_MAXNAMLEN_XDR, &len);
	memset(&l, 0, sizeof(l));
	assert_true(xdr_decode_exact((xdrproc_t)xdr_LOOKUP3args, buf, len, &l));
	assert_int_equal(strlen(l.what.name), NFS3_MAXNAMLEN_XDR);
	xdr_free((xdrproc_t)xdr_LOOKUP3args, &l);
	free(buf);
	buf = lookup_with_name(NFS3_MAXNAMLEN_XDR + 1, &len);
	assert_refused((xdrproc_t)xdr_LOOKUP3args, buf, len, sizeof(LOOKUP3args));
	free(buf);

	char *path = malloc(NFS3_MAXPATHLEN + 2);
	assert_non_null(path);
	memset(path, 'p', NFS3_MAXPATHLEN + 1);
	path[NFS3_MAXPATHLEN + 1] = '\0';
	READLINK3res r = { .status = NFS3_OK };
	r.READLINK3res_u.resok.data = path + 1;      /* NFS3_MAXPATHLEN bytes: accepted */
	buf = xdr_encode_alloc((xdrproc_t)xdr_READLINK3res, &r, &len);
	put_be32(buf + 8, NFS3_MAXPATHLEN + 1);      /* claim one more byte: refused */
	uint8_t *longer = calloc(1, len + 4);
	assert_non_null(longer);
	memcpy(longer, buf, len);
	assert_refused((xdrproc_t)xdr_READLINK3res, longer, len + 4, sizeof(READLINK3res));
	free(longer);
	free(buf);
	char out[64];
	XDR x;
	r.READLINK3res_u.resok.data = path;          /* the encoder refuses it too */
	xdrmem_create(&x, out, sizeof(out), XDR_ENCODE);
	assert_false(xdr_READLINK3res(&x, &r));
	xdr_destroy(&x);
	free(path);

	buf = write_with_data(NFS3_MAXDATA + 1, &len);
	assert_refused((xdrproc_t)xdr_WRITE3args, buf, len, sizeof(WRITE3args));
	assert_refused((xdrproc_t)xdr_WRITE3args_zc, buf, len, sizeof(WRITE3args));
	free(buf);
	buf = write_with_data(NFS3_MAXDATA, &len);
	WRITE3args w;
	assert_true(xdr_decode_exact((xdrproc_t)xdr_WRITE3args_zc, buf, len, &w));
	assert_int_equal(w.data.data_len, NFS3_MAXDATA);
	write3args_zc_free(&w);
	free(buf);
}

/* ---- zero-copy WRITE ---- */

/* A WRITE3args with an fh of fh_len bytes and a payload of data_len bytes (value i & 0xff). */
static uint8_t *encode_write(u_int fh_len, u_int data_len, uint64_t off, size_t *len)
{
	char fh[NFS3_FHSIZE];
	char *data = malloc(data_len ? data_len : 1);
	assert_non_null(data);
	for (u_int i = 0; i < fh_len; i++)
		fh[i] = (char)(0xf0 ^ i);
	for (u_int i = 0; i < data_len; i++)
		data[i] = (char)i;
	WRITE3args a = { .file = { .data = { fh_len, fh } }, .offset = off, .count = data_len,
			 .stable = DATA_SYNC, .data = { data_len, data } };
	uint8_t *enc = xdr_encode_alloc((xdrproc_t)xdr_WRITE3args, &a, len);
	free(data);
	return enc;
}

/* Decodes enc (len bytes) with the zc decoder from buf + shift, and checks every field and
 * that the payload is the bytes of buf at the offset write3args_peek reports. */
static void check_zc_decode(const uint8_t *enc, size_t len, size_t shift, u_int fh_len,
			    u_int data_len, uint64_t off)
{
	char *buf = malloc(len + shift);
	assert_non_null(buf);
	memcpy(buf + shift, enc, len);

	uint64_t peek_off;
	uint32_t peek_len;
	size_t payload_off;
	assert_true(write3args_peek((uint8_t *)buf + shift, len, &peek_off, &peek_len, &payload_off));

	WRITE3args a;
	XDR x;
	xdrmem_create(&x, buf + shift, (u_int)len, XDR_DECODE);
	assert_true(xdr_WRITE3args_zc(&x, &a));
	assert_int_equal(xdr_getpos(&x), len);
	xdr_destroy(&x);

	assert_int_equal(a.file.data.data_len, fh_len);
	assert_int_equal(a.offset, off);
	assert_int_equal(a.count, data_len);
	assert_int_equal(a.stable, DATA_SYNC);
	assert_int_equal(a.data.data_len, data_len);
	assert_ptr_equal(a.data.data_val, buf + shift + payload_off);
	assert_true(a.data.data_val + data_len <= buf + shift + len);
	for (u_int i = 0; i < data_len; i++)
		assert_int_equal((uint8_t)a.data.data_val[i], (uint8_t)i);

	/* The peek agrees with the full decoder. */
	assert_int_equal(peek_off, a.offset);
	assert_int_equal(peek_len, a.data.data_len);

	write3args_zc_free(&a);
	assert_null(a.file.data.data_val);
	assert_null(a.data.data_val);
	free(buf);
}

static void test_write_zc(void **state)
{
	(void)state;
	static const u_int fh_lens[] = { 0, 1, 8, 28, 63, NFS3_FHSIZE };
	static const u_int data_lens[] = { 0, 1, 3, 4, 1001, 4096 };

	for (size_t i = 0; i < sizeof(fh_lens) / sizeof(fh_lens[0]); i++) {
		for (size_t j = 0; j < sizeof(data_lens) / sizeof(data_lens[0]); j++) {
			uint64_t off = 0x123456789000ULL + j;
			size_t len;
			uint8_t *enc = encode_write(fh_lens[i], data_lens[j], off, &len);
			check_zc_decode(enc, len, 0, fh_lens[i], data_lens[j], off);
			check_zc_decode(enc, len, 1, fh_lens[i], data_lens[j], off);  /* unaligned */
			free(enc);
		}
	}
}

/* The zc encoder writes what xdr_WRITE3args writes. */
static void test_write_zc_encode(void **state)
{
	(void)state;
	size_t len;
	uint8_t *enc = encode_write(20, 999, 77, &len);
	WRITE3args a;
	XDR x;

	xdrmem_create(&x, (char *)enc, (u_int)len, XDR_DECODE);
	assert_true(xdr_WRITE3args_zc(&x, &a));
	xdr_destroy(&x);
	size_t len2;
	uint8_t *enc2 = xdr_encode_alloc((xdrproc_t)xdr_WRITE3args_zc, &a, &len2);
	assert_int_equal(len2, len);
	assert_memory_equal(enc2, enc, len);
	xdr_free((xdrproc_t)xdr_WRITE3args_zc, (char *)&a);
	assert_null(a.file.data.data_val);
	free(enc2);
	free(enc);
}

static void test_write_zc_truncated(void **state)
{
	(void)state;
	size_t len;
	uint8_t *enc = encode_write(32, 1001, 5, &len);

	for (size_t n = 0; n < len; n++) {
		WRITE3args a;
		assert_false(xdr_decode_exact((xdrproc_t)xdr_WRITE3args_zc, enc, n, &a));
		/* Nothing is left to free after a failed decode. */
		assert_null(a.file.data.data_val);
		assert_null(a.data.data_val);
	}
	free(enc);
}

/* A data length beyond what the buffer holds, or beyond NFS3_MAXDATA, or other than the count,
 * is refused; so is a stable_how that is not one of the three. */
static void test_write_zc_bad_length(void **state)
{
	(void)state;
	size_t len;
	uint8_t *enc = encode_write(8, 100, 5, &len);
	size_t len_pos = 4 + 8 + 8 + 4 + 4;
	WRITE3args a;

	size_t count_pos = len_pos - 8, stable_pos = len_pos - 4;

	put_be32(enc + len_pos, 101);   /* 101 rounds up to 104: 4 bytes more than there are */
	put_be32(enc + count_pos, 101);
	assert_false(xdr_decode_exact((xdrproc_t)xdr_WRITE3args_zc, enc, len, &a));
	put_be32(enc + len_pos, 97);    /* 97 rounds up to 100: fits, 3 bytes of it padding */
	assert_false(xdr_decode_exact((xdrproc_t)xdr_WRITE3args_zc, enc, len, &a));  /* count 101 */
	put_be32(enc + count_pos, 97);
	assert_true(xdr_decode_exact((xdrproc_t)xdr_WRITE3args_zc, enc, len, &a));
	assert_int_equal(a.data.data_len, 97);
	write3args_zc_free(&a);
	/* a count other than the data's length, either way, as knfsd refuses it */
	put_be32(enc + count_pos, 96);
	assert_false(xdr_decode_exact((xdrproc_t)xdr_WRITE3args_zc, enc, len, &a));
	put_be32(enc + count_pos, 97);
	/* a stable_how past FILE_SYNC */
	put_be32(enc + stable_pos, FILE_SYNC);
	assert_true(xdr_decode_exact((xdrproc_t)xdr_WRITE3args_zc, enc, len, &a));
	write3args_zc_free(&a);
	for (uint32_t bad = FILE_SYNC + 1; bad < 9; bad++) {
		put_be32(enc + stable_pos, bad);
		assert_false(xdr_decode_exact((xdrproc_t)xdr_WRITE3args_zc, enc, len, &a));
	}
	put_be32(enc + stable_pos, 0xffffffffu);
	assert_false(xdr_decode_exact((xdrproc_t)xdr_WRITE3args_zc, enc, len, &a));
	put_be32(enc + stable_pos, DATA_SYNC);

	put_be32(enc + len_pos, NFS3_MAXDATA + 1);
	put_be32(enc + count_pos, NFS3_MAXDATA + 1);
	uint8_t *big = calloc(1, len_pos + 4 + NFS3_MAXDATA + 4);
	assert_non_null(big);
	memcpy(big, enc, len_pos + 4);
	assert_false(xdr_decode_exact((xdrproc_t)xdr_WRITE3args_zc, big,
				      len_pos + 4 + NFS3_MAXDATA + 4, &a));
	free(big);
	free(enc);
}

/* Only an xdrmem stream tells where its buffer is: the zc decoder refuses any other, even on
 * valid bytes, rather than hand out a pointer into a buffer it does not know. */
static void test_write_zc_needs_xdrmem(void **state)
{
	(void)state;
	size_t len;
	uint8_t *enc = encode_write(8, 16, 0, &len);
	FILE *f = fmemopen(enc, len, "r");
	XDR x;
	WRITE3args a;

	assert_non_null(f);
	xdrstdio_create(&x, f, XDR_DECODE);
	assert_false(xdr_WRITE3args_zc(&x, &a));
	assert_null(a.file.data.data_val);
	xdr_destroy(&x);
	fclose(f);
	free(enc);
}

/* write3args_peek needs the bytes up to the payload, and no more. */
static void test_write_peek(void **state)
{
	(void)state;
	size_t len;
	uint8_t *enc = encode_write(28, 4096, 0xabcdef012345ULL, &len);
	uint64_t off;
	uint32_t dlen;
	size_t payload_off;

	assert_true(write3args_peek(enc, len, &off, &dlen, &payload_off));
	assert_int_equal(payload_off, 4 + 28 + 8 + 4 + 4 + 4);
	assert_int_equal(off, 0xabcdef012345ULL);
	assert_int_equal(dlen, 4096);
	assert_true(write3args_peek(enc, payload_off, &off, &dlen, &payload_off));
	for (size_t n = 0; n < payload_off; n++)
		assert_false(write3args_peek(enc, n, &off, &dlen, &payload_off));
	free(enc);

	/* A 65-byte handle, an oversized payload, a count other than its length or a stable_how
	 * outside the enum is malformed however much is there. */
	uint8_t bad[WRITE3ARGS_HDR_MAX + 8] = { 0 };
	put_be32(bad, NFS3_FHSIZE + 1);
	assert_false(write3args_peek(bad, sizeof(bad), &off, &dlen, &payload_off));
	put_be32(bad, NFS3_FHSIZE);
	put_be32(bad + 4 + NFS3_FHSIZE + 16, NFS3_MAXDATA + 1);
	assert_false(write3args_peek(bad, sizeof(bad), &off, &dlen, &payload_off));
	put_be32(bad + 4 + NFS3_FHSIZE + 16, NFS3_MAXDATA);
	assert_false(write3args_peek(bad, sizeof(bad), &off, &dlen, &payload_off));   /* count 0 */
	put_be32(bad + 4 + NFS3_FHSIZE + 8, NFS3_MAXDATA);                            /* count */
	put_be32(bad + 4 + NFS3_FHSIZE + 12, 3);                                      /* stable */
	assert_false(write3args_peek(bad, sizeof(bad), &off, &dlen, &payload_off));
	put_be32(bad + 4 + NFS3_FHSIZE + 12, FILE_SYNC);
	assert_true(write3args_peek(bad, WRITE3ARGS_HDR_MAX, &off, &dlen, &payload_off));
	assert_int_equal(payload_off, WRITE3ARGS_HDR_MAX);
}

/* ---- zero-copy READ reply ---- */

/* Encodes r with the zc encoder, appends the payload and its padding the way the server sends
 * them, and returns the whole reply. */
static uint8_t *encode_read_zc(READ3res *r, size_t *len)
{
	size_t hdr_len;
	uint8_t *hdr = xdr_encode_alloc((xdrproc_t)xdr_READ3res_zc, r, &hdr_len);
	if (r->status != NFS3_OK) {
		*len = hdr_len;
		return hdr;
	}
	const READ3resok *ok = &r->READ3res_u.resok;
	uint32_t pad = xdr_zc_pad(ok->data.data_len);
	*len = hdr_len + ok->data.data_len + pad;
	uint8_t *out = malloc(*len);
	assert_non_null(out);
	memcpy(out, hdr, hdr_len);
	memcpy(out + hdr_len, ok->data.data_val, ok->data.data_len);
	memcpy(out + hdr_len + ok->data.data_len, xdr_zc_zero_pad(), pad);
	free(hdr);
	return out;
}

static void test_read_zc(void **state)
{
	(void)state;
	static const u_int lens[] = { 0, 1, 2, 3, 4, 5, 4095, 4096 };
	char *data = malloc(4096);
	assert_non_null(data);
	for (int i = 0; i < 4096; i++)
		data[i] = (char)(i * 7);

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		READ3res r = { .status = NFS3_OK };
		READ3resok *ok = &r.READ3res_u.resok;
		ok->file_attributes = mk_poa(50);
		ok->count = lens[i];
		ok->eof = (i % 2) ? TRUE : FALSE;
		ok->data.data_len = lens[i];
		ok->data.data_val = data;

		size_t len, want_len;
		uint8_t *got = encode_read_zc(&r, &len);
		uint8_t *want = xdr_encode_alloc((xdrproc_t)xdr_READ3res, &r, &want_len);
		assert_int_equal(len, want_len);
		assert_memory_equal(got, want, len);

		READ3res back = { 0 };
		assert_true(xdr_decode_exact((xdrproc_t)xdr_READ3res, got, len, &back));
		assert_int_equal(back.status, NFS3_OK);
		chk_poa(&ok->file_attributes, &back.READ3res_u.resok.file_attributes);
		assert_int_equal(back.READ3res_u.resok.count, lens[i]);
		assert_int_equal(back.READ3res_u.resok.eof, ok->eof);
		chk_opaque(lens[i], data, back.READ3res_u.resok.data.data_len,
			   back.READ3res_u.resok.data.data_val);
		xdr_free((xdrproc_t)xdr_READ3res, &back);
		free(want);
		free(got);
	}
	free(data);
}

static void test_read_zc_failure(void **state)
{
	(void)state;
	READ3res r = { .status = NFS3ERR_ACCES };
	r.READ3res_u.resfail.file_attributes = mk_poa(51);
	size_t len, want_len;
	uint8_t *got = encode_read_zc(&r, &len);
	uint8_t *want = xdr_encode_alloc((xdrproc_t)xdr_READ3res, &r, &want_len);

	assert_int_equal(len, want_len);
	assert_memory_equal(got, want, len);
	free(want);
	free(got);
}

/* Encode only; and it refuses a payload the generated decoder would refuse. */
static void test_read_zc_refuses(void **state)
{
	(void)state;
	READ3res r = { .status = NFS3_OK };
	char buf[256];
	XDR x;

	r.READ3res_u.resok.data.data_len = NFS3_MAXDATA + 1;
	xdrmem_create(&x, buf, sizeof(buf), XDR_ENCODE);
	assert_false(xdr_READ3res_zc(&x, &r));
	xdr_destroy(&x);

	memset(buf, 0, sizeof(buf));
	xdrmem_create(&x, buf, sizeof(buf), XDR_DECODE);
	assert_false(xdr_READ3res_zc(&x, &r));
	xdr_destroy(&x);

	assert_int_equal(xdr_zc_pad(0), 0);
	assert_int_equal(xdr_zc_pad(1), 3);
	assert_int_equal(xdr_zc_pad(6), 2);
	assert_int_equal(xdr_zc_pad(4099), 1);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constants),
		cmocka_unit_test(test_wire_fh),
		cmocka_unit_test(test_wire_fattr3),
		cmocka_unit_test(test_wire_sattr3),
		cmocka_unit_test(test_wire_readdir_list),
		cmocka_unit_test(test_fh_65_refused),
		cmocka_unit_test(test_huge_lengths_refused),
		cmocka_unit_test(test_length_bounds),
		cmocka_unit_test(test_write_zc),
		cmocka_unit_test(test_write_zc_encode),
		cmocka_unit_test(test_write_zc_truncated),
		cmocka_unit_test(test_write_zc_bad_length),
		cmocka_unit_test(test_write_zc_needs_xdrmem),
		cmocka_unit_test(test_write_peek),
		cmocka_unit_test(test_read_zc),
		cmocka_unit_test(test_read_zc_failure),
		cmocka_unit_test(test_read_zc_refuses),
	};
	int failed = cmocka_run_group_tests_name("xdr_nfs3", tests, NULL, NULL);
	failed += xdr_run_cases("xdr_nfs3_types", nfs3_cases,
				sizeof(nfs3_cases) / sizeof(nfs3_cases[0]), sizeof(struct scratch));
	return failed ? 1 : 0;
}
