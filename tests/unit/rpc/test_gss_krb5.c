/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RFC 4121's tokens on OpenSSL (rpc/gss_krb5.h), without a KDC: the primitives against the
 * published vectors (RFC 8009 Appendix A's key derivations, encryptions with their confounders
 * and checksums; RFC 3962 Appendix B's ciphertext stealing; MIT's t_derive, t_decrypt and
 * t_cksums for the SHA-1 enctypes), then both ends of a context with a fixed key sealing and
 * signing for each other at the sizes that matter (block edges, an NFS READ's 47008 + 32, 1
 * MiB), in place and from pieces; every byte of a token changed is refused, as are tokens that
 * claim to come from our own side, integrity-only wrap tokens, a wrong AcceptorSubkey flag;
 * rotated tokens (RRC) are accepted; peek agrees with unwrap. The MIT interoperability checks
 * are test_gss_krb5_mit.c's. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/gss_krb5.h"

static size_t unhex(const char *s, uint8_t *out)
{
	size_t n = 0;
	for (; s[0] && s[1]; s += 2) {
		unsigned v;
		assert_int_equal(sscanf(s, "%2x", &v), 1);
		out[n++] = (uint8_t)v;
	}
	return n;
}

/* ---- the primitives ---- */

struct derive_vec {
	int32_t enctype;
	const char *key, *kc, *ke, *ki;
};

static void test_derive_vectors(void **state)
{
	(void)state;
	static const struct derive_vec v[] = {
		/* RFC 8009 Appendix A, usage 2 */
		{19, "3705D96080C17728A0E800EAB6E0D23C", "B31A018A48F54776F403E9A396325DC3",
		 "9B197DD1E8C5609D6E67C3E37C62C72E", "9FDA0E56AB2D85E1569A688696C26A6C"},
		{20, "6D404D37FAF79F9DF0D33568D320669800EB4836472EA8A026D16B7182460C52",
		 "EF5718BE86CC84963D8BBB5031E9F5C4BA41F28FAF69E73D",
		 "56AB22BEE63D82D7BC5227F6773F8EA7A5EB1C825160C38312980C442E5C7E49",
		 "69B16514E3CD8E56B82010D5C73012B622C4D00FFC23ED1F"},
		/* MIT's t_derive.c (RFC 3961 DK), usage 2 */
		{17, "42263C6E89F4FC28B8DF68EE09799F15", "34280A382BC92769B2DA2F9EF066854B",
		 "5B14FC4E250E14DDF9DCCF1AF6674F53", "4ED31063621684F09AE8D89991AF3E8F"},
		{18, "FE697B52BC0D3CE14432BA036A92E65BBB52280990A2FA27883998D72AF30161",
		 "BFAB388BDCB238E9F9C98D6A878304F04D30C82556375AC507A7A852790F4674",
		 "C7CFD9CD75FE793A586A542D87E0D1396F1134A104BB1A9190B8C90ADA3DDF37",
		 "97151B4C76945063E2EB0529DC067D97D7BBA90776D8126D91F34F3101AEA8BA"},
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		uint8_t key[32], want[32], got[32];
		size_t kl = unhex(v[i].key, key);
		const char *exp[3] = {v[i].kc, v[i].ke, v[i].ki};
		const uint8_t kinds[3] = {0x99, 0xAA, 0x55};
		for (int j = 0; j < 3; j++) {
			size_t wl = unhex(exp[j], want);
			assert_int_equal(gss_krb5_derive(v[i].enctype, key, kl, 2, kinds[j], got,
							 sizeof got), (int)wl);
			assert_memory_equal(got, want, wl);
		}
	}
	uint8_t key[16] = {0}, out[32];
	assert_int_equal(gss_krb5_derive(18, key, 16, 2, 0x99, out, sizeof out), -1);
	assert_int_equal(gss_krb5_derive(23, key, 16, 2, 0x99, out, sizeof out), -1);
}

struct enc_vec {
	int32_t enctype;
	const char *key, *plain, *conf, *ct;
};

