/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RPCSEC_GSS's bytes and numbers (rpc/gss.h): the credential against a fixed vector and against
 * libtirpc's own encoder, every malformed shape refused, and the sequence window against a
 * reference model (RFC 2203 5.3.3.1). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <gssapi/gssapi.h>
#include <rpc/rpc.h>
#include <rpc/auth_gss.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/gss.h"

/* version 1, DATA, seq 7, integrity, handle "ctx1" */
static const uint8_t data_cred[] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 2,
				    0, 0, 0, 4, 'c', 't', 'x', '1'};

static void test_cred_fixed_vector(void **state)
{
	(void)state;
	struct gss_cred c;
	assert_int_equal(gss_cred_decode(data_cred, sizeof data_cred, &c), GSS_CRED_OK);
	assert_int_equal(c.proc, GSS_PROC_DATA);
	assert_int_equal(c.seq, 7);
	assert_int_equal(c.service, GSS_SVC_INTEGRITY);
	assert_int_equal(c.handle_len, 4);
	assert_memory_equal(c.handle, "ctx1", 4);
	assert_ptr_equal(c.handle, data_cred + 20);   /* in the record, not copied */
}

/* What a libtirpc client (authgss) sends, decoded the same. */
static void check_against_tirpc(uint32_t proc, uint32_t seq, uint32_t svc, const char *handle)
{
	uint8_t buf[128];
	XDR x;
	struct rpc_gss_cred in = {.gc_v = RPCSEC_GSS_VERSION, .gc_proc = proc, .gc_seq = seq,
				  .gc_svc = svc, .gc_ctx = {strlen(handle), (void *)handle}};
	xdrmem_create(&x, (char *)buf, sizeof buf, XDR_ENCODE);
	assert_true(xdr_rpc_gss_cred(&x, &in));
	struct gss_cred c;
	assert_int_equal(gss_cred_decode(buf, xdr_getpos(&x), &c), GSS_CRED_OK);
	assert_int_equal(c.proc, proc);
	assert_int_equal(c.seq, seq);
	assert_int_equal(c.service, svc);
	assert_int_equal(c.handle_len, strlen(handle));
	assert_memory_equal(c.handle, handle, strlen(handle));
	xdr_destroy(&x);
}

static void test_cred_as_libtirpc_encodes_it(void **state)
{
	(void)state;
	check_against_tirpc(RPCSEC_GSS_INIT, 0, RPCSEC_GSS_SVC_NONE, "");
	check_against_tirpc(RPCSEC_GSS_CONTINUE_INIT, 0, RPCSEC_GSS_SVC_NONE, "h");
	check_against_tirpc(RPCSEC_GSS_DATA, 1, RPCSEC_GSS_SVC_NONE, "abcde");   /* padded */
	check_against_tirpc(RPCSEC_GSS_DATA, GSS_MAXSEQ - 1, RPCSEC_GSS_SVC_INTEGRITY, "ab");
	check_against_tirpc(RPCSEC_GSS_DATA, 99, RPCSEC_GSS_SVC_PRIVACY, "0123456789abcdef");
	check_against_tirpc(RPCSEC_GSS_DESTROY, 100, RPCSEC_GSS_SVC_NONE, "ctx");
}

static enum gss_cred_verdict decode_edited(size_t word, uint32_t value)
{
	uint8_t b[sizeof data_cred];
	memcpy(b, data_cred, sizeof b);
	b[4 * word] = (uint8_t)(value >> 24);
	b[4 * word + 1] = (uint8_t)(value >> 16);
	b[4 * word + 2] = (uint8_t)(value >> 8);
	b[4 * word + 3] = (uint8_t)value;
	struct gss_cred c;
	return gss_cred_decode(b, sizeof b, &c);
}

static void test_cred_malformed(void **state)
{
	(void)state;
	struct gss_cred c;
	for (uint32_t n = 0; n < sizeof data_cred; n++)   /* every truncation */
		assert_int_equal(gss_cred_decode(data_cred, n, &c), GSS_CRED_BAD);
	uint8_t longer[sizeof data_cred + 4] = {0};
	memcpy(longer, data_cred, sizeof data_cred);
	assert_int_equal(gss_cred_decode(longer, sizeof longer, &c), GSS_CRED_BAD);
	assert_int_equal(decode_edited(0, 2), GSS_CRED_VERSION);
	assert_int_equal(decode_edited(1, 4), GSS_CRED_BAD);          /* no such procedure */
	assert_int_equal(decode_edited(1, GSS_PROC_INIT), GSS_CRED_BAD);   /* INIT with a handle */
	assert_int_equal(decode_edited(3, 0), GSS_CRED_BAD);          /* no such service */
	assert_int_equal(decode_edited(3, 4), GSS_CRED_BAD);
	assert_int_equal(decode_edited(4, 0xfffffffc), GSS_CRED_BAD); /* length past the body */
	assert_int_equal(decode_edited(4, 5), GSS_CRED_BAD);          /* 5 needs 8 bytes */
	/* DATA without a handle; a handle longer than ours ever are */
	static const uint8_t nohandle[] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0};
	assert_int_equal(gss_cred_decode(nohandle, sizeof nohandle, &c), GSS_CRED_BAD);
	uint8_t big[20 + GSS_HANDLE_MAX + 4] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1,
						0, 0, 0, GSS_HANDLE_MAX + 4};
	assert_int_equal(gss_cred_decode(big, sizeof big, &c), GSS_CRED_BAD);
	big[19] = GSS_HANDLE_MAX;
	assert_int_equal(gss_cred_decode(big, sizeof big - 4, &c), GSS_CRED_OK);
}

