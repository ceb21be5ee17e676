/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RPCSEC_GSS contexts (rpc/gss_ctx.h) against a real Kerberos KDC (with_kdc.sh starts one): a
 * client made with the GSS-API as a Linux client's rpc.gssd would, alice with her password,
 * makes a context with nfs/localhost; the INIT verifier, a call's header MIC (and a tampered
 * one refused), the window, a reply's verifier, DESTROY; one context shared by threads while
 * it is destroyed; the bounds per client and in all; a bad token; a keytab that is not there. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/gss_ctx.h"

struct client {
	gss_cred_id_t cred;
	gss_ctx_id_t ctx;
};

static struct sockaddr_storage peer(const char *ip)
{
	struct sockaddr_storage ss = {0};
	struct sockaddr_in *s = (struct sockaddr_in *)&ss;
	s->sin_family = AF_INET;
	inet_pton(AF_INET, ip, &s->sin_addr);
	return ss;
}

/* Which code makes and checks the tokens: our own (rpc/gss_krb5.h, the default) in the first
 * run of the tests, MIT's GSS-API (the fallback for other enctypes) in the second. */
static bool mit_crypto;

static struct gss_ctx_table *table_of(unsigned max, unsigned per_client, bool refuse_unmapped)
{
	char err[512];
	const struct gss_ctx_params p = {getenv("NFSDUC_KEYTAB"), 128, max, per_client,
					 refuse_unmapped, mit_crypto};
	struct gss_ctx_table *t = gss_ctx_table_new(&p, err, sizeof err);
	if (!t)
		fail_msg("%s", err);
	return t;
}

static struct gss_ctx_table *table(unsigned max, unsigned per_client)
{
	return table_of(max, per_client, false);
}

/* alice, by her password (no ticket cache), as rpc.gssd would have her ticket */
static void client_new(struct client *c)
{
	OM_uint32 minor;
	const char *user = getenv("NFSDUC_USER"), *pw = getenv("NFSDUC_PASSWORD");
	gss_buffer_desc ub = {strlen(user), (void *)user}, pb = {strlen(pw), (void *)pw};
	gss_name_t name;
	assert_int_equal(gss_import_name(&minor, &ub, GSS_C_NT_USER_NAME, &name), GSS_S_COMPLETE);
	gss_OID_set_desc mechs = {1, (gss_OID)gss_mech_krb5};
	assert_int_equal(gss_acquire_cred_with_password(&minor, name, &pb, 0, &mechs, GSS_C_INITIATE,
							&c->cred, NULL, NULL), GSS_S_COMPLETE);
	gss_release_name(&minor, &name);
	c->ctx = GSS_C_NO_CONTEXT;
}

static void client_free(struct client *c)
{
	OM_uint32 minor;
	gss_delete_sec_context(&minor, &c->ctx, GSS_C_NO_BUFFER);
	gss_release_cred(&minor, &c->cred);
}

/* One token from the client for nfs@localhost (in: the server's last, or none). */
static OM_uint32 client_step(struct client *c, const void *in, size_t in_len, gss_buffer_desc *out)
{
	OM_uint32 minor;
	static const char svc[] = "nfs@localhost";
	gss_buffer_desc sb = {sizeof svc - 1, (void *)svc}, ib = {in_len, (void *)in};
	gss_name_t target;
	assert_int_equal(gss_import_name(&minor, &sb, GSS_C_NT_HOSTBASED_SERVICE, &target),
			 GSS_S_COMPLETE);
	OM_uint32 major = gss_init_sec_context(&minor, c->cred, &c->ctx, target, (gss_OID)gss_mech_krb5,
					       GSS_C_MUTUAL_FLAG, 0, GSS_C_NO_CHANNEL_BINDINGS,
					       in_len ? &ib : GSS_C_NO_BUFFER, NULL, out, NULL, NULL);
	gss_release_name(&minor, &target);
	return major;
}

