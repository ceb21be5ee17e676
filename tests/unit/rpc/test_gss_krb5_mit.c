/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RFC 4121's tokens on OpenSSL (rpc/gss_krb5.h) against MIT's GSS-API, beside a real KDC
 * (with_kdc.sh): a context made in this process between the machine principal (from the
 * client keytab, as rpc.gssd would for root) and nfs/localhost, with the flags RPCSEC_GSS
 * clients ask for; the acceptor's end exported as a lucid context into ours. Then both ways:
 * MIT's initiator seals (gss_wrap; gss_wrap_iov with a trailer, and without one, which rotates
 * the token: RRC) and ours opens, and peeks the same bytes; ours seals (in place, from pieces)
 * and MIT's initiator opens the same bytes; MICs made by each checked by the other, and
 * changed ones refused. Our SND_SEQ continues MIT's acceptor's. argv[1], when given, is the
 * enctype the realm must have negotiated (with_kdc.sh's NFSDUC_KDC_ENCTYPES chose it). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpc/gss_krb5.h"

#define FLAGS (GSS_C_MUTUAL_FLAG | GSS_C_INTEG_FLAG | GSS_C_CONF_FLAG)

static const size_t sizes[] = {0, 1, 15, 16, 17, 100, 4096, 47008 + 32, 1 << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])

struct mit {
	gss_ctx_id_t init;              /* MIT's initiator: the client's end */
	struct gss_krb5 *own;           /* the acceptor's end, ours */
	uint64_t seq;                   /* the SND_SEQ our next token must carry */
	int32_t enctype;
};

static int32_t expected_enctype;

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 29 + seed + (i >> 9));
}

static uint64_t seq_of(const uint8_t *hdr)
{
	uint64_t s = 0;
	for (int i = 8; i < 16; i++)
		s = s << 8 | hdr[i];
	return s;
}

/* ---- the context ---- */

static void init_cred(gss_cred_id_t *cred)
{
	OM_uint32 minor;
	const char *who = getenv("NFSDUC_MACHINE"), *kt = getenv("NFSDUC_CLIENT_KEYTAB");
	char ccache[64];
	snprintf(ccache, sizeof ccache, "MEMORY:gss-krb5-mit-%d", (int)getpid());
	gss_key_value_element_desc kv[2] = {{"client_keytab", kt}, {"ccache", ccache}};
	gss_key_value_set_desc store = {2, kv};
	gss_buffer_desc nb = {strlen(who), (void *)who};
	gss_OID_set_desc mechs = {1, (gss_OID)gss_mech_krb5};
	gss_name_t name;
	assert_int_equal(gss_import_name(&minor, &nb, (gss_OID)GSS_KRB5_NT_PRINCIPAL_NAME, &name),
			 GSS_S_COMPLETE);
	assert_int_equal(gss_acquire_cred_from(&minor, name, 0, &mechs, GSS_C_INITIATE, &store,
					       cred, NULL, NULL), GSS_S_COMPLETE);
	gss_release_name(&minor, &name);
}

static void accept_cred(gss_cred_id_t *cred)
{
	OM_uint32 minor;
	gss_key_value_element_desc kv = {"keytab", getenv("NFSDUC_KEYTAB")};
	gss_key_value_set_desc store = {1, &kv};
	assert_int_equal(gss_acquire_cred_from(&minor, GSS_C_NO_NAME, 0, GSS_C_NO_OID_SET,
					       GSS_C_ACCEPT, &store, cred, NULL, NULL),
			 GSS_S_COMPLETE);
}

