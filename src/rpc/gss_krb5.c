/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RFC 4121's Wrap and MIC tokens on OpenSSL 3 (rpc/gss_krb5.h): the keys derived once per
 * context (RFC 3961's DK through OpenSSL's KRB5KDF, RFC 8009's KDF through its KBKDF), each
 * message through OpenSSL contexts that keep those keys and are reset per call.
 *
 * RFC 3961 encryption is AES-CBC with ciphertext stealing (CS3: the last two blocks always
 * swapped) over a random 16-byte confounder and the plaintext, IV 0, followed by a truncated
 * HMAC: over the confounder and plaintext for RFC 3962, over IV 0 and the ciphertext for RFC
 * 8009. OpenSSL's CTS cipher takes a message in one call only, so a message is run as plain
 * CBC up to its last 17 to 32 bytes (the bulk), then those through the CTS cipher with the last
 * ciphertext block of the bulk as IV: that is CS3 of the whole, and lets the bulk be fed piece
 * by piece (a READ's data from the cache's pages) and in chunks that the HMAC reads while they
 * are still in the cache. */
#include "rpc/gss_krb5.h"

#include <gssapi/gssapi_krb5.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>

#define BLK 16          /* AES's block, and the confounder's bytes */
#define HDR 16          /* a token's header */
#define MAC_MAX 48      /* SHA-384's output */
/* The bulk is ciphered and checksummed a chunk at a time, so that the second pass over it finds
 * it in the CPU's cache rather than in memory (a 1 MiB READ is larger than L2). On a buffer
 * already in cache (bench/gsscost.c) 4 KiB to 64 KiB and no chunks at all are within noise. */
#define CHUNK 16384

/* Confounders are drawn from OpenSSL's DRBG this many bytes at a time: each RAND_bytes call
 * costs 4 to 5 us here whatever its length (a getpid() system call for its fork check, the
 * DRBG's update), as much as sealing 4 KiB; a pool of 32 makes it 0.15 us a token. */
#define POOL 512

/* RFC 4121 4.2.2's flags, and 2's key usages. */
#define F_SENT_BY_ACCEPTOR 0x01
#define F_SEALED 0x02
#define F_ACCEPTOR_SUBKEY 0x04
#define U_ACCEPTOR_SEAL 22
#define U_ACCEPTOR_SIGN 23
#define U_INITIATOR_SEAL 24
#define U_INITIATOR_SIGN 25
/* RFC 3961's derivation constants: Kc, Ke, Ki. */
#define K_C 0x99
#define K_E 0xAA
#define K_I 0x55

struct etype {
	int32_t num;
	size_t keylen;          /* the base key's and Ke's */
	size_t klen;            /* Ki's and Kc's: RFC 8009 sizes them by the hash */
	size_t h;               /* checksum bytes: the HMAC truncated */
	bool etm;               /* RFC 8009: encrypt then MAC; RFC 3962: MAC of the plaintext */
	const char *cbc, *cts, *digest;
};

static const struct etype etypes[] = {
	{17, 16, 16, 12, false, "AES-128-CBC", "AES-128-CBC-CTS", "SHA1"},
	{18, 32, 32, 12, false, "AES-256-CBC", "AES-256-CBC-CTS", "SHA1"},
	{19, 16, 16, 16, true, "AES-128-CBC", "AES-128-CBC-CTS", "SHA256"},
	{20, 32, 24, 24, true, "AES-256-CBC", "AES-256-CBC-CTS", "SHA384"},
};

static const uint8_t zero[BLK];

/* One direction's keys: what we send (encrypting) or what the peer sends (decrypting). */
struct dir {
	EVP_CIPHER_CTX *cbc, *cts;      /* Ke of the seal usage: the bulk, then the last blocks */
	EVP_MAC_CTX *ki, *kc;           /* Ki of the seal usage, Kc of the sign usage */
};

struct gss_krb5 {
	const struct etype *et;
	struct dir send, recv;
	uint64_t seq;                   /* our next SND_SEQ */
	uint8_t flags;                  /* ours: SentByAcceptor when we accept, AcceptorSubkey */
	size_t pool_used;               /* confounders taken from pool (POOL: none left) */
	uint8_t pool[POOL];
};

static size_t min_sz(size_t a, size_t b)
{
	return a < b ? a : b;
}

static const struct etype *etype_of(int32_t num, size_t keylen)
{
	for (size_t i = 0; i < sizeof etypes / sizeof etypes[0]; i++)
		if (etypes[i].num == num)
			return keylen == etypes[i].keylen ? &etypes[i] : NULL;
	return NULL;
}

/* ---- keys ---- */

/* RFC 3961's DK (KRB5KDF: n-fold of the constant, encrypted in turn) or RFC 8009's
 * KDF-HMAC-SHA2 (KBKDF in counter mode: the constant is its label, no context, the output's
 * bits appended as L), for the 5-byte constant usage | kind. */
static int derive(const struct etype *et, const uint8_t *key, uint32_t usage, uint8_t kind,
		  uint8_t *out, size_t outlen)
{
	uint8_t constant[5] = {(uint8_t)(usage >> 24), (uint8_t)(usage >> 16), (uint8_t)(usage >> 8),
			       (uint8_t)usage, kind};
	OSSL_PARAM p[6], *q = p;
	if (et->etm) {
		*q++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_MODE, "counter", 0);
		*q++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_MAC, "HMAC", 0);
		*q++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)et->digest, 0);
		*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, constant, 5);
	} else {
		*q++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_CIPHER, (char *)et->cbc, 0);
		*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_CONSTANT, constant, 5);
	}
	*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)key, et->keylen);
	*q = OSSL_PARAM_construct_end();
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, et->etm ? "KBKDF" : "KRB5KDF", NULL);
	EVP_KDF_CTX *ctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
	int rc = ctx && EVP_KDF_derive(ctx, out, outlen, p) == 1 ? 0 : -1;
	EVP_KDF_CTX_free(ctx);
	EVP_KDF_free(kdf);
	return rc;
}

