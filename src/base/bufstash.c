/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "base/bufstash.h"

#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define STASH_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define STASH_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define STASH_POISON(p, n) ((void)(p), (void)(n))
#define STASH_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* Size classes as jemalloc's: four to each doubling (2^g, 1.25, 1.5 and 1.75 x 2^g), from
 * BUFSTASH_MIN (2^12) to 2^28. A freed buffer joins the largest class its usable size reaches
 * (with jemalloc, whose usable sizes are these classes, exactly its own). */
#define MIN_SHIFT 12
#define MAX_SHIFT 28
#define NBINS ((MAX_SHIFT - MIN_SHIFT) * 4)
#define PAGE 4096u

/* A stashed buffer's first bytes: the next one of its class, newest first. */
struct held {
	struct held *next;
};

struct stash {
	struct held *bin[NBINS];
	size_t bin_bytes[NBINS];
	size_t n, bytes, cap;
};

static _Thread_local struct stash ts;

static unsigned log2_floor(size_t x)
{
	return (unsigned)(sizeof(unsigned long long) * 8 - 1) - (unsigned)__builtin_clzll(x);
}

/* -1: outside the classes. up: the class at or above x, else at or below. */
static int class_of(size_t x, bool up)
{
	if (x < BUFSTASH_MIN)
		return -1;
	unsigned g = log2_floor(x);
	size_t step = (size_t)1 << (g - 2), over = x - ((size_t)1 << g);
	size_t k = up ? (over + step - 1) / step : over / step;
	int c = (int)((g - MIN_SHIFT) * 4 + k);
	return c < NBINS ? c : -1;
}

/* The bytes a buffer is kept and handed out for: its usable size, and for a buffer of huge pages
 * its whole huge pages only (glibc's aligned buffers hold up to one more, in part: binned by all
 * of it, a 2 MiB buffer could land where a 2 MiB request never looks). */
static size_t held_size(const void *p)
{
	size_t usable = malloc_usable_size((void *)p);

	if (usable >= BUFSTASH_HUGE_PAGE && ((uintptr_t)p & (BUFSTASH_HUGE_PAGE - 1)) == 0)
		usable &= ~(size_t)(BUFSTASH_HUGE_PAGE - 1);
	return usable;
}

/* Class c's newest buffer, out of the stash; size: its usable size (or 0: looked up here). */
static void *pop(int c, size_t size)
{
	struct held *h = ts.bin[c];
	if (!size)
		size = held_size(h);
	STASH_UNPOISON(h, size);
	ts.bin[c] = h->next;
	ts.bin_bytes[c] -= size;
	ts.bytes -= size;
	ts.n--;
	return h;
}

/* The class holding the most bytes: the one to give back first when the bound is reached. */
static int fullest(void)
{
	int best = -1;
	for (int c = 0; c < NBINS; c++)
		if (ts.bin[c] && (best < 0 || ts.bin_bytes[c] > ts.bin_bytes[best]))
			best = c;
	return best;
}

void bufstash_keep(size_t bytes)
{
	ts.cap = bytes;
	for (int c; ts.bytes > ts.cap && (c = fullest()) >= 0;)
		free(pop(c, 0));
}

/* Class c's newest buffer when it holds size bytes and is aligned to align. */
static void *take(int c, size_t align, size_t size)
{
	const struct held *h = c >= 0 ? ts.bin[c] : NULL;
	if (!h || ((uintptr_t)h & (align - 1)) != 0)
		return NULL;
	size_t usable = held_size(h);
	return usable >= size ? pop(c, usable) : NULL;
}

/* Whole huge pages, advised as such (bufstash.h says why), from the stash when it holds some. */
static void *alloc_huge(size_t size)
{
	size_t whole = (size + BUFSTASH_HUGE_PAGE - 1) & ~(size_t)(BUFSTASH_HUGE_PAGE - 1);
	void *p = take(class_of(whole, false), BUFSTASH_HUGE_PAGE, size);

	if (p)
		return p;
	if (posix_memalign(&p, BUFSTASH_HUGE_PAGE, whole) != 0)
		return NULL;
#ifdef MADV_HUGEPAGE
	(void)madvise(p, whole, MADV_HUGEPAGE);   /* advice: a kernel without THP ignores it */
#endif
	return p;
}

void *bufstash_alloc(size_t align, size_t size)
{
	void *p = NULL;

	if (align < sizeof(void *))
		align = sizeof(void *);
	if (size >= BUFSTASH_HUGE_MIN && align <= BUFSTASH_HUGE_PAGE)
		return alloc_huge(size);
	/* The newest buffer of a class: the most likely to be in the CPU's caches still. The class
	 * the size falls in (a buffer there may be large enough), the one above (every buffer
	 * there is), and for page-aligned memory, which jemalloc hands out in whole pages (a
	 * 6000-byte record's buffer holds 8 KiB), the class of the size in pages. */
	size_t pages = (size + PAGE - 1) & ~(size_t)(PAGE - 1);
	if ((p = take(class_of(size, false), align, size)) ||
	    (p = take(class_of(size, true), align, size)) ||
	    (align >= PAGE && (p = take(class_of(pages, false), align, size))))
		return p;
	/* posix_memalign: C11's aligned_alloc wants the size a multiple of the alignment. */
	return posix_memalign(&p, align, size ? size : 1) == 0 ? p : NULL;
}

void bufstash_free(void *p)
{
	if (!p)
		return;
	size_t size = ts.cap ? held_size(p) : 0;
	int c = class_of(size, false);

	if (c < 0 || size > ts.cap) {
		free(p);
		return;
	}
	/* Full: the class held most of gives back first, so that a ring whose calls changed size
	 * (small records, then 1 MiB WRITEs) comes to keep the new size; where that is the
	 * buffer's own, the buffer goes. */
	for (int f; size > ts.cap - ts.bytes;) {
		f = fullest();
		if (f < 0 || f == c) {
			free(p);
			return;
		}
		free(pop(f, 0));
	}
	struct held *h = p;
	h->next = ts.bin[c];
	STASH_POISON(p, size);
	ts.bin[c] = h;
	ts.bin_bytes[c] += size;
	ts.bytes += size;
	ts.n++;
}

size_t bufstash_held(size_t *bytes)
{
	if (bytes)
		*bytes = ts.bytes;
	return ts.n;
}