/* The tokens back and forth in memory until both ends are done. */
static void handshake(gss_ctx_id_t *init, gss_ctx_id_t *acc)
{
	OM_uint32 minor, m, imaj = GSS_S_CONTINUE_NEEDED, amaj = GSS_S_CONTINUE_NEEDED, flags = 0;
	gss_cred_id_t icred, acred;
	gss_buffer_desc itok = GSS_C_EMPTY_BUFFER, atok = GSS_C_EMPTY_BUFFER;
	gss_buffer_desc tb = {13, (void *)"nfs@localhost"};
	gss_name_t target;
	init_cred(&icred);
	accept_cred(&acred);
	assert_int_equal(gss_import_name(&minor, &tb, GSS_C_NT_HOSTBASED_SERVICE, &target), 0);
	for (int round = 0; round < 8 && !(imaj == 0 && amaj == 0); round++) {
		imaj = gss_init_sec_context(&minor, icred, init, target, (gss_OID)gss_mech_krb5,
					    FLAGS, 0, GSS_C_NO_CHANNEL_BINDINGS, round ? &atok : NULL,
					    NULL, &itok, &flags, NULL);
		gss_release_buffer(&m, &atok);
		assert_false(GSS_ERROR(imaj));
		if (itok.length == 0)
			continue;
		amaj = gss_accept_sec_context(&minor, acc, acred, &itok, GSS_C_NO_CHANNEL_BINDINGS,
					      NULL, NULL, &atok, NULL, NULL, NULL);
		gss_release_buffer(&m, &itok);
		assert_false(GSS_ERROR(amaj));
	}
	assert_int_equal(imaj, GSS_S_COMPLETE);
	assert_int_equal(amaj, GSS_S_COMPLETE);
	assert_int_equal(flags & FLAGS, FLAGS);
	gss_release_buffer(&m, &atok);
	gss_release_name(&minor, &target);
	gss_release_cred(&minor, &icred);
	gss_release_cred(&minor, &acred);
}

/* The acceptor's end into ours, after one last MIC of MIT's: ours must go on from its
 * SND_SEQ. MIT deletes the context it exports. */
static int setup(void **state)
{
	OM_uint32 minor;
	struct mit *t = calloc(1, sizeof *t);
	gss_ctx_id_t acc = GSS_C_NO_CONTEXT;
	t->init = GSS_C_NO_CONTEXT;
	handshake(&t->init, &acc);
	gss_buffer_desc msg = {1, (void *)"x"}, mic;
	assert_int_equal(gss_get_mic(&minor, acc, 0, &msg, &mic), GSS_S_COMPLETE);
	t->seq = seq_of(mic.value) + 1;
	gss_release_buffer(&minor, &mic);
	void *lucid = NULL;
	assert_int_equal(gss_krb5_export_lucid_sec_context(&minor, &acc, 1, &lucid), GSS_S_COMPLETE);
	assert_ptr_equal(acc, GSS_C_NO_CONTEXT);
	gss_krb5_lucid_context_v1_t *l = lucid;
	assert_int_equal(l->protocol, 1);
	assert_int_equal(l->initiate, 0);
	assert_true(l->send_seq == t->seq);
	t->own = gss_krb5_from_lucid(l);
	assert_non_null(t->own);
	t->enctype = gss_krb5_enctype(t->own);
	print_message("context: enctype %d, acceptor subkey %u\n", (int)t->enctype,
		      l->cfx_kd.have_acceptor_subkey);
	gss_krb5_free_lucid_sec_context(&minor, lucid);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct mit *t = *state;
	OM_uint32 minor;
	gss_delete_sec_context(&minor, &t->init, GSS_C_NO_BUFFER);
	gss_krb5_free(t->own);
	free(t);
	return 0;
}

static void test_enctype(void **state)
{
	struct mit *t = *state;
	if (expected_enctype)
		assert_int_equal(t->enctype, expected_enctype);
}

/* ---- MIT seals, ours opens ---- */

/* tok (MIT's, len bytes for dlen bytes of data from seed) peeked, then opened in place. */
static void ours_opens(struct mit *t, uint8_t *tok, size_t len, size_t dlen, unsigned seed)
{
	uint8_t *want = malloc(dlen + 1), head[64], *data;
	size_t got;
	fill(want, dlen, seed);
	if (tok[6] == 0 && tok[7] == 0 && dlen >= 64 + 40) {    /* well before the last blocks */
		assert_int_equal(gss_krb5_peek(t->own, tok, len, 0, head, 64), 0);
		assert_memory_equal(head, want, 64);
		assert_int_equal(gss_krb5_peek(t->own, tok, len, 37, head, 64), 0);
		assert_memory_equal(head, want + 37, 64);
	}
	assert_int_equal(gss_krb5_unwrap(t->own, tok, len, &data, &got), 0);
	assert_int_equal(got, dlen);
	assert_memory_equal(data, want, dlen);
	free(want);
}