/* A whole context made through INIT (and CONTINUE_INIT while needed); its handle in h. */
static void establish(struct gss_ctx_table *t, struct client *c, const char *ip, uint8_t *h)
{
	struct sockaddr_storage p = peer(ip);
	gss_buffer_desc out;
	OM_uint32 minor, cmajor = client_step(c, NULL, 0, &out);
	struct gss_init_res r = {0};
	uint32_t hlen = 0;
	for (;;) {
		assert_int_equal(gss_ctx_accept(t, &p, h, hlen, out.value, out.length, &r), 0);
		gss_release_buffer(&minor, &out);
		assert_true(r.major == GSS_S_COMPLETE || r.major == GSS_S_CONTINUE_NEEDED);
		assert_int_equal(r.handle_len, GSS_CTX_HANDLE_LEN);
		memcpy(h, r.handle, r.handle_len);
		hlen = r.handle_len;
		if (cmajor == GSS_S_CONTINUE_NEEDED)
			cmajor = client_step(c, r.token, r.token_len, &out);
		if (r.major == GSS_S_COMPLETE)
			break;
		gss_init_res_free(&r);
	}
	assert_int_equal(cmajor, GSS_S_COMPLETE);
	assert_int_equal(r.window, 128);
	/* INIT's verifier: a MIC of the window, which the client checks */
	uint8_t be[4] = {0, 0, 0, 128};
	gss_buffer_desc msg = {4, be}, tok = {r.verf_len, r.verf};
	assert_int_equal(gss_verify_mic(&minor, c->ctx, &msg, &tok, NULL), GSS_S_COMPLETE);
	gss_init_res_free(&r);
}

/* A body's first bytes deciphered before it is whole (a WRITE's offset, for placing its
 * record): our tokens only; where they say the plaintext starts is where unwrap leaves it. */
static void check_peek(struct client *c, struct gss_ctx *x)
{
	OM_uint32 minor;
	gss_buffer_desc tok;
	int conf = 0;
	uint8_t *buf, *data;
	size_t dlen;
	uint8_t big[4096], first[132];
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (uint8_t)(i * 7 + 1);
	gss_buffer_desc bin = {sizeof big, big};
	assert_int_equal(gss_wrap(&minor, c->ctx, 1, GSS_C_QOP_DEFAULT, &bin, &conf, &tok),
			 GSS_S_COMPLETE);
	size_t n = sizeof first;
	long at = gss_ctx_peek(x, tok.value, tok.length, 300, false, first, &n);
	if (mit_crypto) {
		assert_int_equal(at, -1);
	} else {
		assert_true(at > 0);
		assert_int_equal(n, sizeof first);
		assert_memory_equal(first, big, sizeof first);
		/* not enough of the token here yet: no hint */
		assert_int_equal(gss_ctx_peek(x, tok.value, tok.length, 100, false, first, &n), -1);
		buf = malloc(tok.length);
		memcpy(buf, tok.value, tok.length);
		assert_int_equal(gss_ctx_unwrap(x, buf, tok.length, &data, &dlen), 0);
		assert_ptr_equal(data, buf + at);
		assert_memory_equal(data, big, sizeof big);
		free(buf);
	}
	gss_release_buffer(&minor, &tok);
	/* a small call (a READ's arguments): all of it when it is all here and its end is asked
	 * for, its last bytes too; the part before the last two cipher blocks when it is not yet
	 * here, or when only its start is asked for (a WRITE's: not deciphered twice) */
	bin.length = 60;
	assert_int_equal(gss_wrap(&minor, c->ctx, 1, GSS_C_QOP_DEFAULT, &bin, &conf, &tok),
			 GSS_S_COMPLETE);
	n = sizeof first;
	at = gss_ctx_peek(x, tok.value, tok.length, tok.length, true, first, &n);
	assert_int_equal(at, mit_crypto ? -1 : 32);
	if (!mit_crypto) {
		assert_int_equal(n, 60);
		assert_memory_equal(first, big, n);
		for (int short_by = 0; short_by < 2; short_by++) {
			n = sizeof first;
			assert_int_equal(gss_ctx_peek(x, tok.value, tok.length,
						      tok.length - (size_t)short_by, short_by == 1,
						      first, &n), 32);
			assert_true(n >= 40 && n < 60);
			assert_memory_equal(first, big, n);
		}
	}
	gss_release_buffer(&minor, &tok);

}

/* krb5i and krb5p bodies both ways: the client's seal opened in place in the server's buffer,
 * a byte of it changed refused; the server's seal and MIC opened and checked by the client. */