/* RFC 8009 Appendix A's sample encryptions, usage 2. */
static const char k19[] = "3705D96080C17728A0E800EAB6E0D23C";
static const char k20[] = "6D404D37FAF79F9DF0D33568D320669800EB4836472EA8A026D16B7182460C52";
static const struct enc_vec rfc8009_enc[] = {
	{19, k19, "", "7E5895EAF2672435BAD817F545A37148",
	 "EF85FB890BB8472F4DAB20394DCA781DAD877EDA39D50C870C0D5A0A8E48C718"},
	{19, k19, "000102030405", "7BCA285E2FD4130FB55B1A5C83BC5B24",
	 "84D7F30754ED987BAB0BF3506BEB09CFB55402CEF7E6877CE99E247E52D16ED4421DFDF8976C"},
	{19, k19, "000102030405060708090A0B0C0D0E0F", "56AB21713FF62C0A1457200F6FA9948F",
	 "3517D640F50DDC8AD3628722B3569D2AE07493FA8263254080EA65C1008E8FC295FB4852E7D83E1E7C48C37EEB"
	 "E6B0D3"},
	{19, k19, "000102030405060708090A0B0C0D0E0F1011121314", "A7A4E29A4728CE10664FB64E49AD3FAC",
	 "720F73B18D9859CD6CCB4346115CD336C70F58EDC0C4437C5573544C31C813BCE1E6D072C186B39A413C2F92CA"
	 "9B8334A287FFCBFC"},
	{20, k20, "", "F764E9FA15C276478B2C7D0C4E5F58E4",
	 "41F53FA5BFE7026D91FAF9BE959195A058707273A96A40F0A01960621AC612748B9BBFBE7EB4CE3C"},
	{20, k20, "000102030405", "B80D3251C1F6471494256FFE712D0B9A",
	 "4ED7B37C2BCAC8F74F23C1CF07E62BC7B75FB3F637B9F559C7F664F69EAB7B6092237526EA0D1F61CB20D69D10"
	 "F2"},
	{20, k20, "000102030405060708090A0B0C0D0E0F", "53BF8A0D105265D4E276428624CE5E63",
	 "BC47FFEC7998EB91E8115CF8D19DAC4BBBE2E163E87DD37F49BECA92027764F68CF51F14D798C2273F35DF574D"
	 "1F932E40C4FF255B36A266"},
	{20, k20, "000102030405060708090A0B0C0D0E0F1011121314", "763E65367E864F02F55153C7E3B58AF1",
	 "40013E2DF58E8751957D2878BCD2D6FE101CCFD556CB1EAE79DB3C3EE86429F2B2A602AC86FEF6ECB647D6295F"
	 "AE077A1FEB517508D2C16B4192E01F62"},
};

/* Encrypted with the given confounder to the published ciphertext; decrypted back; a byte of
 * it changed refused. */
static void test_encrypt_rfc8009(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof rfc8009_enc / sizeof rfc8009_enc[0]; i++) {
		const struct enc_vec *v = &rfc8009_enc[i];
		uint8_t key[32], plain[32], conf[16], want[96], got[96], back[96];
		size_t kl = unhex(v->key, key), pl = unhex(v->plain, plain), cl = unhex(v->ct, want);
		unhex(v->conf, conf);
		assert_int_equal(gss_krb5_encrypt(v->enctype, key, kl, 2, conf, plain, pl, got), 0);
		assert_memory_equal(got, want, cl);
		assert_int_equal(gss_krb5_decrypt(v->enctype, key, kl, 2, want, cl, back), 0);
		assert_memory_equal(back, conf, 16);
		assert_memory_equal(back + 16, plain, pl);
		want[cl / 2] ^= 0x40;
		assert_int_equal(gss_krb5_decrypt(v->enctype, key, kl, 2, want, cl, back), -1);
	}
}

/* MIT's t_decrypt.c vectors for the SHA-1 enctypes: decrypted, then encrypted again with the
 * confounder found, to the same bytes. */