static size_t kind_len(const struct etype *et, uint8_t kind)
{
	return kind == K_E ? et->keylen : et->klen;
}

/* A cipher context keyed once; each message resets only its IV. */
static EVP_CIPHER_CTX *cipher_new(const char *name, const uint8_t *key, int enc, bool cts)
{
	OSSL_PARAM p[2] = {
		OSSL_PARAM_construct_utf8_string(OSSL_CIPHER_PARAM_CTS_MODE, "CS3", 0),
		OSSL_PARAM_construct_end(),
	};
	EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, name, NULL);
	EVP_CIPHER_CTX *x = c ? EVP_CIPHER_CTX_new() : NULL;
	if (x && (EVP_CipherInit_ex2(x, c, key, zero, enc, cts ? p : NULL) != 1 ||
		  (!cts && EVP_CIPHER_CTX_set_padding(x, 0) != 1))) {
		EVP_CIPHER_CTX_free(x);
		x = NULL;
	}
	EVP_CIPHER_free(c);
	return x;
}

/* An HMAC context keyed once; EVP_MAC_init without a key restarts it. */
static EVP_MAC_CTX *hmac_new(const char *digest, const uint8_t *key, size_t len)
{
	OSSL_PARAM p[2] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)digest, 0),
		OSSL_PARAM_construct_end(),
	};
	EVP_MAC *m = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *x = m ? EVP_MAC_CTX_new(m) : NULL;
	if (x && EVP_MAC_init(x, key, len, p) != 1) {
		EVP_MAC_CTX_free(x);
		x = NULL;
	}
	EVP_MAC_free(m);
	return x;
}