static void check_bodies(struct client *c, struct gss_ctx *x)
{
	OM_uint32 minor;
	char text[] = "seq and arguments of a call";
	gss_buffer_desc in = {sizeof text, text}, tok;
	int conf = 0;
	assert_int_equal(gss_wrap(&minor, c->ctx, 1, GSS_C_QOP_DEFAULT, &in, &conf, &tok),
			 GSS_S_COMPLETE);
	uint8_t *buf = malloc(tok.length), *data;
	size_t dlen;
	memcpy(buf, tok.value, tok.length);
	assert_int_equal(gss_ctx_unwrap(x, buf, tok.length, &data, &dlen), 0);
	assert_true(data >= buf && data + dlen <= buf + tok.length);   /* in place */
	assert_int_equal(dlen, sizeof text);
	assert_memory_equal(data, text, sizeof text);
	memcpy(buf, tok.value, tok.length);
	buf[tok.length / 2] ^= 1;
	assert_int_equal(gss_ctx_unwrap(x, buf, tok.length, &data, &dlen), -1);
	free(buf);
	gss_release_buffer(&minor, &tok);

	/* sealed in place: the token is the room before, the data, the room after */
	size_t head, tail;
	assert_int_equal(gss_ctx_wrap_room(x, sizeof text, &head, &tail), 0);
	assert_true(head > 0 && tail > 0);
	uint8_t *sealed = malloc(head + sizeof text + tail);
	memcpy(sealed + head, text, sizeof text);
	assert_int_equal(gss_ctx_wrap(x, sealed + head, sizeof text, head, tail), 0);
	assert_memory_not_equal(sealed + head, text, sizeof text);
	gss_buffer_desc st = {head + sizeof text + tail, sealed}, out;
	assert_int_equal(gss_unwrap(&minor, c->ctx, &st, &out, &conf, NULL), GSS_S_COMPLETE);
	assert_true(conf);
	assert_int_equal(out.length, sizeof text);
	assert_memory_equal(out.value, text, sizeof text);
	gss_release_buffer(&minor, &out);
	free(sealed);

	uint8_t mic[GSS_MIC_MAX];
	/* in pieces, as a READ's blocks are: the MIC of the whole message */
	struct iovec pieces[3] = {{text, 3}, {text + 3, 0}, {text + 3, sizeof text - 3}};
	int m = gss_ctx_get_mic_iov(x, pieces, 3, mic, sizeof mic);
	assert_true(m > 0);
	gss_buffer_desc mt = {(size_t)m, mic};
	assert_int_equal(gss_verify_mic(&minor, c->ctx, &in, &mt, NULL), GSS_S_COMPLETE);
}

static void test_context_made_and_used(void **state)
{
	(void)state;
	struct gss_ctx_table *t = table(16, 4);
	struct client c;
	client_new(&c);
	uint8_t h[GSS_CTX_HANDLE_LEN];
	establish(t, &c, "10.0.0.1", h);
	struct gss_ctx *x = gss_ctx_get(t, h, sizeof h);
	assert_non_null(x);
	assert_string_equal(gss_ctx_principal(x), "alice@NFSDUC.TEST");
	/* the realm's default enctype (aes256-cts-hmac-sha1-96) is one our own code does */
	assert_int_equal(gss_ctx_own_tokens(x), !mit_crypto);
	/* alice is no user of this host: the anonymous user, whatever her ticket says */
	struct rpc_cred cred = {.gss_service = GSS_SVC_PRIVACY};
	gss_ctx_cred(x, &cred);
	assert_int_equal(cred.flavor, RPC_AUTH_GSS);
	assert_int_equal(cred.gss_service, GSS_SVC_PRIVACY);
	assert_false(cred.gss_mapped);
	check_bodies(&c, x);
	check_peek(&c, x);

	/* a call's header, signed by the client; a byte changed in it or in the MIC: refused */
	uint8_t header[40];
	for (size_t i = 0; i < sizeof header; i++)
		header[i] = (uint8_t)(i * 13);
	OM_uint32 minor;
	gss_buffer_desc msg = {sizeof header, header}, mic;
	assert_int_equal(gss_get_mic(&minor, c.ctx, GSS_C_QOP_DEFAULT, &msg, &mic), GSS_S_COMPLETE);
	assert_int_equal(gss_ctx_verify_mic(x, header, sizeof header, mic.value, mic.length), 0);
	header[5] ^= 1;
	assert_int_equal(gss_ctx_verify_mic(x, header, sizeof header, mic.value, mic.length), -1);
	header[5] ^= 1;
	((uint8_t *)mic.value)[mic.length - 1] ^= 1;
	assert_int_equal(gss_ctx_verify_mic(x, header, sizeof header, mic.value, mic.length), -1);
	gss_release_buffer(&minor, &mic);

	assert_int_equal(gss_ctx_check_seq(x, 1), GSS_SEQ_OK);
	assert_int_equal(gss_ctx_check_seq(x, 1), GSS_SEQ_REPLAY);
	/* the reply's verifier: a MIC of the sequence number, which the client checks */
	uint8_t v[GSS_MIC_MAX], be[4] = {0, 0, 0, 1};
	int n = gss_ctx_mic_u32(x, 1, v, sizeof v);
	assert_true(n > 0);
	gss_buffer_desc m1 = {4, be}, t1 = {(size_t)n, v};
	assert_int_equal(gss_verify_mic(&minor, c.ctx, &m1, &t1, NULL), GSS_S_COMPLETE);

	/* DESTROY: the handle names nothing from now on; the call holding it finishes */
	assert_int_equal(gss_ctx_destroy(t, h, sizeof h), 0);
	assert_null(gss_ctx_get(t, h, sizeof h));
	assert_int_equal(gss_ctx_destroy(t, h, sizeof h), -1);
	assert_int_equal(gss_ctx_check_seq(x, 2), GSS_SEQ_OK);
	gss_ctx_put(x);
	assert_int_equal(gss_ctx_count(t), 0);
	client_free(&c);
	gss_ctx_table_free(t);
}