static void test_window_basics(void **state)
{
	(void)state;
	struct gss_seqwin w;
	gss_seqwin_init(&w, 8);
	assert_int_equal(gss_seqwin_accept(&w, 10), GSS_SEQ_OK);
	assert_int_equal(gss_seqwin_accept(&w, 10), GSS_SEQ_REPLAY);
	assert_int_equal(gss_seqwin_accept(&w, 5), GSS_SEQ_OK);       /* within 8 below the top */
	assert_int_equal(gss_seqwin_accept(&w, 5), GSS_SEQ_REPLAY);
	assert_int_equal(gss_seqwin_accept(&w, 2), GSS_SEQ_OLD);      /* 10 - 2 >= 8 */
	assert_int_equal(gss_seqwin_accept(&w, 12), GSS_SEQ_OK);
	assert_int_equal(gss_seqwin_accept(&w, 11), GSS_SEQ_OK);
	assert_int_equal(gss_seqwin_accept(&w, 4), GSS_SEQ_OLD);      /* 12 - 4 >= 8 */
	assert_int_equal(gss_seqwin_accept(&w, 5), GSS_SEQ_REPLAY);   /* still inside, seen */
	assert_int_equal(gss_seqwin_accept(&w, 100), GSS_SEQ_OK);     /* a jump past the window */
	assert_int_equal(gss_seqwin_accept(&w, 93), GSS_SEQ_OK);
	assert_int_equal(gss_seqwin_accept(&w, 12), GSS_SEQ_OLD);
	assert_int_equal(gss_seqwin_accept(&w, GSS_MAXSEQ), GSS_SEQ_CTXPROBLEM);
	assert_int_equal(gss_seqwin_accept(&w, 0xffffffff), GSS_SEQ_CTXPROBLEM);
	assert_int_equal(gss_seqwin_accept(&w, GSS_MAXSEQ - 1), GSS_SEQ_OK);
	gss_seqwin_init(&w, 100);
	assert_int_equal(w.size, 64);
	gss_seqwin_init(&w, 0);
	assert_int_equal(w.size, 1);
	gss_seqwin_init(&w, 1u << 20);
	assert_int_equal(w.size, GSS_SEQWIN_MAX);
}

/* Against the rule itself, kept naively: every number accepted, and the highest. */
static void test_window_against_model(void **state)
{
	(void)state;
	enum { N = 200000, SPAN = 3000 };
	uint8_t *seen = calloc(N + SPAN, 1);
	assert_non_null(seen);
	struct gss_seqwin w;
	gss_seqwin_init(&w, 128);
	srandom(7);
	uint32_t top = 0, next = 1;
	bool any = false;
	for (int i = 0; i < N; i++) {
		/* mostly new numbers, some retransmitted, some late, some far behind */
		uint32_t seq = (random() % 4) ? next++ : (uint32_t)(next > 300 ? next - 1 -
								     random() % 300 : 1);
		enum gss_seq_verdict want = GSS_SEQ_OK;
		if (any && seq <= top && top - seq >= 128)
			want = GSS_SEQ_OLD;
		else if (seen[seq])
			want = GSS_SEQ_REPLAY;
		enum gss_seq_verdict got = gss_seqwin_accept(&w, seq);
		if (got != want)
			fail_msg("call %d: seq %u (top %u): got %d, want %d", i, seq, top, got, want);
		if (got == GSS_SEQ_OK) {
			seen[seq] = 1;
			if (!any || seq > top)
				top = seq;
			any = true;
		}
	}
	free(seen);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cred_fixed_vector),
		cmocka_unit_test(test_cred_as_libtirpc_encodes_it),
		cmocka_unit_test(test_cred_malformed),
		cmocka_unit_test(test_window_basics),
		cmocka_unit_test(test_window_against_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