static void dir_free(struct dir *d)
{
	EVP_CIPHER_CTX_free(d->cbc);
	EVP_CIPHER_CTX_free(d->cts);
	EVP_MAC_CTX_free(d->ki);
	EVP_MAC_CTX_free(d->kc);
	memset(d, 0, sizeof *d);
}

/* Ke and Ki of usage seal, Kc of usage sign, from the context's key. */
static int dir_init(struct dir *d, const struct etype *et, const uint8_t *key, uint32_t seal,
		    uint32_t sign, int enc)
{
	uint8_t ke[32], ki[32], kc[32];
	int rc = -1;
	memset(d, 0, sizeof *d);
	if (derive(et, key, seal, K_E, ke, et->keylen) == 0 &&
	    derive(et, key, seal, K_I, ki, et->klen) == 0 &&
	    derive(et, key, sign, K_C, kc, et->klen) == 0) {
		d->cbc = cipher_new(et->cbc, ke, enc, false);
		d->cts = cipher_new(et->cts, ke, enc, true);
		d->ki = hmac_new(et->digest, ki, et->klen);
		d->kc = hmac_new(et->digest, kc, et->klen);
		rc = d->cbc && d->cts && d->ki && d->kc ? 0 : -1;
	}
	OPENSSL_cleanse(ke, sizeof ke);
	OPENSSL_cleanse(ki, sizeof ki);
	OPENSSL_cleanse(kc, sizeof kc);
	if (rc < 0)
		dir_free(d);
	return rc;
}

/* ---- RFC 3961 encryption: the bulk as CBC, the rest through CTS ---- */

/* Where the bulk ends in a message of total bytes: the last 17 to 32 bytes go to the CTS
 * cipher (all of a message of 16 to 32). */
static size_t bulk_of(size_t total)
{
	return total <= 2 * BLK ? 0 : ((total + BLK - 1) / BLK - 2) * BLK;
}

static bool mac(EVP_MAC_CTX *x, const void *p, size_t n)
{
	return x == NULL || n == 0 || EVP_MAC_update(x, p, n) == 1;
}

/* A message being encrypted into out from pieces: pre is the HMAC fed the plaintext (RFC
 * 3962), post the one fed the ciphertext (RFC 8009); neither for the bare CTS. */
struct seal {
	struct dir *d;
	EVP_MAC_CTX *pre, *post;
	size_t h;
	uint8_t *out;
	size_t total, bulk, in, done;   /* bytes of the message, of its bulk, taken, written */
	bool ok;
	uint8_t last[2 * BLK];
};

static void seal_begin(struct seal *s, struct dir *d, const struct etype *et, uint8_t *out,
		       size_t total)
{
	*s = (struct seal){.d = d, .out = out, .total = total, .bulk = bulk_of(total), .ok = true};
	if (et && d->ki) {
		s->h = et->h;
		*(et->etm ? &s->post : &s->pre) = d->ki;
		s->ok = EVP_MAC_init(d->ki, NULL, 0, NULL) == 1 && mac(s->post, zero, BLK);
	}
	s->ok = s->ok && EVP_CipherInit_ex2(d->cbc, NULL, NULL, zero, 1, NULL) == 1;
}

/* n more bytes of the message. Where out is the input itself (in place), the input comes in
 * one piece from out's start, so that each chunk is read before it is overwritten. */
static void seal_update(struct seal *s, const uint8_t *p, size_t n)
{
	while (n > 0 && s->ok) {
		size_t c;
		if (s->in < s->bulk) {
			uint8_t *o = s->out + s->done;
			int outl = 0;
			c = min_sz(n, min_sz(s->bulk - s->in, CHUNK));
			s->ok = mac(s->pre, p, c) &&
				EVP_EncryptUpdate(s->d->cbc, o, &outl, p, (int)c) == 1 &&
				mac(s->post, o, (size_t)outl);
			s->done += (size_t)outl;
		} else {
			c = min_sz(n, s->total - s->in);
			s->ok = c > 0 && mac(s->pre, p, c);
			if (s->ok)
				memcpy(s->last + (s->in - s->bulk), p, c);
		}
		s->in += c;
		p += c;
		n -= c;
	}
}

