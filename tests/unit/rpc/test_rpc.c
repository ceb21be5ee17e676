/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Call-header decoding, reply headers and record marks: what a client on the wire would see; and
 * a record put together from its fragments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rpc/oncrpc.h"
#include "rpc/recasm.h"
#include "rpc/recmark.h"

struct buf {
	uint8_t b[1024];
	size_t n;
};

static void put(struct buf *b, uint32_t v)
{
	b->b[b->n++] = (uint8_t)(v >> 24);
	b->b[b->n++] = (uint8_t)(v >> 16);
	b->b[b->n++] = (uint8_t)(v >> 8);
	b->b[b->n++] = (uint8_t)v;
}

static uint32_t get(const uint8_t *p, size_t i)
{
	p += 4 * i;
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A call header: xid 0x1234, CALL, rpcvers, prog 100003 v3 proc 1, AUTH_SYS uid 1000 gid 100
 * groups {100, 27}, machine "host", verifier AUTH_NONE, then 8 bytes of arguments. */
static void make_call(struct buf *b, uint32_t rpcvers, uint32_t flavor)
{
	b->n = 0;
	put(b, 0x1234);
	put(b, 0);
	put(b, rpcvers);
	put(b, 100003);
	put(b, 3);
	put(b, 1);
	put(b, flavor);
	if (flavor == RPC_AUTH_SYS) {
		put(b, 4 * 8);       /* body: stamp, name len, "host", uid, gid, 2, g, g */
		put(b, 77);
		put(b, 4);
		memcpy(b->b + b->n, "host", 4);
		b->n += 4;
		put(b, 1000);
		put(b, 100);
		put(b, 2);
		put(b, 100);
		put(b, 27);
	} else {
		put(b, 0);
	}
	put(b, 0);
	put(b, 0);
	put(b, 0xaabbccdd);
	put(b, 0x11223344);
}

static void test_auth_sys_call(void **state)
{
	(void)state;
	struct buf b;
	struct rpc_call c;
	make_call(&b, 2, RPC_AUTH_SYS);
	assert_int_equal(rpc_decode_call(b.b, b.n, &c), RPC_OK);
	assert_int_equal(c.xid, 0x1234);
	assert_int_equal(c.prog, 100003);
	assert_int_equal(c.vers, 3);
	assert_int_equal(c.proc, 1);
	assert_int_equal(c.cred.flavor, RPC_AUTH_SYS);
	assert_int_equal(c.cred.uid, 1000);
	assert_int_equal(c.cred.gid, 100);
	assert_int_equal(c.cred.ngids, 2);
	assert_int_equal(c.cred.gids[1], 27);
	assert_int_equal(c.args_len, 8);
	assert_int_equal(get(c.args, 0), 0xaabbccdd);
}

/* An RPCSEC_GSS DATA call: its credential decoded, the header span its verifier is a MIC of
 * (xid through the credential), the verifier itself, the arguments after it. */
static void test_gss_call(void **state)
{
	(void)state;
	struct buf b = {.n = 0};
	struct rpc_call c;
	const uint32_t head[] = {0x77, 0, 2, 100003, 3, 7, RPC_AUTH_GSS, 28,
				 1 /* vers */, GSS_PROC_DATA, 42 /* seq */, GSS_SVC_INTEGRITY, 8};
	for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
		put(&b, head[i]);
	put(&b, 0x01020304);   /* the handle's 8 bytes */
	put(&b, 0x05060708);
	size_t hdr_len = b.n;
	put(&b, RPC_AUTH_GSS);
	put(&b, 5);            /* a 5-byte MIC, padded to 8 */
	put(&b, 0xa1a2a3a4);
	put(&b, 0xa5000000);
	put(&b, 0xaabbccdd);   /* arguments */
	assert_int_equal(rpc_decode_call(b.b, b.n, &c), RPC_OK);
	assert_int_equal(c.cred.flavor, RPC_AUTH_GSS);
	assert_int_equal(c.cred.gss_service, GSS_SVC_INTEGRITY);
	assert_int_equal(rpc_cred_pseudoflavor(&c.cred), RPC_AUTH_KRB5I);
	assert_int_equal(c.gss.seq, 42);
	assert_int_equal(c.gss.handle_len, 8);
	assert_memory_equal(c.gss.handle, b.b + hdr_len - 8, 8);
	assert_int_equal(c.hdr_len, hdr_len);
	assert_int_equal(c.verf_flavor, RPC_AUTH_GSS);
	assert_int_equal(c.verf_len, 5);
	assert_int_equal(c.verf[0], 0xa1);
	assert_int_equal(c.args_len, 4);
	assert_int_equal(get(c.args, 0), 0xaabbccdd);
}

static void test_auth_none_call(void **state)
{
	(void)state;
	struct buf b;
	struct rpc_call c;
	make_call(&b, 2, RPC_AUTH_NONE);
	assert_int_equal(rpc_decode_call(b.b, b.n, &c), RPC_OK);
	assert_int_equal(c.cred.flavor, RPC_AUTH_NONE);
	assert_int_equal(c.args_len, 8);
}

static void test_verdicts(void **state)
{
	(void)state;
	struct buf b;
	struct rpc_call c;
	make_call(&b, 3, RPC_AUTH_SYS);
	assert_int_equal(rpc_decode_call(b.b, b.n, &c), RPC_REPLY_RPC_MISMATCH);
	make_call(&b, 2, 3 /* AUTH_DH */);
	assert_int_equal(rpc_decode_call(b.b, b.n, &c), RPC_REPLY_AUTH_TOOWEAK);
	make_call(&b, 2, RPC_AUTH_GSS);   /* an empty body is no RPCSEC_GSS credential */
	assert_int_equal(rpc_decode_call(b.b, b.n, &c), RPC_REPLY_AUTH_BADCRED);
	make_call(&b, 2, RPC_AUTH_SYS);
	b.b[7] = 1;    /* a REPLY, not a CALL: nothing to answer */
	assert_int_equal(rpc_decode_call(b.b, b.n, &c), RPC_DROP);
	make_call(&b, 2, RPC_AUTH_SYS);
	b.b[4 * 13 + 3] = 17;   /* more than 16 groups */
	assert_int_equal(rpc_decode_call(b.b, b.n, &c), RPC_REPLY_AUTH_BADCRED);
	make_call(&b, 2, RPC_AUTH_SYS);
	b.b[4 * 7 + 2] = 0x02;  /* credential length 512 + 32 > 400 */
	assert_int_equal(rpc_decode_call(b.b, b.n, &c), RPC_REPLY_AUTH_BADCRED);
}

/* Every prefix of a valid call fails cleanly (ASan checks nothing past the end is read). */
static void test_truncated(void **state)
{
	(void)state;
	struct buf b;
	make_call(&b, 2, RPC_AUTH_SYS);
	size_t hdr = b.n - 8;
	for (size_t n = 0; n < hdr; n++) {
		uint8_t *copy = malloc(n ? n : 1);
		memcpy(copy, b.b, n);
		struct rpc_call c;
		enum rpc_verdict v = rpc_decode_call(copy, n, &c);
		assert_int_not_equal(v, RPC_OK);
		free(copy);
	}
}

static void test_replies(void **state)
{
	(void)state;
	uint8_t b[RPC_REPLY_HDR_MAX];
	size_t n = rpc_encode_accepted(b, 9, ACCEPT_PROC_UNAVAIL);
	assert_int_equal(n, 24);
	assert_int_equal(get(b, 0), 9);
	assert_int_equal(get(b, 1), 1);     /* REPLY */
	assert_int_equal(get(b, 2), 0);     /* MSG_ACCEPTED */
	assert_int_equal(get(b, 5), 3);     /* PROC_UNAVAIL */
	n = rpc_encode_prog_mismatch(b, 9, 3, 3);
	assert_int_equal(n, 32);
	assert_int_equal(get(b, 5), 2);
	assert_int_equal(get(b, 6), 3);
	assert_int_equal(get(b, 7), 3);
	n = rpc_encode_rejected(b, 9, RPC_REPLY_RPC_MISMATCH);
	assert_int_equal(get(b, 2), 1);     /* MSG_DENIED */
	assert_int_equal(get(b, 3), 0);     /* RPC_MISMATCH, low 2 high 2 */
	assert_int_equal(get(b, 4), 2);
	assert_int_equal(n, 24);
	n = rpc_encode_rejected(b, 9, RPC_REPLY_AUTH_TOOWEAK);
	assert_int_equal(n, 20);
	assert_int_equal(get(b, 3), 1);     /* AUTH_ERROR */
	assert_int_equal(get(b, 4), 5);     /* AUTH_TOOWEAK */
	n = rpc_encode_rejected(b, 9, RPC_REPLY_GSS_CREDPROBLEM);
	assert_int_equal(get(b, 4), 13);    /* RPCSEC_GSS_CREDPROBLEM */
	n = rpc_encode_rejected(b, 9, RPC_REPLY_GSS_CTXPROBLEM);
	assert_int_equal(get(b, 4), 14);
	n = rpc_encode_rejected(b, 9, RPC_REPLY_AUTH_BADVERF);
	assert_int_equal(get(b, 4), 3);
	/* A verifier of 5 bytes: padded to 8 before the accept_stat. */
	uint8_t v[RPC_REPLY_HDR_MAX + 8];
	n = rpc_encode_accepted_verf(v, 9, ACCEPT_SUCCESS, RPC_AUTH_GSS, "\x01\x02\x03\x04\x05", 5);
	assert_int_equal(n, 32);
	assert_int_equal(get(v, 3), RPC_AUTH_GSS);
	assert_int_equal(get(v, 4), 5);
	assert_int_equal(get(v, 6), 0x05000000);
	assert_int_equal(get(v, 7), ACCEPT_SUCCESS);
}

static void test_recmark(void **state)
{
	(void)state;
	uint8_t m[4];
	recmark_put(m, 1048576 + 200);
	uint32_t v = recmark_get(m);
	assert_true(recmark_is_last(v));
	assert_int_equal(recmark_len(v), 1048576 + 200);
	const uint8_t frag[4] = {0x00, 0x00, 0x01, 0x00};    /* 256 bytes, more to come */
	v = recmark_get(frag);
	assert_false(recmark_is_last(v));
	assert_int_equal(recmark_len(v), 256);
	const uint8_t huge[4] = {0xff, 0xff, 0xff, 0xff};
	assert_int_equal(recmark_len(recmark_get(huge)), 0x7fffffff);
}

/* A record of 64 KiB + 3 bytes in one-byte fragments: the bytes as sent, the placement (a
 * 4096-aligned allocation, the record 100 bytes in) kept through every growth, and the copying
 * the growth cost linear: at most twice the record's size. */
static void test_recasm_fragments(void **state)
{
	(void)state;
	enum { LEN = 65536 + 3, MAX = 1 << 20 };
	struct recasm ra = {0};
	assert_int_equal(recasm_begin(&ra, 1, false, 1, 4096, 100), 0);
	for (uint32_t i = 0; i < LEN; i++) {
		if (i)
			recasm_next(&ra, 1, i + 1 == LEN);
		assert_int_equal(recasm_reserve(&ra, ra.len + 1, MAX), 0);
		uint8_t b = (uint8_t)(i * 7);
		recasm_put(&ra, &b, 1);
		assert_int_equal((uintptr_t)ra.rec % 4096, 100);
	}
	assert_true(recasm_whole(&ra));
	assert_true(ra.moved <= 2 * LEN);
	uint8_t *rec;
	size_t len;
	uint8_t *mem = recasm_take(&ra, &rec, &len);
	assert_int_equal(len, LEN);
	assert_ptr_equal(rec, mem + 100);
	for (uint32_t i = 0; i < LEN; i++)
		assert_int_equal(rec[i], (uint8_t)(i * 7));
	free(mem);
	assert_null(ra.mem);
	/* Never past the bound, even when doubling would be. */
	assert_int_equal(recasm_begin(&ra, 3000, true, 3000, 0, 0), 0);
	assert_int_equal(recasm_reserve(&ra, 3000, 3000), 0);
	assert_int_equal(recasm_reserve(&ra, 5000, 6000), 0);
	assert_int_equal(ra.cap, 6000);
	recasm_free(&ra);
	assert_null(ra.mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auth_sys_call), cmocka_unit_test(test_auth_none_call),
		cmocka_unit_test(test_gss_call),
		cmocka_unit_test(test_verdicts),      cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_replies),       cmocka_unit_test(test_recmark),
		cmocka_unit_test(test_recasm_fragments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
