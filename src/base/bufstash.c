/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "base/bufstash.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define STASH_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define STASH_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define STASH_POISON(p, n) ((void)(p), (void)(n))
#define STASH_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* Enough for a ring's churn of 1 MiB buffers; the byte bound is the one that matters. */
#define STASH_SLOTS 64

struct stash {
	void *p[STASH_SLOTS];
	size_t size[STASH_SLOTS];      /* malloc_usable_size: what the buffer can hold */
	unsigned n;
	size_t bytes, cap;
};

static _Thread_local struct stash ts;

static void *take(unsigned i)
{
	void *p = ts.p[i];

	ts.bytes -= ts.size[i];
	STASH_UNPOISON(p, ts.size[i]);
	ts.n--;
	ts.p[i] = ts.p[ts.n];
	ts.size[i] = ts.size[ts.n];
	return p;
}

void bufstash_keep(size_t bytes)
{
	ts.cap = bytes;
	while (ts.n > 0 && ts.bytes > ts.cap)
		free(take(0));
}

void *bufstash_alloc(size_t align, size_t size)
{
	void *p = NULL;

	if (size >= BUFSTASH_MIN) {
		/* The newest first: the most likely to be in the CPU's caches still. */
		for (unsigned i = ts.n; i-- > 0;)
			if (ts.size[i] >= size && ts.size[i] - size <= size / 4 &&
			    ((uintptr_t)ts.p[i] & (align - 1)) == 0)
				return take(i);
	}
	if (align < sizeof(void *))
		align = sizeof(void *);
	/* posix_memalign: C11's aligned_alloc wants the size a multiple of the alignment. */
	return posix_memalign(&p, align, size ? size : 1) == 0 ? p : NULL;
}

void bufstash_free(void *p)
{
	if (!p)
		return;
	size_t size = ts.cap ? malloc_usable_size(p) : 0;

	if (size < BUFSTASH_MIN || size > ts.cap - ts.bytes || ts.n == STASH_SLOTS) {
		free(p);
		return;
	}
	STASH_POISON(p, size);
	ts.p[ts.n] = p;
	ts.size[ts.n] = size;
	ts.n++;
	ts.bytes += size;
}

size_t bufstash_held(size_t *bytes)
{
	if (bytes)
		*bytes = ts.bytes;
	return ts.n;
}