/* The last blocks, and the checksum after the ciphertext. */
static int seal_final(struct seal *s)
{
	size_t m = s->total - s->bulk, got = 0;
	uint8_t sum[MAC_MAX];
	int outl = 0;
	if (!s->ok || s->in != s->total || s->done != s->bulk || m < BLK)
		return -1;
	const uint8_t *iv = s->bulk ? s->out + s->bulk - BLK : zero;
	if (EVP_CipherInit_ex2(s->d->cts, NULL, NULL, iv, 1, NULL) != 1 ||
	    EVP_EncryptUpdate(s->d->cts, s->out + s->bulk, &outl, s->last, (int)m) != 1 ||
	    (size_t)outl != m || !mac(s->post, s->out + s->bulk, m))
		return -1;
	EVP_MAC_CTX *x = s->pre ? s->pre : s->post;
	if (x && (EVP_MAC_final(x, sum, &got, sizeof sum) != 1 || got < s->h))
		return -1;
	if (x)
		memcpy(s->out + s->total, sum, s->h);
	return 0;
}

/* Decrypt the total bytes at buf in place and check them against the checksum sum (RFC 8009:
 * of the ciphertext, RFC 3962: of the plaintext; et NULL: neither, the bare CTS). The last
 * blocks are deciphered first, while the ciphertext block before them (their IV) is intact. */
static int open_ct(const struct etype *et, struct dir *d, uint8_t *buf, size_t total,
		   const uint8_t *sum)
{
	size_t bulk = bulk_of(total), m = total - bulk, got = 0;
	EVP_MAC_CTX *pre = et && !et->etm ? d->ki : NULL, *post = et && et->etm ? d->ki : NULL;
	uint8_t last[2 * BLK], want[MAC_MAX];
	const uint8_t *iv = bulk ? buf + bulk - BLK : zero;
	int outl = 0;
	bool ok = total >= BLK && EVP_CipherInit_ex2(d->cts, NULL, NULL, iv, 0, NULL) == 1 &&
		  EVP_DecryptUpdate(d->cts, last, &outl, buf + bulk, (int)m) == 1 &&
		  (size_t)outl == m &&
		  EVP_CipherInit_ex2(d->cbc, NULL, NULL, zero, 0, NULL) == 1 &&
		  (!et || EVP_MAC_init(d->ki, NULL, 0, NULL) == 1) && mac(post, zero, BLK);
	for (size_t at = 0, c; ok && at < bulk; at += c) {
		c = min_sz(CHUNK, bulk - at);
		ok = mac(post, buf + at, c) &&
		     EVP_DecryptUpdate(d->cbc, buf + at, &outl, buf + at, (int)c) == 1 &&
		     (size_t)outl == c && mac(pre, buf + at, c);
	}
	ok = ok && mac(post, buf + bulk, m) && mac(pre, last, m);
	if (ok)
		memcpy(buf + bulk, last, m);
	if (!ok || !et)
		return ok ? 0 : -1;
	return EVP_MAC_final(d->ki, want, &got, sizeof want) == 1 && got >= et->h &&
	       CRYPTO_memcmp(want, sum, et->h) == 0 ? 0 : -1;
}

/* ---- contexts ---- */