static void test_mit_wrap(void **state)
{
	struct mit *t = *state;
	OM_uint32 minor;
	for (size_t i = 0; i < NSIZES; i++) {
		uint8_t *plain = malloc(sizes[i] + 1);
		fill(plain, sizes[i], (unsigned)i);
		gss_buffer_desc in = {sizes[i], plain}, tok;
		int conf = 0;
		assert_int_equal(gss_wrap(&minor, t->init, 1, 0, &in, &conf, &tok), GSS_S_COMPLETE);
		assert_int_equal(conf, 1);
		uint8_t *buf = malloc(tok.length);
		memcpy(buf, tok.value, tok.length);
		if (i == 0)
			print_message("MIT's gss_wrap: flags 0x%02x EC %u RRC %u\n", buf[2],
				      buf[4] << 8 | buf[5], buf[6] << 8 | buf[7]);
		ours_opens(t, buf, tok.length, sizes[i], (unsigned)i);
		memcpy(buf, tok.value, tok.length);
		buf[tok.length - 1] ^= 1;
		uint8_t *data;
		size_t dlen;
		assert_int_equal(gss_krb5_unwrap(t->own, buf, tok.length, &data, &dlen), -1);
		free(buf);
		gss_release_buffer(&minor, &tok);
		free(plain);
	}
}

/* gss_wrap_iov in one buffer: header, data, padding and (with_trailer) a trailer; without
 * one, MIT puts the trailer in the header and rotates the token (RRC), as Windows does. */
static void mit_wrap_iov(struct mit *t, size_t len, unsigned seed, bool with_trailer)
{
	OM_uint32 minor;
	gss_iov_buffer_desc iov[4] = {
		{GSS_IOV_BUFFER_TYPE_HEADER, GSS_C_EMPTY_BUFFER},
		{GSS_IOV_BUFFER_TYPE_DATA, {len, NULL}},
		{GSS_IOV_BUFFER_TYPE_PADDING, GSS_C_EMPTY_BUFFER},
		{GSS_IOV_BUFFER_TYPE_TRAILER, GSS_C_EMPTY_BUFFER},
	};
	int n = with_trailer ? 4 : 3, conf = 0;
	assert_int_equal(gss_wrap_iov_length(&minor, t->init, 1, 0, NULL, iov, n), GSS_S_COMPLETE);
	assert_int_equal(iov[2].buffer.length, 0);
	size_t head = iov[0].buffer.length, tail = with_trailer ? iov[3].buffer.length : 0;
	uint8_t *buf = malloc(head + len + tail);
	iov[0].buffer.value = buf;
	iov[1].buffer.value = buf + head;
	iov[3].buffer.value = buf + head + len;
	fill(buf + head, len, seed);
	assert_int_equal(gss_wrap_iov(&minor, t->init, 1, 0, &conf, iov, n), GSS_S_COMPLETE);
	if (len == 0)
		print_message("MIT's gss_wrap_iov %s a trailer: header %zu, trailer %zu, "
			      "EC %u RRC %u\n", with_trailer ? "with" : "without", head, tail,
			      buf[4] << 8 | buf[5], buf[6] << 8 | buf[7]);
	if (!with_trailer)
		assert_true((buf[6] << 8 | buf[7]) != 0);
	ours_opens(t, buf, head + len + tail, len, seed);
	free(buf);
}

static void test_mit_wrap_iov(void **state)
{
	for (size_t i = 0; i < NSIZES; i++) {
		mit_wrap_iov(*state, sizes[i], (unsigned)i + 7, true);
		mit_wrap_iov(*state, sizes[i], (unsigned)i + 8, false);
	}
}

/* ---- ours seals, MIT opens ---- */

/* tok (ours) opened by MIT's initiator: the plaintext want; our SND_SEQ in order. */
static void mit_opens(struct mit *t, const uint8_t *tok, size_t len, const uint8_t *want,
		      size_t dlen)
{
	OM_uint32 minor;
	gss_buffer_desc in = {len, (void *)tok}, out = GSS_C_EMPTY_BUFFER;
	int conf = 0;
	assert_true(seq_of(tok) == t->seq);
	t->seq++;
	assert_int_equal(gss_unwrap(&minor, t->init, &in, &out, &conf, NULL), GSS_S_COMPLETE);
	assert_int_equal(conf, 1);
	assert_int_equal(out.length, dlen);
	assert_memory_equal(out.value, want, dlen);
	gss_release_buffer(&minor, &out);
}

