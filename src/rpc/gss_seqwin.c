/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RPCSEC_GSS's sequence window (RFC 2203 5.3.3.1), a bitmap of the last size numbers below the
 * highest accepted, as knfsd's gss_check_seq_num keeps one per context. */
#include "rpc/gss.h"

#include <string.h>

void gss_seqwin_init(struct gss_seqwin *w, uint32_t size)
{
	uint32_t s = 1;
	while (s * 2 <= size && s * 2 <= GSS_SEQWIN_MAX)
		s *= 2;
	memset(w, 0, sizeof *w);
	w->size = s;
}

static bool test_bit(const struct gss_seqwin *w, uint32_t seq)
{
	uint32_t i = seq & (w->size - 1);
	return w->seen[i / 64] >> (i % 64) & 1;
}

static void set_bit(struct gss_seqwin *w, uint32_t seq)
{
	uint32_t i = seq & (w->size - 1);
	w->seen[i / 64] |= 1ull << (i % 64);
}

static void clear_bit(struct gss_seqwin *w, uint32_t seq)
{
	uint32_t i = seq & (w->size - 1);
	w->seen[i / 64] &= ~(1ull << (i % 64));
}

/* The window moves up to seq: the numbers it leaves behind free their bits for the new ones. */
static void advance(struct gss_seqwin *w, uint32_t seq)
{
	if (seq - w->top >= w->size)
		memset(w->seen, 0, sizeof w->seen);
	else
		for (uint32_t s = w->top + 1; s != seq + 1; s++)
			clear_bit(w, s);
	w->top = seq;
}

enum gss_seq_verdict gss_seqwin_accept(struct gss_seqwin *w, uint32_t seq)
{
	if (seq >= GSS_MAXSEQ)
		return GSS_SEQ_CTXPROBLEM;
	if (!w->any) {
		w->any = true;
		w->top = seq;
		memset(w->seen, 0, sizeof w->seen);
	} else if (seq > w->top) {
		advance(w, seq);
	} else if (w->top - seq >= w->size) {
		return GSS_SEQ_OLD;
	} else if (test_bit(w, seq)) {
		return GSS_SEQ_REPLAY;
	}
	set_bit(w, seq);
	return GSS_SEQ_OK;
}