static void test_decrypt_mit_sha1(void **state)
{
	(void)state;
	static const struct {
		int32_t enctype;
		const char *key, *plain;
		uint32_t usage;
		const char *ct;
	} v[] = {
		{17, "5A5C0F0BA54F3828B2195E66CA24A289", "", 0,
		 "49FF8E11C173D9583A3254FBE7B1F1DF36C538E8416784A1672E6676"},
		{17, "DCEEB70B3DE76562E689226C76429148", "30 bytes bytes bytes bytes byt", 4,
		 "C96081032D5D8EEB7E32B4089F789D0FAA481DEA74C0F97CBF3146DDFCF8E800156ECB532FC203E30FF600B6"
		 "3B350939FECE510F02D7FF1E7BAC"},
		{18, "E5A72BE9B7926C1225BAFEF9C1872E7BA4CDB2B17893D84ABD90ACDD8764D966", "13 bytes byte",
		 3, "D8F1AAFEEC84587CC3E700A774E56651A6D693E174EC4473B5E6D96F80297A653FB818AD893E719F96"},
		{18, "F1C795E9248A09338D82C3F8D5B567040B0110736845041347235B1404231398",
		 "30 bytes bytes bytes bytes byt", 4,
		 "D1137A4D634CFECE924DBC3BF6790648BD5CFF7DE0E7B99460211D0DAEF3D79A295C688858F3B34B9CBD6EEB"
		 "AE81DAF6B734D4D498B6714F1C1D"},
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		uint8_t key[32], ct[96], back[96], again[96];
		size_t kl = unhex(v[i].key, key), cl = unhex(v[i].ct, ct), pl = strlen(v[i].plain);
		assert_int_equal(cl, 16 + pl + 12);
		assert_int_equal(gss_krb5_decrypt(v[i].enctype, key, kl, v[i].usage, ct, cl, back),
				 0);
		assert_memory_equal(back + 16, v[i].plain, pl);
		assert_int_equal(gss_krb5_encrypt(v[i].enctype, key, kl, v[i].usage, back, back + 16,
						  pl, again), 0);
		assert_memory_equal(again, ct, cl);
	}
}

static void test_checksum_vectors(void **state)
{
	(void)state;
	static const struct {
		int32_t enctype;
		const char *key;
		uint32_t usage;
		const char *msg, *sum;      /* msg: hex when hexmsg */
		bool hexmsg;
	} v[] = {
		{19, k19, 2, "000102030405060708090A0B0C0D0E0F1011121314",
		 "D78367186643D67B411CBA9139FC1DEE", true},
		{20, k20, 2, "000102030405060708090A0B0C0D0E0F1011121314",
		 "45EE791567EEFCA37F4AC1E0222DE80D43C3BFA06699672A", true},
		{17, "9062430C8CDA3388922E6D6A509F5B7A", 3, "eight nine ten eleven twelve thirteen",
		 "01A4B088D45628F6946614E3", false},
		{18, "B1AE4CD8462AFF1677053CC9279AAC30B796FB81CE21474DD3DDBCFEA4EC76D7", 4, "fourteen",
		 "E08739E3279E2903EC8E3836", false},
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		uint8_t key[32], msg[64], want[32], got[48];
		size_t kl = unhex(v[i].key, key), wl = unhex(v[i].sum, want);
		size_t ml = v[i].hexmsg ? unhex(v[i].msg, msg) : strlen(v[i].msg);
		if (!v[i].hexmsg)
			memcpy(msg, v[i].msg, ml);
		assert_int_equal(gss_krb5_checksum(v[i].enctype, key, kl, v[i].usage, msg, ml, got),
				 (int)wl);
		assert_memory_equal(got, want, wl);
	}
}