static void test_own_wrap(void **state)
{
	struct mit *t = *state;
	for (size_t i = 0; i < NSIZES; i++) {
		size_t len = sizes[i], head, tail;
		assert_int_equal(gss_krb5_wrap_room(t->own, len, &head, &tail), 0);
		uint8_t *plain = malloc(len + 1), *buf = malloc(head + len + tail);
		fill(plain, len, (unsigned)i + 3);
		memcpy(buf + head, plain, len);
		assert_int_equal(gss_krb5_wrap(t->own, buf + head, len, head, tail), 0);
		mit_opens(t, buf, head + len + tail, plain, len);
		/* from three pieces, the middle one at an odd place */
		size_t a = len / 3, b = len - len / 4;
		struct iovec iov[3] = {{plain, a}, {plain + a, b - a}, {plain + b, len - b}};
		memset(buf, 0, head + len + tail);
		assert_int_equal(gss_krb5_wrap_iov_out(t->own, iov, 3, buf), 0);
		mit_opens(t, buf, head + len + tail, plain, len);
		/* a byte changed: MIT refuses it */
		assert_int_equal(gss_krb5_wrap(t->own, buf + head, len, head, tail), 0);
		t->seq++;
		buf[head + len / 2] ^= 0x20;
		gss_buffer_desc in = {head + len + tail, buf}, out = GSS_C_EMPTY_BUFFER;
		OM_uint32 minor;
		assert_true(GSS_ERROR(gss_unwrap(&minor, t->init, &in, &out, NULL, NULL)));
		free(buf);
		free(plain);
	}
}

/* ---- MICs ---- */

static void test_mics(void **state)
{
	struct mit *t = *state;
	OM_uint32 minor;
	for (size_t i = 0; i < NSIZES; i++) {
		size_t len = sizes[i];
		uint8_t *msg = malloc(len + 1), mic[64];
		fill(msg, len, (unsigned)i + 5);
		gss_buffer_desc in = {len, msg}, tok;
		struct iovec iov[2] = {{msg, len / 2}, {msg + len / 2, len - len / 2}};
		/* MIT's initiator signs, ours checks (whole and in pieces); a change refused */
		assert_int_equal(gss_get_mic(&minor, t->init, 0, &in, &tok), GSS_S_COMPLETE);
		assert_int_equal(gss_krb5_verify_mic(t->own, msg, len, tok.value, tok.length), 0);
		assert_int_equal(gss_krb5_verify_mic_iov(t->own, iov, 2, tok.value, tok.length), 0);
		((uint8_t *)tok.value)[tok.length - 1] ^= 1;
		assert_int_equal(gss_krb5_verify_mic(t->own, msg, len, tok.value, tok.length), -1);
		gss_release_buffer(&minor, &tok);
		/* ours signs, MIT checks; a change refused */
		int ml = gss_krb5_get_mic_iov(t->own, iov, 2, mic, sizeof mic);
		assert_true(ml > 0);
		assert_true(seq_of(mic) == t->seq);
		t->seq++;
		gss_buffer_desc mb = {(size_t)ml, mic};
		assert_int_equal(gss_verify_mic(&minor, t->init, &in, &mb, NULL), GSS_S_COMPLETE);
		mic[ml - 1] ^= 1;
		assert_true(GSS_ERROR(gss_verify_mic(&minor, t->init, &in, &mb, NULL)));
		ml = gss_krb5_get_mic(t->own, msg, len, mic, sizeof mic);
		t->seq++;
		mb.length = (size_t)ml;
		assert_int_equal(gss_verify_mic(&minor, t->init, &in, &mb, NULL), GSS_S_COMPLETE);
		free(msg);
	}
}

int main(int argc, char **argv)
{
	if (!getenv("NFSDUC_KEYTAB") || !getenv("NFSDUC_CLIENT_KEYTAB")) {
		fprintf(stderr, "run under tests/with_kdc.sh\n");
		return 1;
	}
	if (argc > 1)
		expected_enctype = atoi(argv[1]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_enctype),
		cmocka_unit_test(test_mit_wrap),
		cmocka_unit_test(test_mit_wrap_iov),
		cmocka_unit_test(test_own_wrap),
		cmocka_unit_test(test_mics),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