/* Rings take and let go of one context at once, each call checking a header's MIC, while
 * DESTROY comes from one of them: every call holding it finishes (under ASan or TSan, a use
 * after the last reference, or a count raced, fails here), and the table ends empty. */
#define RINGS 4
struct ring_arg {
	struct gss_ctx_table *t;
	const uint8_t *h;
	const uint8_t *msg, *mic;
	size_t msg_len, mic_len;
	unsigned calls, bad;
	bool destroyer;
};

static void *ring_calls(void *p)
{
	struct ring_arg *a = p;
	for (unsigned i = 0; i < 20000; i++) {
		if (a->destroyer && i == 2000)
			gss_ctx_destroy(a->t, a->h, GSS_CTX_HANDLE_LEN);
		struct gss_ctx *x = gss_ctx_get(a->t, a->h, GSS_CTX_HANDLE_LEN);
		if (!x)
			break;
		a->calls++;
		a->bad += gss_ctx_verify_mic(x, a->msg, a->msg_len, a->mic, a->mic_len) != 0;
		gss_ctx_put(x);
	}
	return NULL;
}

static void test_shared_by_rings(void **state)
{
	(void)state;
	struct gss_ctx_table *t = table(16, 4);
	struct client c;
	client_new(&c);
	uint8_t h[GSS_CTX_HANDLE_LEN], header[40] = {1, 2, 3};
	establish(t, &c, "10.0.0.1", h);
	OM_uint32 minor;
	gss_buffer_desc msg = {sizeof header, header}, mic;
	assert_int_equal(gss_get_mic(&minor, c.ctx, GSS_C_QOP_DEFAULT, &msg, &mic), GSS_S_COMPLETE);
	/* one call holds it throughout, as a call in flight when DESTROY comes does */
	struct gss_ctx *held = gss_ctx_get(t, h, sizeof h);
	assert_non_null(held);
	pthread_t th[RINGS];
	struct ring_arg a[RINGS];
	for (int i = 0; i < RINGS; i++) {
		a[i] = (struct ring_arg){t, h, header, mic.value, sizeof header, mic.length, 0, 0,
					 i == 0};
		assert_int_equal(pthread_create(&th[i], NULL, ring_calls, &a[i]), 0);
	}
	for (int i = 0; i < RINGS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(a[i].bad, 0);
	}
	assert_int_equal(a[0].calls, 2000);   /* the destroyer's own calls end with DESTROY */
	assert_null(gss_ctx_get(t, h, sizeof h));
	assert_int_equal(gss_ctx_count(t), 0);
	/* the held call still has it whole */
	assert_int_equal(gss_ctx_verify_mic(held, header, sizeof header, mic.value, mic.length), 0);
	gss_ctx_put(held);
	gss_release_buffer(&minor, &mic);
	client_free(&c);
	gss_ctx_table_free(t);
}

