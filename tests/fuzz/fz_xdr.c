/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fz_xdr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint8_t *fz_copy(const uint8_t *p, size_t len)
{
	uint8_t *b = malloc(len ? len : 1);
	FZ_XCHECK(b);
	memcpy(b, p, len);
	return b;
}

static void release(const struct fz_codec *c, void *obj)
{
	if (c->release)
		c->release(obj);
	else
		xdr_free(c->codec, obj);
}

static bool decode(const struct fz_codec *c, const uint8_t *buf, size_t len, void *obj, u_int *used)
{
	XDR x;
	xdrmem_create(&x, (char *)buf, (u_int)len, XDR_DECODE);
	bool ok = c->codec(&x, obj);
	*used = xdr_getpos(&x);
	xdr_destroy(&x);
	return ok;
}

/* Encode obj into a buffer of at most max bytes (plus a guard word the encoder must not need);
 * its length in *n. */
static uint8_t *encode(const struct fz_codec *c, void *obj, size_t max, size_t *n)
{
	uint8_t *b = malloc(max + 4);
	FZ_XCHECK(b);
	XDR x;
	xdrmem_create(&x, (char *)b, (u_int)(max + 4), XDR_ENCODE);
	bool ok = c->codec(&x, obj);
	*n = xdr_getpos(&x);
	xdr_destroy(&x);
	if (!ok || *n > max)
		fprintf(stderr, "%s: re-encoding %s, %zu bytes for %zu decoded\n", c->name,
			ok ? "succeeded" : "failed", *n, max);
	FZ_XCHECK(ok && *n <= max);
	return b;
}

/* A decoded value encodes to no more bytes than it came from: the same number, except that a
 * string holding a NUL byte decodes to the C string before it (libtirpc's xdr_string), which
 * re-encodes shorter. That encoding decodes to all of its bytes, and encodes again to the same. */
static void roundtrip(const struct fz_codec *c, void *obj, size_t used)
{
	size_t n, n2;
	uint8_t *once = encode(c, obj, used, &n);
	void *again = calloc(1, c->size ? c->size : 1);
	FZ_XCHECK(again);
	u_int used2;
	bool ok = decode(c, once, n, again, &used2);
	FZ_XCHECK(ok && used2 == n);
	uint8_t *twice = encode(c, again, n, &n2);
	FZ_XCHECK(n2 == n && memcmp(once, twice, n) == 0);
	release(c, again);
	free(again);
	free(twice);
	free(once);
}

bool fz_xdr_check(const struct fz_codec *c, const uint8_t *buf, size_t len,
		  void (*inspect)(const void *obj, bool ok, size_t used, const uint8_t *buf, size_t len))
{
	void *obj = calloc(1, c->size ? c->size : 1);
	FZ_XCHECK(obj);
	u_int used;
	bool ok = decode(c, buf, len, obj, &used);
	if (ok) {
		FZ_XCHECK(used <= len);
		roundtrip(c, obj, used);
	}
	if (inspect)
		inspect(obj, ok, used, buf, len);
	release(c, obj);
	free(obj);
	return ok;
}
