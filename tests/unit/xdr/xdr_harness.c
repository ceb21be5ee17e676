#include "xdr_harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Large enough for the largest filled value of any case (a few READDIRPLUS entries). */
#define ENCODE_MAX 65536

uint8_t *xdr_encode_alloc(xdrproc_t proc, void *val, size_t *len)
{
	char *tmp = malloc(ENCODE_MAX);
	XDR x;

	assert_non_null(tmp);
	xdrmem_create(&x, tmp, ENCODE_MAX, XDR_ENCODE);
	assert_true(proc(&x, val));
	*len = xdr_getpos(&x);
	xdr_destroy(&x);

	uint8_t *out = malloc(*len ? *len : 1);
	assert_non_null(out);
	memcpy(out, tmp, *len);
	free(tmp);
	return out;
}

bool_t xdr_decode_exact(xdrproc_t proc, const uint8_t *bytes, size_t len, void *val)
{
	char *buf = malloc(len ? len : 1);
	XDR x;

	assert_non_null(buf);
	memcpy(buf, bytes, len);
	xdrmem_create(&x, buf, (u_int)len, XDR_DECODE);
	bool_t ok = proc(&x, val);
	if (ok)
		assert_int_equal(xdr_getpos(&x), len);
	xdr_destroy(&x);
	free(buf);
	return ok;
}

struct case_state {
	const struct xdr_case *c;
	size_t scratch_size;
};

/* The filled value of a case and its encoding, for one test. */
struct filled {
	void *val, *scratch;
	uint8_t *enc;
	size_t len;
};

static void fill_case(const struct case_state *s, struct filled *f)
{
	f->val = calloc(1, s->c->size);
	f->scratch = calloc(1, s->scratch_size);
	assert_non_null(f->val);
	assert_non_null(f->scratch);
	s->c->fill(f->val, f->scratch);
	f->enc = xdr_encode_alloc(s->c->proc, f->val, &f->len);
}

static void release_filled(struct filled *f)
{
	free(f->enc);
	free(f->scratch);
	free(f->val);
}

/* Decode gives back every field; re-encoding the decoded value gives the same bytes. */
static void test_roundtrip(void **state)
{
	const struct case_state *s = *state;
	struct filled f;

	fill_case(s, &f);
	void *got = calloc(1, s->c->size);
	assert_non_null(got);
	assert_true(xdr_decode_exact(s->c->proc, f.enc, f.len, got));
	s->c->check(f.val, got);

	size_t len2;
	uint8_t *enc2 = xdr_encode_alloc(s->c->proc, got, &len2);
	assert_int_equal(len2, f.len);
	assert_memory_equal(enc2, f.enc, f.len);
	free(enc2);

	xdr_free(s->c->proc, got);
	free(got);
	release_filled(&f);
}

/* Every strict prefix of a valid encoding is refused, without reading past it (ASan) and
 * without leaking what the decoder allocated before it gave up (LeakSanitizer). */
static void test_truncated(void **state)
{
	const struct case_state *s = *state;
	struct filled f;

	fill_case(s, &f);
	void *got = malloc(s->c->size);
	assert_non_null(got);
	for (size_t n = 0; n < f.len; n++) {
		memset(got, 0, s->c->size);
		if (xdr_decode_exact(s->c->proc, f.enc, n, got))
			fail_msg("%s: a %zu-byte prefix of %zu decoded", s->c->name, n, f.len);
		xdr_free(s->c->proc, got);
	}
	free(got);
	release_filled(&f);
}

int xdr_run_cases(const char *group, const struct xdr_case *cases, size_t ncases,
		  size_t scratch_size)
{
	struct CMUnitTest *tests = calloc(2 * ncases, sizeof(*tests));
	struct case_state *states = calloc(ncases, sizeof(*states));
	char (*names)[96] = calloc(2 * ncases, sizeof(*names));

	if (!tests || !states || !names)
		return 1;
	for (size_t i = 0; i < ncases; i++) {
		states[i] = (struct case_state){ &cases[i], scratch_size };
		snprintf(names[2 * i], sizeof(names[0]), "roundtrip %s", cases[i].name);
		snprintf(names[2 * i + 1], sizeof(names[0]), "truncated %s", cases[i].name);
		tests[2 * i] = (struct CMUnitTest){ .name = names[2 * i],
			.test_func = test_roundtrip, .initial_state = &states[i] };
		tests[2 * i + 1] = (struct CMUnitTest){ .name = names[2 * i + 1],
			.test_func = test_truncated, .initial_state = &states[i] };
	}
	int failed = _cmocka_run_group_tests(group, tests, 2 * ncases, NULL, NULL);
	free(names);
	free(states);
	free(tests);
	return failed;
}

uint8_t *put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

uint8_t *put_be64(uint8_t *p, uint64_t v)
{
	return put_be32(put_be32(p, (uint32_t)(v >> 32)), (uint32_t)v);
}
