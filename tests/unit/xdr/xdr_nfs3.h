/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the sources of the test_xdr_nfs3 binary share: the headers, where filled values keep
 * what they point to, the builders and comparators of the shared structures
 * (xdr_nfs3_fields.c), the macros the case files define their fill and check functions with,
 * each procedure group's cases and the tests of test_xdr_nfs3_wire.c and test_xdr_nfs3_zc.c. */
#ifndef XDR_NFS3_H
#define XDR_NFS3_H

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

/* ---- builders and comparators of the shared sub-structures (xdr_nfs3_fields.c) ---- */

nfs_fh3 mk_fh(struct scratch *s, int slot, u_int len);
nfstime3 mk_time(u_int seed);
fattr3 mk_fattr(u_int seed);
post_op_attr mk_poa(u_int seed);
wcc_data mk_wcc(u_int seed);
sattr3 mk_sattr_all(void);
sattr3 mk_sattr_mode(mode3 mode);
diropargs3 mk_dirop(struct scratch *s, int slot, char *name);
post_op_fh3 mk_pofh(struct scratch *s, int slot);
void chk_fh(const nfs_fh3 *w, const nfs_fh3 *g);
void chk_time(const nfstime3 *w, const nfstime3 *g);
void chk_fattr(const fattr3 *w, const fattr3 *g);
void chk_poa(const post_op_attr *w, const post_op_attr *g);
void chk_wcc(const wcc_data *w, const wcc_data *g);
void chk_pofh(const post_op_fh3 *w, const post_op_fh3 *g);
void chk_sattr(const sattr3 *w, const sattr3 *g);
void chk_dirop(const diropargs3 *w, const diropargs3 *g);
void chk_opaque(u_int wlen, const char *w, u_int glen, const char *g);

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

#define CASE(label, T, fname) { label, (xdrproc_t)xdr_##T, sizeof(T), fill_##fname, chk_##T }

/* ---- each group of procedures' cases, in RFC order ---- */

extern const struct xdr_case nfs3_file_cases[];
extern const size_t nfs3_file_cases_n;
extern const struct xdr_case nfs3_name_cases[];
extern const size_t nfs3_name_cases_n;
extern const struct xdr_case nfs3_dir_cases[];
extern const size_t nfs3_dir_cases_n;

/* ---- the tests listed by test_xdr_nfs3.c ---- */

/* test_xdr_nfs3_wire.c */
void test_constants(void **state);
void test_wire_fh(void **state);
void test_wire_fattr3(void **state);
void test_wire_sattr3(void **state);
void test_wire_readdir_list(void **state);
void test_fh_65_refused(void **state);
void test_huge_lengths_refused(void **state);
void test_length_bounds(void **state);

/* test_xdr_nfs3_zc.c */
void test_write_zc(void **state);
void test_write_zc_encode(void **state);
void test_write_zc_truncated(void **state);
void test_write_zc_bad_length(void **state);
void test_write_zc_needs_xdrmem(void **state);
void test_write_peek(void **state);
void test_read_zc(void **state);
void test_read_zc_failure(void **state);
void test_read_zc_refuses(void **state);

#endif
