/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The NFSv3 codec tests' builders and comparators of the structures every procedure shares
 * (handles, times, attributes, wcc data, sattr3, diropargs3): each builder fills distinct
 * values, each comparator asserts field by field. Used by the case files of test_xdr_nfs3. */
#include "xdr_nfs3.h"

/* ---- builders of the shared sub-structures ---- */

nfs_fh3 mk_fh(struct scratch *s, int slot, u_int len)
{
	for (u_int i = 0; i < len; i++)
		s->fh[slot][i] = (char)(0x40 + slot * 16 + i);
	return (nfs_fh3){ .data = { len, s->fh[slot] } };
}

nfstime3 mk_time(u_int seed)
{
	return (nfstime3){ 1700000000u + seed, 999999999u - seed };
}

fattr3 mk_fattr(u_int seed)
{
	return (fattr3){
		.type = NF3REG, .mode = 0644 + seed, .nlink = 2 + seed, .uid = 1000 + seed,
		.gid = 2000 + seed, .size = 0x123456789aULL + seed, .used = 0x200000000ULL + seed,
		.rdev = { 8 + seed, 1 + seed }, .fsid = 0xfedcba9876543210ULL + seed,
		.fileid = 0x8000000000000001ULL + seed, .atime = mk_time(seed),
		.mtime = mk_time(seed + 1), .ctime = mk_time(seed + 2),
	};
}

post_op_attr mk_poa(u_int seed)
{
	return (post_op_attr){ .attributes_follow = TRUE, .post_op_attr_u.attributes = mk_fattr(seed) };
}

wcc_data mk_wcc(u_int seed)
{
	wcc_data w = { .before.attributes_follow = TRUE, .after = mk_poa(seed) };
	w.before.pre_op_attr_u.attributes =
		(wcc_attr){ 4096 + seed, mk_time(seed + 3), mk_time(seed + 4) };
	return w;
}

/* Every field set, atime from the client and mtime from the server clock. */
sattr3 mk_sattr_all(void)
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

sattr3 mk_sattr_mode(mode3 mode)
{
	return (sattr3){ .mode = { TRUE, .set_mode3_u.mode = mode } };
}

diropargs3 mk_dirop(struct scratch *s, int slot, char *name)
{
	return (diropargs3){ mk_fh(s, slot, 24 + (u_int)slot), name };
}

post_op_fh3 mk_pofh(struct scratch *s, int slot)
{
	return (post_op_fh3){ TRUE, .post_op_fh3_u.handle = mk_fh(s, slot, NFS3_FHSIZE) };
}

/* ---- field comparators ---- */

void chk_fh(const nfs_fh3 *w, const nfs_fh3 *g)
{
	assert_int_equal(w->data.data_len, g->data.data_len);
	if (w->data.data_len)
		assert_memory_equal(w->data.data_val, g->data.data_val, w->data.data_len);
}

void chk_time(const nfstime3 *w, const nfstime3 *g)
{
	assert_int_equal(w->seconds, g->seconds);
	assert_int_equal(w->nseconds, g->nseconds);
}

void chk_fattr(const fattr3 *w, const fattr3 *g)
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

void chk_poa(const post_op_attr *w, const post_op_attr *g)
{
	assert_int_equal(w->attributes_follow, g->attributes_follow);
	if (w->attributes_follow)
		chk_fattr(&w->post_op_attr_u.attributes, &g->post_op_attr_u.attributes);
}

void chk_wcc(const wcc_data *w, const wcc_data *g)
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

void chk_pofh(const post_op_fh3 *w, const post_op_fh3 *g)
{
	assert_int_equal(w->handle_follows, g->handle_follows);
	if (w->handle_follows)
		chk_fh(&w->post_op_fh3_u.handle, &g->post_op_fh3_u.handle);
}

void chk_sattr(const sattr3 *w, const sattr3 *g)
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

void chk_dirop(const diropargs3 *w, const diropargs3 *g)
{
	chk_fh(&w->dir, &g->dir);
	assert_string_equal(w->name, g->name);
}

void chk_opaque(u_int wlen, const char *w, u_int glen, const char *g)
{
	assert_int_equal(wlen, glen);
	if (wlen)
		assert_memory_equal(w, g, wlen);
}
