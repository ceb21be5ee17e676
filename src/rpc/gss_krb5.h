/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RFC 4121's per-message tokens (Wrap and MIC, krb5p and krb5i) made and checked here with
 * OpenSSL 3's primitives, from the keys of an established context that MIT's GSS-API hands
 * over (gss_krb5_export_lucid_sec_context), as knfsd does from what rpc.gssd gives it: MIT's
 * built-in crypto has no AES-NI, OpenSSL's has (bench/gsscost.c: sealing a READ takes a third
 * of MIT's CPU, opening a WRITE a sixth), and owning the token lets the server decrypt the
 * first bytes of a WRITE before it places the record (peek) and seal a READ's data from the
 * cache's pages straight into the send buffer (wrap_iov_out).
 *
 * Enctypes 17 and 18 (aes128/aes256-cts-hmac-sha1-96, RFC 3962) and 19 and 20
 * (aes128-cts-hmac-sha256-128, aes256-cts-hmac-sha384-192, RFC 8009); anything else is not
 * taken (the constructors return NULL) and the caller keeps MIT's context.
 *
 * One object per context, holding its derived keys in OpenSSL contexts that each call resets:
 * no call allocates (but OpenSSL 3.0's HMAC, which copies its digest state twice a message
 * into 96 new bytes) and none locks: the caller serialises the calls on one object (they share
 * those OpenSSL contexts, the send sequence number and a pool of random confounders, which is
 * why an object must not be used on both sides of a fork()). Tokens received are checked for
 * their integrity but not for their SND_SEQ: RPCSEC_GSS has a window of its own. */
#ifndef NFSD_UC_RPC_GSS_KRB5_H
#define NFSD_UC_RPC_GSS_KRB5_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct gss_krb5;
struct gss_krb5_lucid_context_v1;   /* <gssapi/gssapi_krb5.h>'s gss_krb5_lucid_context_v1_t */

/* From a version 1 lucid context of protocol 1 (CFX: RFC 4121; the older RFC 1964 tokens are
 * not taken): the acceptor's subkey when it asserted one, else the context key; our role
 * (initiate) and first SND_SEQ (send_seq) from it too. The lucid context stays the caller's
 * (gss_krb5_free_lucid_sec_context). NULL for an enctype not listed above or a failure. */
struct gss_krb5 *gss_krb5_from_lucid(const struct gss_krb5_lucid_context_v1 *lucid);

/* The same from its parts (the known-answer tests; a second end of a context in the unit
 * tests): the enctype, its key (16 or 32 bytes), the first SND_SEQ, whether we are the acceptor
 * and whether key is the acceptor's subkey (the tokens' AcceptorSubkey flag). */
struct gss_krb5 *gss_krb5_new(int32_t enctype, const uint8_t *key, size_t keylen,
			      uint64_t send_seq, bool acceptor, bool acceptor_subkey);
void gss_krb5_free(struct gss_krb5 *k);
int32_t gss_krb5_enctype(const struct gss_krb5 *k);

/* ---- MIC tokens (krb5i, and RPCSEC_GSS's verifiers) ---- */

/* The bytes of our MIC tokens (16-byte header and the checksum: 28, 32 or 40). */
size_t gss_krb5_mic_len(const struct gss_krb5 *k);
/* Our MIC of the n pieces of iov, as one message, into out: its length, or -1 (cap too small,
 * or OpenSSL failed). Takes a sequence number. */
int gss_krb5_get_mic_iov(struct gss_krb5 *k, const struct iovec *iov, int n, uint8_t *out,
			 size_t cap);
int gss_krb5_get_mic(struct gss_krb5 *k, const void *msg, size_t len, uint8_t *out, size_t cap);
/* 0 when tok is the peer's MIC of msg (of the n pieces of iov): its flags must say the peer
 * sent it (SentByAcceptor set when we are the initiator, clear when we are the acceptor) and
 * AcceptorSubkey as we use it; else -1. The checksum is compared in constant time. */
int gss_krb5_verify_mic(struct gss_krb5 *k, const void *msg, size_t len, const void *tok,
			size_t toklen);
int gss_krb5_verify_mic_iov(struct gss_krb5 *k, const struct iovec *iov, int n, const void *tok,
			    size_t toklen);

/* ---- Wrap tokens with confidentiality (krb5p) ---- */

/* The bytes of our wrap token before and after len bytes of data (EC and RRC 0, as MIT's
 * gss_wrap makes them): head is the 16-byte header and the confounder, tail the encrypted
 * copy of the header and the checksum; neither depends on len (AES does not pad). 0. */
