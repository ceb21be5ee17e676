/* SPDX-License-Identifier: GPL-2.0-or-later */
/* MOUNT v3 codecs: every type round trips and refuses every truncation; the RFC's limits
 * (MNTPATHLEN, MNTNAMLEN, FHSIZE3) are enforced; a MNT reply has the RFC 1813 wire layout. */
#include <rpc/rpc.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "xdr/mount3_prot.h"
#include "xdr/nfs3_prot.h"
#include "xdr_harness.h"

struct scratch {
	char fh[FHSIZE3];
	int flavors[2];
	mountbody bodies[3];
	groupnode groups[3];
	exportnode exports[2];
};

/* ---- fill and check functions ---- */

static void fill_dirpath(void *v, void *s)
{
	(void)s;
	*(dirpath *)v = "/export/data";
}

static void fill_name(void *v, void *s)
{
	(void)s;
	*(name *)v = "client.example.org";
}

static void chk_string(const void *w, const void *g)
{
	assert_string_equal(*(char *const *)w, *(char *const *)g);
}

static void fill_fhandle3(void *v, void *sv)
{
	struct scratch *s = sv;
	for (int i = 0; i < FHSIZE3; i++)
		s->fh[i] = (char)(i * 3 + 1);
	*(fhandle3 *)v = (fhandle3){ FHSIZE3, s->fh };
}

static void chk_fhandle3(const void *wv, const void *gv)
{
	const fhandle3 *w = wv, *g = gv;
	assert_int_equal(w->fhandle3_len, g->fhandle3_len);
	assert_memory_equal(w->fhandle3_val, g->fhandle3_val, w->fhandle3_len);
}

static void fill_mountres3_ok(void *v, void *sv)
{
	struct scratch *s = sv;
	mountres3 *r = v;
	fill_fhandle3(&r->mountres3_u.mountinfo.fhandle, s);
	r->mountres3_u.mountinfo.fhandle.fhandle3_len = 28;
	s->flavors[0] = 1;        /* AUTH_SYS */
	s->flavors[1] = 0;        /* AUTH_NONE */
	r->mountres3_u.mountinfo.auth_flavors.auth_flavors_len = 2;
	r->mountres3_u.mountinfo.auth_flavors.auth_flavors_val = s->flavors;
}

static void fill_mountres3_err(void *v, void *s)
{
	(void)s;
	((mountres3 *)v)->fhs_status = MNT3ERR_ACCES;
}

static void chk_mountres3(const void *wv, const void *gv)
{
	const mountres3 *w = wv, *g = gv;
	assert_int_equal(w->fhs_status, g->fhs_status);
	if (w->fhs_status != MNT3_OK)
		return;
	const mountres3_ok *wo = &w->mountres3_u.mountinfo, *go = &g->mountres3_u.mountinfo;
	chk_fhandle3(&wo->fhandle, &go->fhandle);
	assert_int_equal(wo->auth_flavors.auth_flavors_len, go->auth_flavors.auth_flavors_len);
	for (u_int i = 0; i < wo->auth_flavors.auth_flavors_len; i++)
		assert_int_equal(wo->auth_flavors.auth_flavors_val[i],
				 go->auth_flavors.auth_flavors_val[i]);
}

static void fill_mountlist(void *v, void *sv)
{
	static char *const hosts[3] = { "alpha", "beta.example", "10.0.0.3" };
	static char *const dirs[3] = { "/a", "/export/b", "/" };
	struct scratch *s = sv;
	for (int i = 0; i < 3; i++)
		s->bodies[i] = (mountbody){ hosts[i], dirs[i], i < 2 ? &s->bodies[i + 1] : NULL };
	*(mountlist *)v = &s->bodies[0];
}

static void fill_mountlist_empty(void *v, void *s)
{
	(void)s;
	*(mountlist *)v = NULL;
}

static void chk_mountlist(const void *wv, const void *gv)
{
	const mountbody *w = *(const mountlist *)wv, *g = *(const mountlist *)gv;
	for (; w; w = w->ml_next, g = g->ml_next) {
		assert_non_null(g);
		assert_string_equal(w->ml_hostname, g->ml_hostname);
		assert_string_equal(w->ml_directory, g->ml_directory);
	}
	assert_null(g);
}

static void fill_groups(void *v, void *sv)
{
	static char *const names[3] = { "@netgroup", "*.example.org", "192.168.0.0/16" };
	struct scratch *s = sv;
	for (int i = 0; i < 3; i++)
		s->groups[i] = (groupnode){ names[i], i < 2 ? &s->groups[i + 1] : NULL };
	*(groups *)v = &s->groups[0];
}

