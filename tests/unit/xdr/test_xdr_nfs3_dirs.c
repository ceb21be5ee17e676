/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NFSv3 codecs of READDIR and READDIRPLUS (chained entry lists), of the file system's
 * FSSTAT, FSINFO and PATHCONF, and of COMMIT: arguments and both arms of each result, as cases
 * for xdr_harness.c. test_xdr_nfs3.c runs them with the other procedures' cases, in RFC
 * order. */
#include "xdr_nfs3.h"

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

const struct xdr_case nfs3_dir_cases[] = {
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
const size_t nfs3_dir_cases_n = sizeof(nfs3_dir_cases) / sizeof(nfs3_dir_cases[0]);
