/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The zero-copy NFSv3 paths: the WRITE decoder that leaves the payload in the receive buffer
 * (every shift, truncation, bad length, a stream other than xdrmem, the peek at the header) and
 * the READ reply encoder whose payload is sent from where it lies. One binary with
 * test_xdr_nfs3.c, which lists the tests. */
#include "xdr_nfs3.h"

/* ---- zero-copy WRITE ---- */

/* A WRITE3args with an fh of fh_len bytes and a payload of data_len bytes (value i & 0xff). */
static uint8_t *encode_write(u_int fh_len, u_int data_len, uint64_t off, size_t *len)
{
	char fh[NFS3_FHSIZE];
	char *data = malloc(data_len ? data_len : 1);
	assert_non_null(data);
	for (u_int i = 0; i < fh_len; i++)
		fh[i] = (char)(0xf0 ^ i);
	for (u_int i = 0; i < data_len; i++)
		data[i] = (char)i;
	WRITE3args a = { .file = { .data = { fh_len, fh } }, .offset = off, .count = data_len,
			 .stable = DATA_SYNC, .data = { data_len, data } };
	uint8_t *enc = xdr_encode_alloc((xdrproc_t)xdr_WRITE3args, &a, len);
	free(data);
	return enc;
}

/* Decodes enc (len bytes) with the zc decoder from buf + shift, and checks every field and
 * that the payload is the bytes of buf at the offset write3args_peek reports. */
static void check_zc_decode(const uint8_t *enc, size_t len, size_t shift, u_int fh_len,
			    u_int data_len, uint64_t off)
{
	char *buf = malloc(len + shift);
	assert_non_null(buf);
	memcpy(buf + shift, enc, len);

	uint64_t peek_off;
	uint32_t peek_len;
	size_t payload_off;
	assert_true(write3args_peek((uint8_t *)buf + shift, len, &peek_off, &peek_len, &payload_off));

	WRITE3args a;
	XDR x;
	xdrmem_create(&x, buf + shift, (u_int)len, XDR_DECODE);
	assert_true(xdr_WRITE3args_zc(&x, &a));
	assert_int_equal(xdr_getpos(&x), len);
	xdr_destroy(&x);

	assert_int_equal(a.file.data.data_len, fh_len);
	assert_int_equal(a.offset, off);
	assert_int_equal(a.count, data_len);
	assert_int_equal(a.stable, DATA_SYNC);
	assert_int_equal(a.data.data_len, data_len);
	assert_ptr_equal(a.data.data_val, buf + shift + payload_off);
	assert_true(a.data.data_val + data_len <= buf + shift + len);
	for (u_int i = 0; i < data_len; i++)
		assert_int_equal((uint8_t)a.data.data_val[i], (uint8_t)i);

	/* The peek agrees with the full decoder. */
	assert_int_equal(peek_off, a.offset);
	assert_int_equal(peek_len, a.data.data_len);

	write3args_zc_free(&a);
	assert_null(a.file.data.data_val);
	assert_null(a.data.data_val);
	free(buf);
}

void test_write_zc(void **state)
{
	(void)state;
	static const u_int fh_lens[] = { 0, 1, 8, 28, 63, NFS3_FHSIZE };
	static const u_int data_lens[] = { 0, 1, 3, 4, 1001, 4096 };

	for (size_t i = 0; i < sizeof(fh_lens) / sizeof(fh_lens[0]); i++) {
		for (size_t j = 0; j < sizeof(data_lens) / sizeof(data_lens[0]); j++) {
			uint64_t off = 0x123456789000ULL + j;
			size_t len;
			uint8_t *enc = encode_write(fh_lens[i], data_lens[j], off, &len);
			check_zc_decode(enc, len, 0, fh_lens[i], data_lens[j], off);
			check_zc_decode(enc, len, 1, fh_lens[i], data_lens[j], off);  /* unaligned */
			free(enc);
		}
	}
}

/* The zc encoder writes what xdr_WRITE3args writes. */
void test_write_zc_encode(void **state)
{
	(void)state;
	size_t len;
	uint8_t *enc = encode_write(20, 999, 77, &len);
	WRITE3args a;
	XDR x;

	xdrmem_create(&x, (char *)enc, (u_int)len, XDR_DECODE);
	assert_true(xdr_WRITE3args_zc(&x, &a));
	xdr_destroy(&x);
	size_t len2;
	uint8_t *enc2 = xdr_encode_alloc((xdrproc_t)xdr_WRITE3args_zc, &a, &len2);
	assert_int_equal(len2, len);
	assert_memory_equal(enc2, enc, len);
	xdr_free((xdrproc_t)xdr_WRITE3args_zc, (char *)&a);
	assert_null(a.file.data.data_val);
	free(enc2);
	free(enc);
}

void test_write_zc_truncated(void **state)
{
	(void)state;
	size_t len;
	uint8_t *enc = encode_write(32, 1001, 5, &len);

	for (size_t n = 0; n < len; n++) {
		WRITE3args a;
		assert_false(xdr_decode_exact((xdrproc_t)xdr_WRITE3args_zc, enc, n, &a));
		/* Nothing is left to free after a failed decode. */
		assert_null(a.file.data.data_val);
		assert_null(a.data.data_val);
	}
	free(enc);
}