static void chk_group_list(const groupnode *w, const groupnode *g)
{
	for (; w; w = w->gr_next, g = g->gr_next) {
		assert_non_null(g);
		assert_string_equal(w->gr_name, g->gr_name);
	}
	assert_null(g);
}

static void chk_groups(const void *wv, const void *gv)
{
	chk_group_list(*(const groups *)wv, *(const groups *)gv);
}

/* Two exports: the first open to three groups, the second to everyone (no groups). */
static void fill_exports(void *v, void *sv)
{
	struct scratch *s = sv;
	groups g;
	fill_groups(&g, s);
	s->exports[0] = (exportnode){ "/export/one", g, &s->exports[1] };
	s->exports[1] = (exportnode){ "/export/two", NULL, NULL };
	*(exports *)v = &s->exports[0];
}

static void chk_exports(const void *wv, const void *gv)
{
	const exportnode *w = *(const exports *)wv, *g = *(const exports *)gv;
	for (; w; w = w->ex_next, g = g->ex_next) {
		assert_non_null(g);
		assert_string_equal(w->ex_dir, g->ex_dir);
		chk_group_list(w->ex_groups, g->ex_groups);
	}
	assert_null(g);
}

#define CASE(label, T, fill, chk) { label, (xdrproc_t)xdr_##T, sizeof(T), fill, chk }

static const struct xdr_case mount_cases[] = {
	CASE("dirpath", dirpath, fill_dirpath, chk_string),
	CASE("name", name, fill_name, chk_string),
	CASE("fhandle3", fhandle3, fill_fhandle3, chk_fhandle3),
	CASE("mountres3 ok", mountres3, fill_mountres3_ok, chk_mountres3),
	CASE("mountres3 error", mountres3, fill_mountres3_err, chk_mountres3),
	CASE("mountlist", mountlist, fill_mountlist, chk_mountlist),
	CASE("mountlist empty", mountlist, fill_mountlist_empty, chk_mountlist),
	CASE("groups", groups, fill_groups, chk_groups),
	CASE("exports", exports, fill_exports, chk_exports),
};

/* ---- limits and wire layout ---- */

static void test_constants(void **state)
{
	(void)state;
	assert_int_equal(MOUNT_PROGRAM, 100005);
	assert_int_equal(MOUNT_V3, 3);
	assert_int_equal(MOUNTPROC3_NULL, 0);
	assert_int_equal(MOUNTPROC3_MNT, 1);
	assert_int_equal(MOUNTPROC3_DUMP, 2);
	assert_int_equal(MOUNTPROC3_UMNT, 3);
	assert_int_equal(MOUNTPROC3_UMNTALL, 4);
	assert_int_equal(MOUNTPROC3_EXPORT, 5);
	assert_int_equal(MNTPATHLEN, 1024);
	assert_int_equal(MNTNAMLEN, 255);
	assert_int_equal(FHSIZE3, 64);
	/* A MOUNT file handle is an NFS one. */
	assert_int_equal(FHSIZE3, NFS3_FHSIZE);
}

/* A string of n 'a's as XDR: length word, bytes, padding. */
static uint8_t *xdr_string_of(uint32_t n, size_t *len)
{
	*len = 4 + RNDUP((size_t)n);
	uint8_t *buf = calloc(1, *len);
	assert_non_null(buf);
	put_be32(buf, n);
	memset(buf + 4, 'a', n);
	return buf;
}

/* Decodes a string of n bytes with proc; returns the verdict, frees what was decoded. */
static bool_t decode_string_of(xdrproc_t proc, uint32_t n)
{
	size_t len;
	uint8_t *buf = xdr_string_of(n, &len);
	char *s = NULL;
	bool_t ok = xdr_decode_exact(proc, buf, len, &s);
	if (ok)
		assert_int_equal(strlen(s), n);
	xdr_free(proc, (char *)&s);
	free(buf);
	return ok;
}

static void test_dirpath_limit(void **state)
{
	(void)state;
	assert_true(decode_string_of((xdrproc_t)xdr_dirpath, MNTPATHLEN));
	assert_false(decode_string_of((xdrproc_t)xdr_dirpath, MNTPATHLEN + 1));
	assert_false(decode_string_of((xdrproc_t)xdr_dirpath, 4096));

	/* A 2 GiB length is refused before anything that size is allocated. */
	uint8_t huge[16] = { 0 };
	char *s = NULL;
	put_be32(huge, 0x7fffffff);
	assert_false(xdr_decode_exact((xdrproc_t)xdr_dirpath, huge, sizeof(huge), &s));
	xdr_free((xdrproc_t)xdr_dirpath, (char *)&s);

	/* The encoder refuses too long a path as well. */
	char *path = malloc(MNTPATHLEN + 2);
	assert_non_null(path);
	memset(path, '/', MNTPATHLEN + 1);
	path[MNTPATHLEN + 1] = '\0';
	char out[64];
	XDR x;
	xdrmem_create(&x, out, sizeof(out), XDR_ENCODE);
	assert_false(xdr_dirpath(&x, &path));
	xdr_destroy(&x);
	free(path);
}