struct gss_krb5 *gss_krb5_new(int32_t enctype, const uint8_t *key, size_t keylen,
			      uint64_t send_seq, bool acceptor, bool acceptor_subkey)
{
	const struct etype *et = etype_of(enctype, keylen);
	struct gss_krb5 *k = et && key ? calloc(1, sizeof *k) : NULL;
	if (!k)
		return NULL;
	k->et = et;
	k->seq = send_seq;
	k->pool_used = POOL;
	k->flags = (uint8_t)((acceptor ? F_SENT_BY_ACCEPTOR : 0) |
			     (acceptor_subkey ? F_ACCEPTOR_SUBKEY : 0));
	/* The acceptor seals with 22 and signs with 23, the initiator with 24 and 25. */
	uint32_t seal = acceptor ? U_ACCEPTOR_SEAL : U_INITIATOR_SEAL;
	uint32_t sign = acceptor ? U_ACCEPTOR_SIGN : U_INITIATOR_SIGN;
	uint32_t peer_seal = acceptor ? U_INITIATOR_SEAL : U_ACCEPTOR_SEAL;
	uint32_t peer_sign = acceptor ? U_INITIATOR_SIGN : U_ACCEPTOR_SIGN;
	if (dir_init(&k->send, et, key, seal, sign, 1) < 0 ||
	    dir_init(&k->recv, et, key, peer_seal, peer_sign, 0) < 0) {
		gss_krb5_free(k);
		return NULL;
	}
	return k;
}

struct gss_krb5 *gss_krb5_from_lucid(const struct gss_krb5_lucid_context_v1 *l)
{
	if (!l || l->version != 1 || l->protocol != 1)
		return NULL;
	bool sub = l->cfx_kd.have_acceptor_subkey != 0;
	const gss_krb5_lucid_key_t *key = sub ? &l->cfx_kd.acceptor_subkey : &l->cfx_kd.ctx_key;
	return gss_krb5_new((int32_t)key->type, key->data, key->length, l->send_seq, !l->initiate,
			    sub);
}

void gss_krb5_free(struct gss_krb5 *k)
{
	if (!k)
		return;
	dir_free(&k->send);
	dir_free(&k->recv);
	OPENSSL_clear_free(k, sizeof *k);
}

int32_t gss_krb5_enctype(const struct gss_krb5 *k)
{
	return k->et->num;
}

/* ---- tokens ---- */

static size_t get16(const uint8_t *p)
{
	return (size_t)p[0] << 8 | p[1];
}

/* Our token's header: a Wrap token's (EC and RRC 0) or a MIC token's; takes a SND_SEQ. */
static void header(struct gss_krb5 *k, uint8_t *h, bool wrap)
{
	h[0] = wrap ? 0x05 : 0x04;
	h[1] = 0x04;
	h[2] = (uint8_t)(k->flags | (wrap ? F_SEALED : 0));
	memset(h + 3, 0xFF, 5);
	if (wrap)
		memset(h + 4, 0, 4);
	uint64_t seq = k->seq++;
	for (int i = 0; i < 8; i++)
		h[8 + i] = (uint8_t)(seq >> (56 - 8 * i));
}

/* The peer's flags: SentByAcceptor unless we are the acceptor, AcceptorSubkey as ours; the
 * other bits are ignored (RFC 4121 4.2.2). */
static bool peer_flags(const struct gss_krb5 *k, uint8_t f)
{
	return (f & (F_SENT_BY_ACCEPTOR | F_ACCEPTOR_SUBKEY)) == (k->flags ^ F_SENT_BY_ACCEPTOR);
}

size_t gss_krb5_mic_len(const struct gss_krb5 *k)
{
	return HDR + k->et->h;
}

/* The truncated HMAC with x of the pieces and then the token's header, into sum. */
static int mic_sum(EVP_MAC_CTX *x, size_t h, const struct iovec *iov, int n, const uint8_t *hdr,
		   uint8_t *sum)
{
	uint8_t full[MAC_MAX];
	size_t got = 0;
	bool ok = EVP_MAC_init(x, NULL, 0, NULL) == 1;
	for (int i = 0; ok && i < n; i++)
		ok = mac(x, iov[i].iov_base, iov[i].iov_len);
	ok = ok && mac(x, hdr, HDR) && EVP_MAC_final(x, full, &got, sizeof full) == 1 && got >= h;
	if (ok)
		memcpy(sum, full, h);
	return ok ? 0 : -1;
}