/* A data length beyond what the buffer holds, or beyond NFS3_MAXDATA, or other than the count,
 * is refused; so is a stable_how that is not one of the three. */
void test_write_zc_bad_length(void **state)
{
	(void)state;
	size_t len;
	uint8_t *enc = encode_write(8, 100, 5, &len);
	size_t len_pos = 4 + 8 + 8 + 4 + 4;
	WRITE3args a;

	size_t count_pos = len_pos - 8, stable_pos = len_pos - 4;

	put_be32(enc + len_pos, 101);   /* 101 rounds up to 104: 4 bytes more than there are */
	put_be32(enc + count_pos, 101);
	assert_false(xdr_decode_exact((xdrproc_t)xdr_WRITE3args_zc, enc, len, &a));
	put_be32(enc + len_pos, 97);    /* 97 rounds up to 100: fits, 3 bytes of it padding */
	assert_false(xdr_decode_exact((xdrproc_t)xdr_WRITE3args_zc, enc, len, &a));  /* count 101 */
	put_be32(enc + count_pos, 97);
	assert_true(xdr_decode_exact((xdrproc_t)xdr_WRITE3args_zc, enc, len, &a));
	assert_int_equal(a.data.data_len, 97);
	write3args_zc_free(&a);
	/* a count other than the data's length, either way, as knfsd refuses it */
	put_be32(enc + count_pos, 96);
	assert_false(xdr_decode_exact((xdrproc_t)xdr_WRITE3args_zc, enc, len, &a));
	put_be32(enc + count_pos, 97);
	/* a stable_how past FILE_SYNC */
	put_be32(enc + stable_pos, FILE_SYNC);
	assert_true(xdr_decode_exact((xdrproc_t)xdr_WRITE3args_zc, enc, len, &a));
	write3args_zc_free(&a);
	for (uint32_t bad = FILE_SYNC + 1; bad < 9; bad++) {
		put_be32(enc + stable_pos, bad);
		assert_false(xdr_decode_exact((xdrproc_t)xdr_WRITE3args_zc, enc, len, &a));
	}
	put_be32(enc + stable_pos, 0xffffffffu);
	assert_false(xdr_decode_exact((xdrproc_t)xdr_WRITE3args_zc, enc, len, &a));
	put_be32(enc + stable_pos, DATA_SYNC);

	put_be32(enc + len_pos, NFS3_MAXDATA + 1);
	put_be32(enc + count_pos, NFS3_MAXDATA + 1);
	uint8_t *big = calloc(1, len_pos + 4 + NFS3_MAXDATA + 4);
	assert_non_null(big);
	memcpy(big, enc, len_pos + 4);
	assert_false(xdr_decode_exact((xdrproc_t)xdr_WRITE3args_zc, big,
				      len_pos + 4 + NFS3_MAXDATA + 4, &a));
	free(big);
	free(enc);
}

/* Only an xdrmem stream tells where its buffer is: the zc decoder refuses any other, even on
 * valid bytes, rather than hand out a pointer into a buffer it does not know. */
void test_write_zc_needs_xdrmem(void **state)
{
	(void)state;
	size_t len;
	uint8_t *enc = encode_write(8, 16, 0, &len);
	FILE *f = fmemopen(enc, len, "r");
	XDR x;
	WRITE3args a;

	assert_non_null(f);
	xdrstdio_create(&x, f, XDR_DECODE);
	assert_false(xdr_WRITE3args_zc(&x, &a));
	assert_null(a.file.data.data_val);
	xdr_destroy(&x);
	fclose(f);
	free(enc);
}

/* write3args_peek needs the bytes up to the payload, and no more. */
void test_write_peek(void **state)
{
	(void)state;
	size_t len;
	uint8_t *enc = encode_write(28, 4096, 0xabcdef012345ULL, &len);
	uint64_t off;
	uint32_t dlen;
	size_t payload_off;

	assert_true(write3args_peek(enc, len, &off, &dlen, &payload_off));
	assert_int_equal(payload_off, 4 + 28 + 8 + 4 + 4 + 4);
	assert_int_equal(off, 0xabcdef012345ULL);
	assert_int_equal(dlen, 4096);
	assert_true(write3args_peek(enc, payload_off, &off, &dlen, &payload_off));
	for (size_t n = 0; n < payload_off; n++)
		assert_false(write3args_peek(enc, n, &off, &dlen, &payload_off));
	free(enc);

	/* A 65-byte handle, an oversized payload, a count other than its length or a stable_how
	 * outside the enum is malformed however much is there. */
	uint8_t bad[WRITE3ARGS_HDR_MAX + 8] = { 0 };
	put_be32(bad, NFS3_FHSIZE + 1);
	assert_false(write3args_peek(bad, sizeof(bad), &off, &dlen, &payload_off));
	put_be32(bad, NFS3_FHSIZE);
	put_be32(bad + 4 + NFS3_FHSIZE + 16, NFS3_MAXDATA + 1);
	assert_false(write3args_peek(bad, sizeof(bad), &off, &dlen, &payload_off));
	put_be32(bad + 4 + NFS3_FHSIZE + 16, NFS3_MAXDATA);
	assert_false(write3args_peek(bad, sizeof(bad), &off, &dlen, &payload_off));   /* count 0 */
	put_be32(bad + 4 + NFS3_FHSIZE + 8, NFS3_MAXDATA);                            /* count */
	put_be32(bad + 4 + NFS3_FHSIZE + 12, 3);                                      /* stable */
	assert_false(write3args_peek(bad, sizeof(bad), &off, &dlen, &payload_off));
	put_be32(bad + 4 + NFS3_FHSIZE + 12, FILE_SYNC);
	assert_true(write3args_peek(bad, WRITE3ARGS_HDR_MAX, &off, &dlen, &payload_off));
	assert_int_equal(payload_off, WRITE3ARGS_HDR_MAX);
}