/* RFC 3962 Appendix B: AES-128 CTS, IV 0, key "chicken teriyaki". */
static void test_cts_rfc3962(void **state)
{
	(void)state;
	static const char text[] = "I would like the General Gau's Chicken, please, and wonton soup.";
	static const struct {
		size_t len;
		const char *ct;
	} v[] = {
		{17, "c6353568f2bf8cb4d8a580362da7ff7f97"},
		{31, "fc00783e0efdb2c1d445d4c8eff7ed2297687268d6ecccc0c07b25e25ecfe5"},
		{32, "39312523a78662d5be7fcbcc98ebf5a897687268d6ecccc0c07b25e25ecfe584"},
		{47, "97687268d6ecccc0c07b25e25ecfe584b3fffd940c16a18c1b5549d2f838029e39312523a78662d5be7f"
		     "cbcc98ebf5"},
		{48, "97687268d6ecccc0c07b25e25ecfe5849dad8bbb96c4cdc03bc103e1a194bbd839312523a78662d5be7f"
		     "cbcc98ebf5a8"},
		{64, "97687268d6ecccc0c07b25e25ecfe58439312523a78662d5be7fcbcc98ebf5a84807efe836ee89a52673"
		     "0dbc2f7bc8409dad8bbb96c4cdc03bc103e1a194bbd8"},
	};
	const uint8_t *key = (const uint8_t *)"chicken teriyaki";
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		uint8_t want[64], got[64], back[64];
		assert_int_equal(unhex(v[i].ct, want), v[i].len);
		assert_int_equal(gss_krb5_cts(key, 16, true, text, v[i].len, got), 0);
		assert_memory_equal(got, want, v[i].len);
		assert_int_equal(gss_krb5_cts(key, 16, false, want, v[i].len, back), 0);
		assert_memory_equal(back, text, v[i].len);
	}
	uint8_t out[16];
	assert_int_equal(gss_krb5_cts(key, 16, true, text, 15, out), -1);
}

/* ---- both ends of a context ---- */

static const int32_t enctypes[] = {17, 18, 19, 20};

/* The initiator's and the acceptor's ends with one key (32 bytes of a pattern, the first 16
 * for AES-128). */
struct ends {
	struct gss_krb5 *init, *acc;
};

static struct ends ends_new(int32_t enctype, bool subkey)
{
	uint8_t key[32];
	for (int i = 0; i < 32; i++)
		key[i] = (uint8_t)(i * 37 + enctype);
	size_t kl = enctype == 17 || enctype == 19 ? 16 : 32;
	struct ends e = {gss_krb5_new(enctype, key, kl, 1000, false, subkey),
			 gss_krb5_new(enctype, key, kl, 5000, true, subkey)};
	assert_non_null(e.init);
	assert_non_null(e.acc);
	assert_int_equal(gss_krb5_enctype(e.acc), enctype);
	return e;
}

static void ends_free(struct ends *e)
{
	gss_krb5_free(e->init);
	gss_krb5_free(e->acc);
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131 + seed + (i >> 8));
}

/* from seals len bytes in place into a new buffer (*tok, its length the return): the data
 * filled from seed. */
static size_t seal(struct gss_krb5 *from, size_t len, unsigned seed, uint8_t **tok)
{
	size_t head, tail;
	assert_int_equal(gss_krb5_wrap_room(from, len, &head, &tail), 0);
	uint8_t *buf = malloc(head + len + tail);
	assert_non_null(buf);
	fill(buf + head, len, seed);
	assert_int_equal(gss_krb5_wrap(from, buf + head, len, head, tail), 0);
	*tok = buf;
	return head + len + tail;
}

static void check_opens(struct gss_krb5 *to, uint8_t *tok, size_t toklen, size_t len,
			unsigned seed, const uint8_t *want)
{
	uint8_t *data;
	size_t dlen;
	assert_int_equal(gss_krb5_unwrap(to, tok, toklen, &data, &dlen), 0);
	assert_int_equal(dlen, len);
	assert_ptr_equal(data, tok + 32);    /* in place, after the header and confounder */
	if (want) {
		assert_memory_equal(data, want, len);
		return;
	}
	uint8_t *exp = malloc(len + 1);
	fill(exp, len, seed);
	assert_memory_equal(data, exp, len);
	free(exp);
}

/* The peek of a few ranges of tok (the peer's, RRC 0) against the plaintext want; ranges
 * into the last two cipher blocks refused. */