int gss_krb5_get_mic_iov(struct gss_krb5 *k, const struct iovec *iov, int n, uint8_t *out,
			 size_t cap)
{
	if (cap < gss_krb5_mic_len(k))
		return -1;
	header(k, out, false);
	if (mic_sum(k->send.kc, k->et->h, iov, n, out, out + HDR) < 0)
		return -1;
	return (int)gss_krb5_mic_len(k);
}

int gss_krb5_get_mic(struct gss_krb5 *k, const void *msg, size_t len, uint8_t *out, size_t cap)
{
	struct iovec v = {(void *)msg, len};
	return gss_krb5_get_mic_iov(k, &v, 1, out, cap);
}

int gss_krb5_verify_mic_iov(struct gss_krb5 *k, const struct iovec *iov, int n, const void *tok,
			    size_t toklen)
{
	const uint8_t *t = tok, ff[5] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
	uint8_t sum[MAC_MAX];
	if (toklen != gss_krb5_mic_len(k) || t[0] != 0x04 || t[1] != 0x04 || !peer_flags(k, t[2]) ||
	    memcmp(t + 3, ff, 5) != 0 || mic_sum(k->recv.kc, k->et->h, iov, n, t, sum) < 0)
		return -1;
	return CRYPTO_memcmp(sum, t + HDR, k->et->h) == 0 ? 0 : -1;
}

int gss_krb5_verify_mic(struct gss_krb5 *k, const void *msg, size_t len, const void *tok,
			size_t toklen)
{
	struct iovec v = {(void *)msg, len};
	return gss_krb5_verify_mic_iov(k, &v, 1, tok, toklen);
}

/* A random confounder from the pool, refilled when empty. */
static int confounder(struct gss_krb5 *k, uint8_t *out)
{
	if (k->pool_used == POOL) {
		if (RAND_bytes(k->pool, POOL) != 1)
			return -1;
		k->pool_used = 0;
	}
	memcpy(out, k->pool + k->pool_used, BLK);
	OPENSSL_cleanse(k->pool + k->pool_used, BLK);
	k->pool_used += BLK;
	return 0;
}

int gss_krb5_wrap_room(const struct gss_krb5 *k, size_t len, size_t *head, size_t *tail)
{
	(void)len;   /* AES pads nothing: EC 0 whatever the length */
	*head = HDR + BLK;
	*tail = HDR + k->et->h;
	return 0;
}

/* The message encrypted is the confounder, the data and a copy of the header (RRC 0 in it,
 * RFC 4121 4.2.4): the confounder sits just before the data, the copy just after it. */
int gss_krb5_wrap(struct gss_krb5 *k, uint8_t *data, size_t len, size_t head, size_t tail)
{
	if (head != HDR + BLK || tail != HDR + k->et->h || confounder(k, data - BLK) < 0)
		return -1;
	uint8_t *tok = data - head;
	header(k, tok, true);
	memcpy(data + len, tok, HDR);
	struct seal s;
	seal_begin(&s, &k->send, k->et, data - BLK, len + 2 * BLK);
	seal_update(&s, data - BLK, len + 2 * BLK);
	return seal_final(&s);
}

int gss_krb5_wrap_iov_out(struct gss_krb5 *k, const struct iovec *iov, int n, uint8_t *out)
{
	uint8_t conf[BLK];
	size_t len = 0;
	for (int i = 0; i < n; i++)
		len += iov[i].iov_len;
	if (confounder(k, conf) < 0)
		return -1;
	header(k, out, true);
	struct seal s;
	seal_begin(&s, &k->send, k->et, out + HDR, len + 2 * BLK);
	seal_update(&s, conf, BLK);
	for (int i = 0; i < n; i++)
		seal_update(&s, iov[i].iov_base, iov[i].iov_len);
	seal_update(&s, out, HDR);
	return seal_final(&s);
}

