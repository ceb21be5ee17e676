/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Names, symlink targets and MOUNT paths with a NUL byte inside (xdr_names.c): a filename3 or a
 * dirpath does not decode, an nfspath3 decodes as the empty path; without one, all three
 * decode as xdr_string would. Nothing leaks on either path (ASan). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "xdr/mount3_prot.h"
#include "xdr/nfs3_prot.h"
#include "xdr_harness.h"

/* An XDR string of n bytes (any bytes) at p; returns past it. */
static uint8_t *put_str(uint8_t *p, const char *s, size_t n)
{
	p = put_be32(p, (uint32_t)n);
	memcpy(p, s, n);
	memset(p + n, 0, (4 - n % 4) % 4);
	return p + n + (4 - n % 4) % 4;
}

static uint8_t *put_fh(uint8_t *p)
{
	static const char fh[8] = "fhfhfhfh";
	return put_str(p, fh, sizeof fh);
}

static bool_t decode(xdrproc_t proc, const uint8_t *buf, const uint8_t *end, void *val, size_t size)
{
	memset(val, 0, size);
	bool_t ok = xdr_decode_exact(proc, buf, (size_t)(end - buf), val);
	xdr_free(proc, val);
	return ok;
}

static void test_filename_with_nul(void **state)
{
	(void)state;
	uint8_t buf[256], *p;
	LOOKUP3args l;
	RENAME3args r;

	p = put_str(put_fh(buf), "a\0b", 3);
	assert_false(decode((xdrproc_t)xdr_LOOKUP3args, buf, p, &l, sizeof l));
	p = put_str(put_fh(buf), "\0", 1);
	assert_false(decode((xdrproc_t)xdr_LOOKUP3args, buf, p, &l, sizeof l));
	p = put_str(put_fh(buf), "ab", 2);
	memset(&l, 0, sizeof l);
	assert_true(xdr_decode_exact((xdrproc_t)xdr_LOOKUP3args, buf, (size_t)(p - buf), &l));
	assert_string_equal(l.what.name, "ab");
	xdr_free((xdrproc_t)xdr_LOOKUP3args, &l);
	/* the second name of two: the first, decoded already, is freed with the rest */
	p = put_str(put_fh(put_str(put_fh(buf), "from", 4)), "b\0x", 3);
	assert_false(decode((xdrproc_t)xdr_RENAME3args, buf, p, &r, sizeof r));
}

static void test_symlink_target_with_nul(void **state)
{
	(void)state;
	uint8_t buf[256], *p;
	SYMLINK3args s;
	static const char target[] = "/etc/passwd\0junk";

	p = put_str(put_fh(buf), "link", 4);
	for (int i = 0; i < 6; i++)
		p = put_be32(p, 0);   /* sattr3: nothing set */
	uint8_t *t = p;
	p = put_str(t, target, sizeof target - 1);
	memset(&s, 0, sizeof s);
	assert_true(xdr_decode_exact((xdrproc_t)xdr_SYMLINK3args, buf, (size_t)(p - buf), &s));
	assert_string_equal(s.symlink.symlink_data, "");
	xdr_free((xdrproc_t)xdr_SYMLINK3args, &s);
	p = put_str(t, target, strlen(target));
	memset(&s, 0, sizeof s);
	assert_true(xdr_decode_exact((xdrproc_t)xdr_SYMLINK3args, buf, (size_t)(p - buf), &s));
	assert_string_equal(s.symlink.symlink_data, "/etc/passwd");
	xdr_free((xdrproc_t)xdr_SYMLINK3args, &s);
}

static void test_dirpath_with_nul(void **state)
{
	(void)state;
	uint8_t buf[64], *p;
	dirpath d;
	static const char path[] = "/export\0junk";

	p = put_str(buf, path, sizeof path - 1);
	assert_false(decode((xdrproc_t)xdr_dirpath, buf, p, &d, sizeof d));
	p = put_str(buf, path, strlen(path));
	d = NULL;
	assert_true(xdr_decode_exact((xdrproc_t)xdr_dirpath, buf, (size_t)(p - buf), &d));
	assert_string_equal(d, "/export");
	xdr_free((xdrproc_t)xdr_dirpath, &d);
	/* the bound stays xdr_string's */
	char *longest = malloc(MNTPATHLEN + 2), *enc = malloc(MNTPATHLEN + 16);
	assert_non_null(longest);
	assert_non_null(enc);
	memset(longest, 'p', MNTPATHLEN + 1);
	p = put_str((uint8_t *)enc, longest, MNTPATHLEN + 1);
	assert_false(decode((xdrproc_t)xdr_dirpath, (uint8_t *)enc, p, &d, sizeof d));
	free(longest);
	free(enc);
}

/* Encoding is xdr_string's: a round trip gives the same string. */
static void test_encode(void **state)
{
	(void)state;
	LOOKUP3args l = {.what = {.dir = {.data = {8, "fhfhfhfh"}}, .name = "name"}}, back;
	size_t len;
	uint8_t *enc = xdr_encode_alloc((xdrproc_t)xdr_LOOKUP3args, &l, &len);
	memset(&back, 0, sizeof back);
	assert_true(xdr_decode_exact((xdrproc_t)xdr_LOOKUP3args, enc, len, &back));
	assert_string_equal(back.what.name, "name");
	xdr_free((xdrproc_t)xdr_LOOKUP3args, &back);
	free(enc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filename_with_nul),
		cmocka_unit_test(test_symlink_target_with_nul),
		cmocka_unit_test(test_dirpath_with_nul),
		cmocka_unit_test(test_encode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
