/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NFSv3 wire layout checked against bytes written by hand after RFC 1813 (procedure numbers,
 * handles, fattr3, sattr3, READDIR's list), and the decoders' refusal of oversized lengths and
 * their bounds. One binary with test_xdr_nfs3.c, which lists the tests. */
#include "xdr_nfs3.h"

/* ---- wire layout, from bytes written by hand after RFC 1813 ---- */

/* Procedure numbers and sizes are the RFC's. */
void test_constants(void **state)
{
	(void)state;
	assert_int_equal(NFS_PROGRAM, 100003);
	assert_int_equal(NFS_V3, 3);
	assert_int_equal(NFSPROC3_NULL, 0);
	assert_int_equal(NFSPROC3_READ, 6);
	assert_int_equal(NFSPROC3_WRITE, 7);
	assert_int_equal(NFSPROC3_READDIRPLUS, 17);
	assert_int_equal(NFSPROC3_COMMIT, 21);
	assert_int_equal(NFS3_FHSIZE, 64);
	assert_int_equal(NFS3_COOKIEVERFSIZE, 8);
	assert_int_equal(NFS3_CREATEVERFSIZE, 8);
	assert_int_equal(NFS3_WRITEVERFSIZE, 8);
	assert_int_equal(NFS3ERR_JUKEBOX, 10008);
}

/* An opaque<> handle: length word, bytes, zero padding to 4. */
void test_wire_fh(void **state)
{
	(void)state;
	char bytes[3] = { (char)0xaa, (char)0xbb, (char)0xcc };
	GETATTR3args a = { .object = { .data = { 3, bytes } } };
	static const uint8_t want[] = { 0, 0, 0, 3, 0xaa, 0xbb, 0xcc, 0 };
	size_t len;
	uint8_t *enc = xdr_encode_alloc((xdrproc_t)xdr_GETATTR3args, &a, &len);

	assert_int_equal(len, sizeof(want));
	assert_memory_equal(enc, want, sizeof(want));
	free(enc);
}

/* fattr3: 32-bit fields stay 4 bytes on the wire and 64-bit ones 8 (84 bytes in all). */
void test_wire_fattr3(void **state)
{
	(void)state;
	uint8_t buf[4 + 84], *p = buf;
	p = put_be32(p, NFS3_OK);
	p = put_be32(p, NF3DIR);
	p = put_be32(p, 040755);
	p = put_be32(p, 3);                        /* nlink */
	p = put_be32(p, 0xfffffffe);               /* uid */
	p = put_be32(p, 7);                        /* gid */
	p = put_be64(p, 0x0102030405060708ULL);    /* size */
	p = put_be64(p, 0x1112131415161718ULL);    /* used */
	p = put_be32(p, 259);                      /* rdev */
	p = put_be32(p, 260);
	p = put_be64(p, 0xa1a2a3a4a5a6a7a8ULL);    /* fsid */
	p = put_be64(p, 0xb1b2b3b4b5b6b7b8ULL);    /* fileid */
	for (uint32_t t = 0; t < 3; t++) {         /* atime, mtime, ctime */
		p = put_be32(p, 1000 + t);
		p = put_be32(p, 2000 + t);
	}
	assert_int_equal(p - buf, sizeof(buf));

	GETATTR3res r = { 0 };
	assert_true(xdr_decode_exact((xdrproc_t)xdr_GETATTR3res, buf, sizeof(buf), &r));
	const fattr3 *f = &r.GETATTR3res_u.resok.obj_attributes;
	assert_int_equal(f->type, NF3DIR);
	assert_int_equal(f->mode, 040755);
	assert_int_equal(f->nlink, 3);
	assert_int_equal(f->uid, 0xfffffffe);
	assert_int_equal(f->gid, 7);
	assert_int_equal(f->size, 0x0102030405060708ULL);
	assert_int_equal(f->used, 0x1112131415161718ULL);
	assert_int_equal(f->rdev.specdata1, 259);
	assert_int_equal(f->rdev.specdata2, 260);
	assert_int_equal(f->fsid, 0xa1a2a3a4a5a6a7a8ULL);
	assert_int_equal(f->fileid, 0xb1b2b3b4b5b6b7b8ULL);
	assert_int_equal(f->atime.seconds, 1000);
	assert_int_equal(f->mtime.nseconds, 2001);
	assert_int_equal(f->ctime.seconds, 1002);
	xdr_free((xdrproc_t)xdr_GETATTR3res, &r);
}

/* SETATTR as a Linux client sends `chmod 600` plus a client mtime, guard on. */
void test_wire_sattr3(void **state)
{
	(void)state;
	uint8_t buf[128], *p = buf;
	p = put_be32(p, 4);
	p = put_be32(p, 0x01020304);               /* handle */
	p = put_be32(p, TRUE);
	p = put_be32(p, 0600);                     /* mode */
	p = put_be32(p, FALSE);                    /* uid */
	p = put_be32(p, FALSE);                    /* gid */
	p = put_be32(p, TRUE);
	p = put_be64(p, 1ULL << 33);               /* size */
	p = put_be32(p, DONT_CHANGE);              /* atime */
	p = put_be32(p, SET_TO_CLIENT_TIME);
	p = put_be32(p, 77);
	p = put_be32(p, 88);                       /* mtime */
	p = put_be32(p, TRUE);
	p = put_be32(p, 99);
	p = put_be32(p, 100);                      /* guard ctime */

	SETATTR3args a = { 0 };
	assert_true(xdr_decode_exact((xdrproc_t)xdr_SETATTR3args, buf, (size_t)(p - buf), &a));
	assert_int_equal(a.object.data.data_len, 4);
	assert_true(a.new_attributes.mode.set_it);
	assert_int_equal(a.new_attributes.mode.set_mode3_u.mode, 0600);
	assert_false(a.new_attributes.uid.set_it);
	assert_false(a.new_attributes.gid.set_it);
	assert_int_equal(a.new_attributes.size.set_size3_u.size, 1ULL << 33);
	assert_int_equal(a.new_attributes.atime.set_it, DONT_CHANGE);
	assert_int_equal(a.new_attributes.mtime.set_it, SET_TO_CLIENT_TIME);
	assert_int_equal(a.new_attributes.mtime.set_mtime_u.mtime.seconds, 77);
	assert_int_equal(a.new_attributes.mtime.set_mtime_u.mtime.nseconds, 88);
	assert_true(a.guard.check);
	assert_int_equal(a.guard.sattrguard3_u.obj_ctime.nseconds, 100);
	xdr_free((xdrproc_t)xdr_SETATTR3args, &a);
}

/* READDIR entries are a value_follows-chained list ended by FALSE, then eof. */
void test_wire_readdir_list(void **state)
{
	(void)state;
	uint8_t buf[128], *p = buf;
	p = put_be32(p, NFS3_OK);
	p = put_be32(p, FALSE);                    /* dir_attributes */
	p = put_be64(p, 0x0102030405060708ULL);    /* cookieverf */
	for (uint32_t i = 0; i < 2; i++) {
		p = put_be32(p, TRUE);             /* value follows */
		p = put_be64(p, 10 + i);           /* fileid */
		p = put_be32(p, 1);
		p = put_be32(p, (uint32_t)('x' + i) << 24);   /* name, padded */
		p = put_be64(p, 20 + i);           /* cookie */
	}
	p = put_be32(p, FALSE);                    /* no more entries */
	p = put_be32(p, TRUE);                     /* eof */

	READDIR3res r = { 0 };
	assert_true(xdr_decode_exact((xdrproc_t)xdr_READDIR3res, buf, (size_t)(p - buf), &r));
	const entry3 *e = r.READDIR3res_u.resok.reply.entries;
	assert_non_null(e);
	assert_string_equal(e->name, "x");
	assert_int_equal(e->fileid, 10);
	assert_non_null(e->nextentry);
	assert_string_equal(e->nextentry->name, "y");
	assert_int_equal(e->nextentry->cookie, 21);
	assert_null(e->nextentry->nextentry);
	assert_true(r.READDIR3res_u.resok.reply.eof);
	xdr_free((xdrproc_t)xdr_READDIR3res, &r);
}

/* ---- oversized lengths ---- */

/* Decodes a hand-built input that must be refused, and frees whatever the decoder took. */
static void assert_refused(xdrproc_t proc, const uint8_t *buf, size_t len, size_t size)
{
	void *val = calloc(1, size);
	assert_non_null(val);
	assert_false(xdr_decode_exact(proc, buf, len, val));
	xdr_free(proc, val);
	free(val);
}

void test_fh_65_refused(void **state)
{
	(void)state;
	uint8_t buf[4 + 68] = { 0 };
	put_be32(buf, NFS3_FHSIZE + 1);
	assert_refused((xdrproc_t)xdr_nfs_fh3, buf, sizeof(buf), sizeof(nfs_fh3));
	assert_refused((xdrproc_t)xdr_GETATTR3args, buf, sizeof(buf), sizeof(GETATTR3args));

	/* The encoder refuses it too: a server bug must not put it on the wire. */
	char big[NFS3_FHSIZE + 1] = { 0 };
	nfs_fh3 fh = { .data = { sizeof(big), big } };
	char out[256];
	XDR x;
	xdrmem_create(&x, out, sizeof(out), XDR_ENCODE);
	assert_false(xdr_nfs_fh3(&x, &fh));
	xdr_destroy(&x);

	/* 64 bytes is the largest handle and is accepted. */
	put_be32(buf, NFS3_FHSIZE);
	nfs_fh3 ok = { 0 };
	assert_true(xdr_decode_exact((xdrproc_t)xdr_nfs_fh3, buf, 4 + NFS3_FHSIZE, &ok));
	assert_int_equal(ok.data.data_len, NFS3_FHSIZE);
	xdr_free((xdrproc_t)xdr_nfs_fh3, &ok);
}

/* A 2 GiB length in front of a short input is refused. (test_length_bounds checks that the
 * bound, not the missing bytes, refuses it: libtirpc would first try to allocate 2 GiB.) */
void test_huge_lengths_refused(void **state)
{
	(void)state;
	uint8_t buf[64] = { 0 }, *p;

	p = put_be32(buf, 4);                 /* LOOKUP3args: handle, then the name's length */
	put_be32(p + 4, 0x7fffffff);
	assert_refused((xdrproc_t)xdr_LOOKUP3args, buf, sizeof(buf), sizeof(LOOKUP3args));

	p = put_be32(buf, 4);                 /* WRITE3args: handle, offset, count, stable, data */
	p = put_be64(p + 4, 0);
	p = put_be32(p, 0x7fffffff);
	p = put_be32(p, UNSTABLE);
	put_be32(p, 0x7fffffff);
	assert_refused((xdrproc_t)xdr_WRITE3args, buf, sizeof(buf), sizeof(WRITE3args));
	assert_refused((xdrproc_t)xdr_WRITE3args_zc, buf, sizeof(buf), sizeof(WRITE3args));

	p = put_be32(buf, NFS3_OK);           /* READ3res: no attributes, count, eof, data */
	p = put_be32(p, FALSE);
	p = put_be32(p, 0x7fffffff);
	p = put_be32(p, TRUE);
	put_be32(p, 0x7fffffff);
	assert_refused((xdrproc_t)xdr_READ3res, buf, sizeof(buf), sizeof(READ3res));
}

/* LOOKUP3args whose name is n bytes long, all of them present. */
static uint8_t *lookup_with_name(uint32_t n, size_t *len)
{
	*len = 4 + 4 + 4 + RNDUP((size_t)n);
	uint8_t *buf = calloc(1, *len);
	assert_non_null(buf);
	put_be32(buf, 4);
	put_be32(buf + 8, n);
	memset(buf + 12, 'n', n);
	return buf;
}

/* WRITE3args carrying n bytes of data, all of them present. */
static uint8_t *write_with_data(uint32_t n, size_t *len)
{
	*len = 4 + 8 + 4 + 4 + 4 + RNDUP((size_t)n);
	uint8_t *buf = calloc(1, *len);
	assert_non_null(buf);
	put_be32(buf + 4 + 8, n);               /* count (empty handle, offset 0) */
	put_be32(buf + 4 + 8 + 4 + 4, n);       /* data length */
	return buf;
}

/* The decoders' bounds: names and paths up to 4096 bytes, READ/WRITE data up to
 * NFS3_MAXDATA. One byte more is refused even with every byte present. */
void test_length_bounds(void **state)
{
	(void)state;
	size_t len;
	uint8_t *buf;
	LOOKUP3args l;

	buf = lookup_with_name(NFS3_MAXNAMLEN_XDR, &len);
	memset(&l, 0, sizeof(l));
	assert_true(xdr_decode_exact((xdrproc_t)xdr_LOOKUP3args, buf, len, &l));
	assert_int_equal(strlen(l.what.name), NFS3_MAXNAMLEN_XDR);
	xdr_free((xdrproc_t)xdr_LOOKUP3args, &l);
	free(buf);
	buf = lookup_with_name(NFS3_MAXNAMLEN_XDR + 1, &len);
	assert_refused((xdrproc_t)xdr_LOOKUP3args, buf, len, sizeof(LOOKUP3args));
	free(buf);

	char *path = malloc(NFS3_MAXPATHLEN + 2);
	assert_non_null(path);
	memset(path, 'p', NFS3_MAXPATHLEN + 1);
	path[NFS3_MAXPATHLEN + 1] = '\0';
	READLINK3res r = { .status = NFS3_OK };
	r.READLINK3res_u.resok.data = path + 1;      /* NFS3_MAXPATHLEN bytes: accepted */
	buf = xdr_encode_alloc((xdrproc_t)xdr_READLINK3res, &r, &len);
	put_be32(buf + 8, NFS3_MAXPATHLEN + 1);      /* claim one more byte: refused */
	uint8_t *longer = calloc(1, len + 4);
	assert_non_null(longer);
	memcpy(longer, buf, len);
	assert_refused((xdrproc_t)xdr_READLINK3res, longer, len + 4, sizeof(READLINK3res));
	free(longer);
	free(buf);
	char out[64];
	XDR x;
	r.READLINK3res_u.resok.data = path;          /* the encoder refuses it too */
	xdrmem_create(&x, out, sizeof(out), XDR_ENCODE);
	assert_false(xdr_READLINK3res(&x, &r));
	xdr_destroy(&x);
	free(path);

	buf = write_with_data(NFS3_MAXDATA + 1, &len);
	assert_refused((xdrproc_t)xdr_WRITE3args, buf, len, sizeof(WRITE3args));
	assert_refused((xdrproc_t)xdr_WRITE3args_zc, buf, len, sizeof(WRITE3args));
	free(buf);
	buf = write_with_data(NFS3_MAXDATA, &len);
	WRITE3args w;
	assert_true(xdr_decode_exact((xdrproc_t)xdr_WRITE3args_zc, buf, len, &w));
	assert_int_equal(w.data.data_len, NFS3_MAXDATA);
	write3args_zc_free(&w);
	free(buf);
}