static void check_peek(struct gss_krb5 *to, const uint8_t *tok, size_t toklen, const uint8_t *want,
		       size_t len)
{
	uint8_t out[600];
	size_t total = 16 + len + 16, bulk = total <= 32 ? 0 : ((total + 15) / 16 - 2) * 16;
	size_t room = bulk > 16 ? bulk - 16 : 0;     /* data bytes before the last two blocks */
	const size_t offs[] = {0, 1, 15, 16, 17, 100, 4000};
	const size_t ns[] = {0, 1, 4, 16, 33, 300, 600};
	for (size_t i = 0; i < 7; i++)
		for (size_t j = 0; j < 7; j++) {
			int rc = gss_krb5_peek(to, tok, toklen, offs[i], out, ns[j]);
			if (ns[j] == 0 ? offs[i] <= len : offs[i] + ns[j] <= room) {
				assert_int_equal(rc, 0);
				assert_memory_equal(out, want + offs[i], ns[j]);
				/* from the token's first bytes only (ASan: nothing read beyond) */
				size_t have = 16 + GSS_KRB5_PEEK_END(offs[i] + ns[j]);
				uint8_t *part = malloc(have);
				memcpy(part, tok, have);
				memset(out, 0, sizeof out);
				assert_int_equal(gss_krb5_peek(to, part, toklen, offs[i], out, ns[j]),
						 0);
				assert_memory_equal(out, want + offs[i], ns[j]);
				free(part);
			} else {
				assert_int_equal(rc, -1);
			}
		}
}

/* The acceptor seals from pieces (four of odd lengths, the data split where it may be) and
 * the initiator opens. */
static void check_iov_out(struct ends *e, const uint8_t *plain, size_t len)
{
	size_t head, tail, cut[3] = {len / 3, len / 2 + 1 < len ? len / 2 + 1 : len, len - len / 5};
	if (cut[2] < cut[1])
		cut[2] = cut[1];
	assert_int_equal(gss_krb5_wrap_room(e->acc, len, &head, &tail), 0);
	struct iovec iov[4] = {
		{(void *)plain, cut[0]},
		{(void *)(plain + cut[0]), cut[1] - cut[0]},
		{(void *)(plain + cut[1]), cut[2] - cut[1]},
		{(void *)(plain + cut[2]), len - cut[2]},
	};
	uint8_t *tok = malloc(head + len + tail);
	assert_int_equal(gss_krb5_wrap_iov_out(e->acc, iov, 4, tok), 0);
	check_opens(e->init, tok, head + len + tail, len, 0, plain);
	free(tok);
}

static void check_mics(struct ends *e, const uint8_t *plain, size_t len)
{
	uint8_t mic[64];
	struct iovec iov[2] = {{(void *)plain, len / 2}, {(void *)(plain + len / 2), len - len / 2}};
	int ml = gss_krb5_get_mic_iov(e->acc, iov, 2, mic, sizeof mic);
	assert_int_equal(ml, (int)gss_krb5_mic_len(e->acc));
	assert_int_equal(gss_krb5_verify_mic(e->init, plain, len, mic, (size_t)ml), 0);
	assert_int_equal(gss_krb5_verify_mic(e->acc, plain, len, mic, (size_t)ml), -1);
	ml = gss_krb5_get_mic(e->init, plain, len, mic, sizeof mic);
	assert_int_equal(gss_krb5_verify_mic_iov(e->acc, iov, 2, mic, (size_t)ml), 0);
	assert_int_equal(gss_krb5_verify_mic_iov(e->init, iov, 2, mic, (size_t)ml), -1);
	assert_int_equal(gss_krb5_get_mic(e->acc, plain, len, mic, gss_krb5_mic_len(e->acc) - 1), -1);
}

