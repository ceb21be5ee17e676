/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RPCSEC_GSS's credential, body shapes and sequence window (src/rpc/gss_*.c) on arbitrary bytes.
 * The first byte picks the window's size, the next two the credential's length; the credential
 * decoded must lie inside its body and re-encode to exactly its bytes; the same bytes split as an
 * integrity or a privacy body must split inside them; the rest of the input, read as
 * sequence numbers, must get from the window what the rule says (a naive model beside it). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/gss.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_gss: %s\n", #c); abort(); } } while (0)

static uint8_t *put(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
	return p + 4;
}

static void check_cred(const uint8_t *body, size_t len)
{
	struct gss_cred c;
	if (gss_cred_decode(body, (uint32_t)len, &c) != GSS_CRED_OK)
		return;
	CHECK(c.handle >= body + 20 && c.handle + c.handle_len <= body + len);
	CHECK(c.handle_len <= GSS_HANDLE_MAX);
	CHECK(c.proc <= GSS_PROC_DESTROY && c.service >= GSS_SVC_NONE &&
	      c.service <= GSS_SVC_PRIVACY);
	uint8_t again[20 + GSS_HANDLE_MAX + 3] = {0};
	uint8_t *p = put(put(put(put(put(again, RPCSEC_GSS_VERS_1), c.proc), c.seq), c.service),
			 c.handle_len);
	memcpy(p, c.handle, c.handle_len);
	size_t n = 20 + ((c.handle_len + 3u) & ~3u);
	CHECK(n == len);
	/* the padding's bytes are not the handle's: only the rest must match */
	CHECK(memcmp(again, body, 20 + c.handle_len) == 0);
}

/* The same bytes as a DATA call's integrity or privacy arguments: what the split finds lies
 * inside them, and is exactly their shape (length words, bytes, padding, nothing after). */
static void check_bodies(const uint8_t *args, size_t len)
{
	const uint8_t *body, *mic;
	uint32_t blen, mlen;
	if (gss_integ_split(args, len, &body, &blen, &mic, &mlen)) {
		CHECK(body == args + 4 && blen >= 4 && mlen <= GSS_MIC_MAX);
		CHECK(mic == body + ((blen + 3u) & ~3u) + 4);
		CHECK(mic + ((mlen + 3u) & ~3u) == args + len);
	}
	if (gss_priv_split(args, len, &body, &blen)) {
		CHECK(body == args + 4);
		CHECK(body + ((blen + 3u) & ~3u) == args + len);
	}
}

/* The window against the rule kept naively over the numbers this input can reach. */
static void check_window(uint32_t size, const uint8_t *p, size_t n)
{
	struct gss_seqwin w;
	gss_seqwin_init(&w, size);
	CHECK(w.size && w.size <= GSS_SEQWIN_MAX && (w.size & (w.size - 1)) == 0);
	static uint8_t seen[1 << 16];
	memset(seen, 0, sizeof seen);
	bool any = false;
	uint32_t top = 0;
	for (size_t i = 0; i + 2 <= n; i += 2) {
		uint32_t seq = (uint32_t)p[i] << 8 | p[i + 1];
		if (p[i] == 0xff)   /* now and then a number past MAXSEQ */
			seq = GSS_MAXSEQ + seq;
		enum gss_seq_verdict want = GSS_SEQ_OK;
		if (seq >= GSS_MAXSEQ)
			want = GSS_SEQ_CTXPROBLEM;
		else if (any && seq <= top && top - seq >= w.size)
			want = GSS_SEQ_OLD;
		else if (seen[seq])
			want = GSS_SEQ_REPLAY;
		CHECK(gss_seqwin_accept(&w, seq) == want);
		if (want == GSS_SEQ_OK) {
			seen[seq] = 1;
			if (!any || seq > top)
				top = seq;
			any = true;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3)
		return 0;
	uint32_t win = 1u << (data[0] % 12);
	size_t clen = (size_t)data[1] << 8 | data[2];
	data += 3, size -= 3;
	if (clen > size)
		clen = size;
	check_cred(data, clen);
	check_bodies(data, clen);
	check_window(win, data + clen, size - clen);
	return 0;
}