int gss_krb5_wrap_room(const struct gss_krb5 *k, size_t len, size_t *head, size_t *tail);
/* Seal the len bytes at data where they lie, with exactly head and tail bytes of room around
 * them (wrap_room's): data - head .. data + len + tail is then the token, byte for byte what
 * MIT's gss_wrap would make with that confounder. 0, or -1 (room not wrap_room's, OpenSSL
 * failed). Takes a sequence number. */
int gss_krb5_wrap(struct gss_krb5 *k, uint8_t *data, size_t len, size_t head, size_t tail);
/* The same token from the n pieces of iov (their total length: len) into out, which has
 * room for head + len + tail bytes: the pieces are read once, the encryption being the copy
 * (a READ's data from the cache's pages into the send buffer). 0 or -1. */
int gss_krb5_wrap_iov_out(struct gss_krb5 *k, const struct iovec *iov, int n, uint8_t *out);

/* Open the peer's sealed wrap token of len bytes in place: TOK_ID 05 04, filler 0xFF, flags
 * (SentByAcceptor the peer's, Sealed set, AcceptorSubkey as we use it), a rotation (RRC: what
 * Windows sends) undone where the token lies, any EC filler skipped, the checksum and the
 * encrypted copy of the header checked. 0 with *data pointing at the plaintext inside token
 * and *dlen its length; -1 otherwise, token's bytes then undefined. Integrity-only wrap tokens
 * (Sealed clear) are refused: RPCSEC_GSS's privacy service always seals. */
int gss_krb5_unwrap(struct gss_krb5 *k, uint8_t *token, size_t len, uint8_t **data,
		    size_t *dlen);
/* Plaintext bytes [off, off + n) of the peer's sealed token (RRC 0) of len bytes into out,
 * decrypted WITHOUT checking the token's integrity (CBC: each block is the decryption of its
 * ciphertext xor the one before): a hint only, such as a WRITE's offset before its record is
 * placed; the whole token must still pass gss_krb5_unwrap. Only the token's first
 * 16 + GSS_KRB5_PEEK_END(off + n) bytes are read: the rest may not have arrived yet (len is
 * what the token will be). 0, or -1 when the header is not the peer's, the token is rotated,
 * or the range is not inside the data or reaches the last two cipher blocks (which ciphertext
 * stealing swaps). */
#define GSS_KRB5_PEEK_END(end) (((end) + 16 + 15) / 16 * 16)
/* How many plaintext bytes from the start gss_krb5_peek can give of that token (its header
 * read only): 0 when none (not the peer's, rotated, too short). A small call's arguments may
 * be fewer than a caller would like to look at. */
size_t gss_krb5_peek_max(const struct gss_krb5 *k, const uint8_t *token, size_t len);
int gss_krb5_peek(struct gss_krb5 *k, const uint8_t *token, size_t len, size_t off, uint8_t *out,
		  size_t n);

/* ---- RFC 3961's primitives, for the known-answer tests (RFC 3962, RFC 8009, MIT's) ---- */

/* The key of usage and kind (0x99 Kc, 0xAA Ke, 0x55 Ki) derived from key into out: its
 * length, or -1. */
int gss_krb5_derive(int32_t enctype, const uint8_t *key, size_t keylen, uint32_t usage,
		    uint8_t kind, uint8_t *out, size_t cap);
/* RFC 3961 encryption of len bytes with key usage and the given 16-byte confounder into out
 * (16 + len + the checksum's bytes): 0 or -1. decrypt is its inverse: out gets the confounder
 * and the plaintext (len minus the checksum's bytes), 0 or -1 when the checksum fails. */
int gss_krb5_encrypt(int32_t enctype, const uint8_t *key, size_t keylen, uint32_t usage,
		     const uint8_t confounder[16], const void *in, size_t len, uint8_t *out);
int gss_krb5_decrypt(int32_t enctype, const uint8_t *key, size_t keylen, uint32_t usage,
		     const void *in, size_t len, uint8_t *out);
/* The enctype's checksum (truncated HMAC with Kc of usage) of msg into out: its length or -1. */
int gss_krb5_checksum(int32_t enctype, const uint8_t *key, size_t keylen, uint32_t usage,
		      const void *msg, size_t len, uint8_t *out);
/* AES-CBC with ciphertext stealing (CS3, RFC 3962), IV 0, with key itself (16 or 32 bytes),
 * the way the tokens use it (the bulk as CBC, the last two blocks through OpenSSL's CTS):
 * len >= 16 bytes of in into out. 0 or -1. */
int gss_krb5_cts(const uint8_t *key, size_t keylen, bool encrypt, const void *in, size_t len,
		 uint8_t *out);

#endif