static void test_name_limit(void **state)
{
	(void)state;
	assert_true(decode_string_of((xdrproc_t)xdr_name, MNTNAMLEN));
	assert_false(decode_string_of((xdrproc_t)xdr_name, MNTNAMLEN + 1));
}

static void test_fhandle3_limit(void **state)
{
	(void)state;
	uint8_t buf[4 + 68] = { 0 };
	fhandle3 fh = { 0 };

	put_be32(buf, FHSIZE3 + 1);
	assert_false(xdr_decode_exact((xdrproc_t)xdr_fhandle3, buf, sizeof(buf), &fh));
	xdr_free((xdrproc_t)xdr_fhandle3, (char *)&fh);
	memset(&fh, 0, sizeof(fh));
	put_be32(buf, FHSIZE3);
	assert_true(xdr_decode_exact((xdrproc_t)xdr_fhandle3, buf, 4 + FHSIZE3, &fh));
	assert_int_equal(fh.fhandle3_len, FHSIZE3);
	xdr_free((xdrproc_t)xdr_fhandle3, (char *)&fh);
}

/* MNT reply as the server sends it: status, handle, flavour list. */
static void test_wire_mnt_reply(void **state)
{
	(void)state;
	char fh[5] = { 1, 2, 3, 4, 5 };
	int flavors[1] = { 1 };
	mountres3 r = { .fhs_status = MNT3_OK };
	r.mountres3_u.mountinfo.fhandle = (fhandle3){ 5, fh };
	r.mountres3_u.mountinfo.auth_flavors.auth_flavors_len = 1;
	r.mountres3_u.mountinfo.auth_flavors.auth_flavors_val = flavors;
	static const uint8_t want[] = {
		0, 0, 0, 0,                           /* MNT3_OK */
		0, 0, 0, 5, 1, 2, 3, 4, 5, 0, 0, 0,   /* fhandle3 */
		0, 0, 0, 1, 0, 0, 0, 1,               /* one flavour: AUTH_SYS */
	};
	size_t len;
	uint8_t *enc = xdr_encode_alloc((xdrproc_t)xdr_mountres3, &r, &len);

	assert_int_equal(len, sizeof(want));
	assert_memory_equal(enc, want, sizeof(want));
	free(enc);

	/* An error reply is the status alone. */
	mountres3 e = { .fhs_status = MNT3ERR_NOENT };
	enc = xdr_encode_alloc((xdrproc_t)xdr_mountres3, &e, &len);
	assert_int_equal(len, 4);
	assert_int_equal(enc[3], MNT3ERR_NOENT);
	free(enc);
}

/* EXPORT reply layout: entries chained by value_follows words, groups likewise. */
static void test_wire_exports(void **state)
{
	(void)state;
	uint8_t buf[64], *p = buf;
	p = put_be32(p, TRUE);                               /* an export follows */
	p = put_be32(p, 2);
	p = put_be32(p, (uint32_t)'/' << 24 | (uint32_t)'x' << 16);   /* "/x" */
	p = put_be32(p, TRUE);                               /* a group follows */
	p = put_be32(p, 1);
	p = put_be32(p, (uint32_t)'*' << 24);                /* "*" */
	p = put_be32(p, FALSE);                              /* no more groups */
	p = put_be32(p, FALSE);                              /* no more exports */

	exports ex = NULL;
	assert_true(xdr_decode_exact((xdrproc_t)xdr_exports, buf, (size_t)(p - buf), &ex));
	assert_non_null(ex);
	assert_string_equal(ex->ex_dir, "/x");
	assert_non_null(ex->ex_groups);
	assert_string_equal(ex->ex_groups->gr_name, "*");
	assert_null(ex->ex_groups->gr_next);
	assert_null(ex->ex_next);
	xdr_free((xdrproc_t)xdr_exports, (char *)&ex);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constants),
		cmocka_unit_test(test_dirpath_limit),
		cmocka_unit_test(test_name_limit),
		cmocka_unit_test(test_fhandle3_limit),
		cmocka_unit_test(test_wire_mnt_reply),
		cmocka_unit_test(test_wire_exports),
	};
	int failed = cmocka_run_group_tests_name("xdr_mount", tests, NULL, NULL);
	failed += xdr_run_cases("xdr_mount_types", mount_cases,
				sizeof(mount_cases) / sizeof(mount_cases[0]), sizeof(struct scratch));
	return failed ? 1 : 0;
}