static void test_round_trips(void **state)
{
	(void)state;
	static const size_t sizes[] = {0, 1, 15, 16, 17, 31, 32, 33, 4096, 47008 + 32, 1 << 20};
	for (size_t t = 0; t < 4; t++)
		for (int sub = 0; sub < 2; sub++) {
			struct ends e = ends_new(enctypes[t], sub);
			for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
				size_t len = sizes[i];
				uint8_t *tok, *plain = malloc(len + 1);
				fill(plain, len, (unsigned)i);
				size_t tl = seal(e.init, len, (unsigned)i, &tok);
				check_peek(e.acc, tok, tl, plain, len);
				check_opens(e.acc, tok, tl, len, (unsigned)i, NULL);
				free(tok);
				tl = seal(e.acc, len, (unsigned)i + 1, &tok);
				check_opens(e.init, tok, tl, len, (unsigned)i + 1, NULL);
				free(tok);
				check_iov_out(&e, plain, len);
				check_mics(&e, plain, len);
				free(plain);
			}
			ends_free(&e);
		}
}

/* Our tokens' headers: TOK_ID, flags, filler, EC and RRC 0, SND_SEQ counting from the
 * first, shared by wrap and MIC tokens. */
static void test_headers(void **state)
{
	(void)state;
	struct ends e = ends_new(18, true);
	uint8_t *tok, mic[64];
	seal(e.acc, 10, 0, &tok);
	const uint8_t want[16] = {5, 4, 0x07, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x13, 0x88};
	assert_memory_equal(tok, want, 16);
	free(tok);
	assert_int_equal(gss_krb5_get_mic(e.acc, "x", 1, mic, sizeof mic), 28);
	const uint8_t wmic[16] = {4, 4, 0x05, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0x13,
				  0x89};
	assert_memory_equal(mic, wmic, 16);
	seal(e.init, 10, 0, &tok);
	assert_int_equal(tok[2], 0x06);    /* the initiator's: Sealed | AcceptorSubkey */
	assert_int_equal(tok[15], 1000 & 0xFF);
	free(tok);
	ends_free(&e);
}

/* Every byte of a wrap token changed (each bit of the header, one bit elsewhere), and of a MIC
 * token and its message: refused. */
static void test_tampering(void **state)
{
	(void)state;
	for (size_t t = 0; t < 4; t++) {
		struct ends e = ends_new(enctypes[t], true);
		uint8_t *tok, *copy, *data;
		size_t tl = seal(e.init, 100, 3, &tok), dlen;
		copy = malloc(tl);
		for (size_t i = 0; i < tl; i++)
			for (int bit = 0; bit < (i < 16 ? 8 : 1); bit++) {
				memcpy(copy, tok, tl);
				copy[i] ^= (uint8_t)(1u << (bit + (int)(i % 7)) % 8);
				assert_int_equal(gss_krb5_unwrap(e.acc, copy, tl, &data, &dlen), -1);
			}
		memcpy(copy, tok, tl);
		assert_int_equal(gss_krb5_unwrap(e.acc, copy, tl, &data, &dlen), 0);
		assert_int_equal(gss_krb5_unwrap(e.acc, tok, tl - 1, &data, &dlen), -1);
		free(copy);
		free(tok);
		uint8_t msg[40], mic[64];
		fill(msg, sizeof msg, 9);
		int ml = gss_krb5_get_mic(e.init, msg, sizeof msg, mic, sizeof mic);
		size_t n = (size_t)ml;
		for (size_t i = 0; i < n; i++) {
			mic[i] ^= 0x10;
			assert_int_equal(gss_krb5_verify_mic(e.acc, msg, sizeof msg, mic, n), -1);
			mic[i] ^= 0x10;
		}
		for (size_t i = 0; i < sizeof msg; i++) {
			msg[i] ^= 1;
			assert_int_equal(gss_krb5_verify_mic(e.acc, msg, sizeof msg, mic, n), -1);
			msg[i] ^= 1;
		}
		assert_int_equal(gss_krb5_verify_mic(e.acc, msg, sizeof msg, mic, n), 0);
		ends_free(&e);
	}
}

/* Tokens that say they come from our side (SentByAcceptor at the acceptor: a reflection of
 * our own), integrity-only ones, and ones whose AcceptorSubkey flag is not ours: refused. */
