/* Table-driven checks shared by the XDR unit tests: every case is one C type with a filled
 * value; each check runs as its own CMocka test. */
#ifndef NFSD_UC_TEST_XDR_HARNESS_H
#define NFSD_UC_TEST_XDR_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include <rpc/rpc.h>

struct xdr_case {
	const char *name;
	xdrproc_t proc;                      /* generated codec of the type */
	size_t size;                         /* sizeof the C type */
	/* Fills val (zeroed) with distinct values; anything it points to lives in scratch (zeroed,
	 * of the test file's own scratch size) or in string literals. */
	void (*fill)(void *val, void *scratch);
	/* Asserts, field by field, that got (decoded) equals want (filled). */
	void (*check)(const void *want, const void *got);
};

/* Encodes val with proc; returns a malloc'd buffer of exactly *len bytes. Fails the test if the
 * encoder fails. */
uint8_t *xdr_encode_alloc(xdrproc_t proc, void *val, size_t *len);

/* Decodes exactly len bytes (copied to a buffer of that size, so that ASan sees any read past
 * it) into a zeroed val; returns the decoder's verdict. On TRUE also asserts that the decoder
 * consumed all len bytes. The caller xdr_free()s val whatever the verdict. */
bool_t xdr_decode_exact(xdrproc_t proc, const uint8_t *bytes, size_t len, void *val);

/* Builds the CMocka tests of every case (round trip, every truncation) and runs them. */
int xdr_run_cases(const char *group, const struct xdr_case *cases, size_t ncases,
		  size_t scratch_size);

/* Big-endian writers for hand-built inputs. */
uint8_t *put_be32(uint8_t *p, uint32_t v);
uint8_t *put_be64(uint8_t *p, uint64_t v);

#endif
