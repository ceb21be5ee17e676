/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NFSv3 codecs of the calls on one object: GETATTR, SETATTR, LOOKUP, ACCESS, READLINK, READ and
 * WRITE, arguments and both arms of each result, as cases for xdr_harness.c (round trip, every
 * truncation). test_xdr_nfs3.c runs them with the other procedures' cases, in RFC order. */
#include "xdr_nfs3.h"

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

const struct xdr_case nfs3_file_cases[] = {
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
};
const size_t nfs3_file_cases_n = sizeof(nfs3_file_cases) / sizeof(nfs3_file_cases[0]);