static void test_bounds_and_refusals(void **state)
{
	(void)state;
	struct gss_ctx_table *t = table(3, 2);
	struct client c[4];
	uint8_t h[4][GSS_CTX_HANDLE_LEN];
	for (int i = 0; i < 4; i++)
		client_new(&c[i]);
	establish(t, &c[0], "10.0.0.1", h[0]);
	establish(t, &c[1], "10.0.0.1", h[1]);
	/* a third from the same address: refused; from another, made; then the whole is full */
	struct sockaddr_storage p1 = peer("10.0.0.1"), p2 = peer("10.0.0.2");
	gss_buffer_desc out;
	OM_uint32 minor;
	client_step(&c[2], NULL, 0, &out);
	struct gss_init_res r;
	assert_int_equal(gss_ctx_accept(t, &p1, NULL, 0, out.value, out.length, &r), -1);
	assert_int_equal(r.major, GSS_S_FAILURE);
	gss_release_buffer(&minor, &out);
	establish(t, &c[3], "10.0.0.2", h[3]);
	assert_int_equal(gss_ctx_count(t), 3);
	client_free(&c[2]);
	client_new(&c[2]);
	client_step(&c[2], NULL, 0, &out);
	assert_int_equal(gss_ctx_accept(t, &p2, NULL, 0, out.value, out.length, &r), -1);
	gss_release_buffer(&minor, &out);
	/* a token that is no token: a failed context, not kept */
	assert_int_equal(gss_ctx_destroy(t, h[3], sizeof h[3]), 0);
	assert_int_equal(gss_ctx_accept(t, &p2, NULL, 0, "garbage!", 8, &r), 0);
	assert_true(GSS_ERROR(r.major));
	assert_int_equal(r.handle_len, 0);
	gss_init_res_free(&r);
	assert_int_equal(gss_ctx_count(t), 2);
	/* CONTINUE_INIT of a handle that names nothing, or a context already made */
	uint8_t none[GSS_CTX_HANDLE_LEN] = {1, 2, 3};
	assert_int_equal(gss_ctx_accept(t, &p1, none, sizeof none, "x", 1, &r), -1);
	assert_int_equal(gss_ctx_accept(t, &p1, h[0], sizeof h[0], "x", 1, &r), -1);
	struct gss_ctx *made = gss_ctx_get(t, h[0], sizeof h[0]);   /* still there, usable */
	assert_non_null(made);
	gss_ctx_put(made);
	assert_null(gss_ctx_get(t, h[0], 4));   /* a handle of another length */
	for (int i = 0; i < 4; i++)
		client_free(&c[i]);
	gss_ctx_table_free(t);   /* with contexts still in it */
}

/* gss_unmapped = refuse: alice has no user on this host, so her context is not made, and the
 * refusal says whose it was (the log line). */
static void test_unmapped_refused(void **state)
{
	(void)state;
	struct gss_ctx_table *t = table_of(16, 4, true);
	struct client c;
	client_new(&c);
	struct sockaddr_storage p = peer("10.0.0.9");
	gss_buffer_desc out;
	OM_uint32 minor;
	client_step(&c, NULL, 0, &out);
	struct gss_init_res r = {0};
	assert_int_equal(gss_ctx_accept(t, &p, NULL, 0, out.value, out.length, &r), 0);
	gss_release_buffer(&minor, &out);
	assert_int_equal(r.major, GSS_S_FAILURE);
	assert_int_equal(r.handle_len, 0);
	assert_string_equal(r.principal, "alice@NFSDUC.TEST");
	assert_int_equal(gss_ctx_count(t), 0);
	gss_init_res_free(&r);
	client_free(&c);
	gss_ctx_table_free(t);
}

static void test_missing_keytab(void **state)
{
	(void)state;
	char err[512];
	const struct gss_ctx_params p = {"/nonexistent/nfs.keytab", 128, 4, 4, false, false};
	assert_null(gss_ctx_table_new(&p, err, sizeof err));
	assert_non_null(strstr(err, "keytab /nonexistent/nfs.keytab: "));
}

int main(void)
{
	if (!getenv("NFSDUC_KEYTAB")) {
		fprintf(stderr, "run under tests/with_kdc.sh\n");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_context_made_and_used),
		cmocka_unit_test(test_shared_by_rings),
		cmocka_unit_test(test_bounds_and_refusals),
		cmocka_unit_test(test_unmapped_refused),
		cmocka_unit_test(test_missing_keytab),
	};
	int failed = cmocka_run_group_tests_name("own tokens", tests, NULL, NULL);
	mit_crypto = true;
	return failed + cmocka_run_group_tests_name("MIT's tokens", tests, NULL, NULL);
}