static void test_refusals(void **state)
{
	(void)state;
	struct ends e = ends_new(20, false);
	uint8_t *tok, *data, mic[64];
	size_t tl = seal(e.acc, 64, 1, &tok), dlen;
	assert_int_equal(gss_krb5_unwrap(e.acc, tok, tl, &data, &dlen), -1);
	free(tok);
	tl = seal(e.init, 64, 1, &tok);
	tok[2] |= 0x01;
	assert_int_equal(gss_krb5_peek(e.acc, tok, tl, 0, mic, 4), -1);
	assert_int_equal(gss_krb5_unwrap(e.acc, tok, tl, &data, &dlen), -1);
	free(tok);
	tl = seal(e.init, 64, 1, &tok);
	tok[2] &= (uint8_t)~0x02;
	assert_int_equal(gss_krb5_unwrap(e.acc, tok, tl, &data, &dlen), -1);
	free(tok);
	tl = seal(e.init, 64, 1, &tok);
	tok[2] |= 0x04;
	assert_int_equal(gss_krb5_unwrap(e.acc, tok, tl, &data, &dlen), -1);
	free(tok);
	int ml = gss_krb5_get_mic(e.acc, "abc", 3, mic, sizeof mic);
	assert_int_equal(gss_krb5_verify_mic(e.acc, "abc", 3, mic, (size_t)ml), -1);
	/* the same key used as an acceptor's subkey by one end only */
	struct ends s = ends_new(20, true);
	tl = seal(s.init, 64, 1, &tok);
	assert_int_equal(gss_krb5_unwrap(e.acc, tok, tl, &data, &dlen), -1);
	free(tok);
	ends_free(&s);
	ends_free(&e);
	uint8_t key[32] = {0};
	assert_null(gss_krb5_new(23, key, 16, 0, true, false));     /* arcfour: MIT's */
	assert_null(gss_krb5_new(18, key, 16, 0, true, false));     /* a key of the wrong size */
	assert_null(gss_krb5_new(17, NULL, 16, 0, true, false));
}

/* Tokens rotated right by RRC (RFC 4121 4.2.5; Windows sends 28), any amount: opened. */
static void test_rrc(void **state)
{
	(void)state;
	static const size_t rrcs[] = {28, 1, 16, 64, 65, 200, 1000};
	for (size_t t = 0; t < 4; t++) {
		struct ends e = ends_new(enctypes[t], true);
		for (size_t i = 0; i < sizeof rrcs / sizeof rrcs[0]; i++) {
			uint8_t *tok, out[4];
			size_t tl = seal(e.init, 77, 5, &tok), n = tl - 16, r = rrcs[i] % n;
			uint8_t *rot = malloc(tl);
			memcpy(rot, tok, 16);
			memcpy(rot + 16, tok + 16 + n - r, r);      /* the last r bytes first */
			memcpy(rot + 16 + r, tok + 16, n - r);
			rot[6] = (uint8_t)(rrcs[i] >> 8);
			rot[7] = (uint8_t)rrcs[i];
			assert_int_equal(gss_krb5_peek(e.acc, rot, tl, 0, out, 4), -1);
			check_opens(e.acc, rot, tl, 77, 5, NULL);
			free(rot);
			free(tok);
		}
		ends_free(&e);
	}
}

/* Many tokens of the same plaintext from one end (past a refill of the confounders' pool):
 * each opens, and no two begin with the same cipher block (the confounder's). */
static void test_confounders(void **state)
{
	(void)state;
	enum { N = 100 };
	static uint8_t first[N][16];
	struct ends e = ends_new(17, false);
	for (int i = 0; i < N; i++) {
		uint8_t *tok;
		size_t tl = seal(e.acc, 20, 4, &tok);
		memcpy(first[i], tok + 16, 16);
		for (int j = 0; j < i; j++)
			assert_memory_not_equal(first[i], first[j], 16);
		check_opens(e.init, tok, tl, 20, 4, NULL);
		free(tok);
	}
	ends_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_derive_vectors),
		cmocka_unit_test(test_encrypt_rfc8009),
		cmocka_unit_test(test_decrypt_mit_sha1),
		cmocka_unit_test(test_checksum_vectors),
		cmocka_unit_test(test_cts_rfc3962),
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_headers),
		cmocka_unit_test(test_tampering),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_rrc),
		cmocka_unit_test(test_confounders),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