static void reverse(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n / 2; i++) {
		uint8_t t = p[i];
		p[i] = p[n - 1 - i];
		p[n - 1 - i] = t;
	}
}

/* Undo a right rotation by r of the n bytes at p, where they lie: a small r (Windows' 28)
 * by one move, any other by three reversals. */
static void unrotate(uint8_t *p, size_t n, size_t r)
{
	uint8_t t[64];
	r %= n;
	if (r == 0)
		return;
	if (r <= sizeof t) {
		memcpy(t, p, r);
		memmove(p, p + r, n - r);
		memcpy(p + n - r, t, r);
		return;
	}
	reverse(p, r);
	reverse(p + r, n - r);
	reverse(p, n);
}

/* A sealed Wrap token from the peer, big enough for its confounder, header copy and checksum
 * (and EC's filler): the length of its ciphertext (what follows the header, bar the checksum),
 * or 0. */
static size_t sealed_len(const struct gss_krb5 *k, const uint8_t *t, size_t len)
{
	if (len < HDR + 2 * BLK + k->et->h || t[0] != 0x05 || t[1] != 0x04 || t[3] != 0xFF ||
	    !(t[2] & F_SEALED) || !peer_flags(k, t[2]))
		return 0;
	size_t total = len - HDR - k->et->h;
	return total >= 2 * BLK + get16(t + 4) ? total : 0;
}

int gss_krb5_unwrap(struct gss_krb5 *k, uint8_t *token, size_t len, uint8_t **data, size_t *dlen)
{
	size_t total = sealed_len(k, token, len);
	if (total == 0)
		return -1;
	uint8_t *ct = token + HDR;
	unrotate(ct, len - HDR, get16(token + 6));
	if (open_ct(k->et, &k->recv, ct, total, ct + total) < 0)
		return -1;
	/* The encrypted copy of the header must be the header, but for RRC (0 in the copy). */
	const uint8_t *copy = ct + total - HDR;
	if (memcmp(copy, token, 6) != 0 || memcmp(copy + 8, token + 8, 8) != 0)
		return -1;
	*data = ct + BLK;
	*dlen = total - 2 * BLK - get16(token + 4);
	return 0;
}

size_t gss_krb5_peek_max(const struct gss_krb5 *k, const uint8_t *token, size_t len)
{
	size_t total = sealed_len(k, token, len);
	if (total == 0 || get16(token + 6) != 0)
		return 0;
	size_t data = total - 2 * BLK - get16(token + 4), bulk = bulk_of(total);
	return bulk > BLK ? min_sz(bulk - BLK, data) : 0;
}

int gss_krb5_peek(struct gss_krb5 *k, const uint8_t *token, size_t len, size_t off, uint8_t *out,
		  size_t n)
{
	size_t total = sealed_len(k, token, len);
	if (total == 0 || get16(token + 6) != 0)
		return -1;
	size_t data = total - 2 * BLK - get16(token + 4);
	if (off > data || n > data - off)
		return -1;
	if (n == 0)
		return 0;
	if (BLK + off + n > bulk_of(total))
		return -1;
	/* Plaintext positions p0..p1 (the confounder first), whole blocks from b deciphered with
	 * the ciphertext block before b as IV (b >= 16: the confounder's block is never needed). */
	const uint8_t *ct = token + HDR;
	size_t p0 = BLK + off, p1 = p0 + n, b = p0 / BLK * BLK;
	uint8_t buf[256];
	if (EVP_CipherInit_ex2(k->recv.cbc, NULL, NULL, ct + b - BLK, 0, NULL) != 1)
		return -1;
	while (b < p1) {
		size_t c = min_sz(sizeof buf, (p1 - b + BLK - 1) / BLK * BLK);
		int outl = 0;
		if (EVP_DecryptUpdate(k->recv.cbc, buf, &outl, ct + b, (int)c) != 1 ||
		    (size_t)outl != c)
			return -1;
		size_t from = p0 > b ? p0 - b : 0, to = min_sz(c, p1 - b);
		memcpy(out + (b + from - p0), buf + from, to - from);
		b += c;
	}
	OPENSSL_cleanse(buf, sizeof buf);
	return 0;
}

