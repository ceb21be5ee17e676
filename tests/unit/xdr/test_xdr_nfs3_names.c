/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NFSv3 codecs of the calls that make, remove and rename names: CREATE (its three modes), MKDIR,
 * SYMLINK, MKNOD (device, pipe, the void arm), REMOVE, RMDIR, RENAME and LINK, arguments and
 * both arms of each result, as cases for xdr_harness.c. test_xdr_nfs3.c runs them with the
 * other procedures' cases, in RFC order. */
#include "xdr_nfs3.h"

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

const struct xdr_case nfs3_name_cases[] = {
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
};
const size_t nfs3_name_cases_n = sizeof(nfs3_name_cases) / sizeof(nfs3_name_cases[0]);