/* ---- zero-copy READ reply ---- */

/* Encodes r with the zc encoder, appends the payload and its padding the way the server sends
 * them, and returns the whole reply. */
static uint8_t *encode_read_zc(READ3res *r, size_t *len)
{
	size_t hdr_len;
	uint8_t *hdr = xdr_encode_alloc((xdrproc_t)xdr_READ3res_zc, r, &hdr_len);
	if (r->status != NFS3_OK) {
		*len = hdr_len;
		return hdr;
	}
	const READ3resok *ok = &r->READ3res_u.resok;
	uint32_t pad = xdr_zc_pad(ok->data.data_len);
	*len = hdr_len + ok->data.data_len + pad;
	uint8_t *out = malloc(*len);
	assert_non_null(out);
	memcpy(out, hdr, hdr_len);
	memcpy(out + hdr_len, ok->data.data_val, ok->data.data_len);
	memcpy(out + hdr_len + ok->data.data_len, xdr_zc_zero_pad(), pad);
	free(hdr);
	return out;
}

void test_read_zc(void **state)
{
	(void)state;
	static const u_int lens[] = { 0, 1, 2, 3, 4, 5, 4095, 4096 };
	char *data = malloc(4096);
	assert_non_null(data);
	for (int i = 0; i < 4096; i++)
		data[i] = (char)(i * 7);

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		READ3res r = { .status = NFS3_OK };
		READ3resok *ok = &r.READ3res_u.resok;
		ok->file_attributes = mk_poa(50);
		ok->count = lens[i];
		ok->eof = (i % 2) ? TRUE : FALSE;
		ok->data.data_len = lens[i];
		ok->data.data_val = data;

		size_t len, want_len;
		uint8_t *got = encode_read_zc(&r, &len);
		uint8_t *want = xdr_encode_alloc((xdrproc_t)xdr_READ3res, &r, &want_len);
		assert_int_equal(len, want_len);
		assert_memory_equal(got, want, len);

		READ3res back = { 0 };
		assert_true(xdr_decode_exact((xdrproc_t)xdr_READ3res, got, len, &back));
		assert_int_equal(back.status, NFS3_OK);
		chk_poa(&ok->file_attributes, &back.READ3res_u.resok.file_attributes);
		assert_int_equal(back.READ3res_u.resok.count, lens[i]);
		assert_int_equal(back.READ3res_u.resok.eof, ok->eof);
		chk_opaque(lens[i], data, back.READ3res_u.resok.data.data_len,
			   back.READ3res_u.resok.data.data_val);
		xdr_free((xdrproc_t)xdr_READ3res, &back);
		free(want);
		free(got);
	}
	free(data);
}

void test_read_zc_failure(void **state)
{
	(void)state;
	READ3res r = { .status = NFS3ERR_ACCES };
	r.READ3res_u.resfail.file_attributes = mk_poa(51);
	size_t len, want_len;
	uint8_t *got = encode_read_zc(&r, &len);
	uint8_t *want = xdr_encode_alloc((xdrproc_t)xdr_READ3res, &r, &want_len);

	assert_int_equal(len, want_len);
	assert_memory_equal(got, want, len);
	free(want);
	free(got);
}

/* Encode only; and it refuses a payload the generated decoder would refuse. */
void test_read_zc_refuses(void **state)
{
	(void)state;
	READ3res r = { .status = NFS3_OK };
	char buf[256];
	XDR x;

	r.READ3res_u.resok.data.data_len = NFS3_MAXDATA + 1;
	xdrmem_create(&x, buf, sizeof(buf), XDR_ENCODE);
	assert_false(xdr_READ3res_zc(&x, &r));
	xdr_destroy(&x);

	memset(buf, 0, sizeof(buf));
	xdrmem_create(&x, buf, sizeof(buf), XDR_DECODE);
	assert_false(xdr_READ3res_zc(&x, &r));
	xdr_destroy(&x);

	assert_int_equal(xdr_zc_pad(0), 0);
	assert_int_equal(xdr_zc_pad(1), 3);
	assert_int_equal(xdr_zc_pad(6), 2);
	assert_int_equal(xdr_zc_pad(4099), 1);
}