/* ---- RFC 3961's primitives, bare ---- */

int gss_krb5_derive(int32_t enctype, const uint8_t *key, size_t keylen, uint32_t usage,
		    uint8_t kind, uint8_t *out, size_t cap)
{
	const struct etype *et = etype_of(enctype, keylen);
	if (!et || cap < kind_len(et, kind) || derive(et, key, usage, kind, out, kind_len(et, kind)))
		return -1;
	return (int)kind_len(et, kind);
}

int gss_krb5_encrypt(int32_t enctype, const uint8_t *key, size_t keylen, uint32_t usage,
		     const uint8_t confounder[16], const void *in, size_t len, uint8_t *out)
{
	const struct etype *et = etype_of(enctype, keylen);
	struct dir d;
	if (!et || dir_init(&d, et, key, usage, usage, 1) < 0)
		return -1;
	struct seal s;
	seal_begin(&s, &d, et, out, BLK + len);
	seal_update(&s, confounder, BLK);
	seal_update(&s, in, len);
	int rc = seal_final(&s);
	dir_free(&d);
	return rc;
}

int gss_krb5_decrypt(int32_t enctype, const uint8_t *key, size_t keylen, uint32_t usage,
		     const void *in, size_t len, uint8_t *out)
{
	const struct etype *et = etype_of(enctype, keylen);
	struct dir d;
	if (!et || len < BLK + et->h || dir_init(&d, et, key, usage, usage, 0) < 0)
		return -1;
	memcpy(out, in, len - et->h);
	int rc = open_ct(et, &d, out, len - et->h, (const uint8_t *)in + len - et->h);
	dir_free(&d);
	return rc;
}

int gss_krb5_checksum(int32_t enctype, const uint8_t *key, size_t keylen, uint32_t usage,
		      const void *msg, size_t len, uint8_t *out)
{
	const struct etype *et = etype_of(enctype, keylen);
	uint8_t kc[32], full[MAC_MAX];
	size_t got = 0;
	if (!et || derive(et, key, usage, K_C, kc, et->klen) < 0)
		return -1;
	EVP_MAC_CTX *x = hmac_new(et->digest, kc, et->klen);
	int rc = x && mac(x, msg, len) && EVP_MAC_final(x, full, &got, sizeof full) == 1 &&
		 got >= et->h ? (int)et->h : -1;
	if (rc > 0)
		memcpy(out, full, et->h);
	EVP_MAC_CTX_free(x);
	OPENSSL_cleanse(kc, sizeof kc);
	return rc;
}

int gss_krb5_cts(const uint8_t *key, size_t keylen, bool encrypt, const void *in, size_t len,
		 uint8_t *out)
{
	const char *cbc = keylen == 16 ? "AES-128-CBC" : keylen == 32 ? "AES-256-CBC" : NULL;
	const char *cts = keylen == 16 ? "AES-128-CBC-CTS" : "AES-256-CBC-CTS";
	if (!cbc || len < BLK)
		return -1;
	struct dir d = {cipher_new(cbc, key, encrypt, false), cipher_new(cts, key, encrypt, true),
			NULL, NULL};
	int rc = -1;
	if (d.cbc && d.cts && encrypt) {
		struct seal s;
		seal_begin(&s, &d, NULL, out, len);
		seal_update(&s, in, len);
		rc = seal_final(&s);
	} else if (d.cbc && d.cts) {
		memcpy(out, in, len);
		rc = open_ct(NULL, &d, out, len, NULL);
	}
	dir_free(&d);
	return rc;
}
