/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bufstash: a thread's freed large buffers come back warm to its next allocation that fits, up
 * to the bound it keeps, and never to another thread. */
#include <malloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/bufstash.h"

#define MIB (1u << 20)

static size_t held(void)
{
	return bufstash_held(NULL);
}

static int teardown(void **state)
{
	(void)state;
	bufstash_keep(0);
	return 0;
}

/* With no bound (a thread that is not a ring) every free goes back to the allocator. */
static void test_off_by_default(void **state)
{
	(void)state;
	void *p = bufstash_alloc(4096, MIB);
	assert_non_null(p);
	assert_int_equal((uintptr_t)p % 4096, 0);
	bufstash_free(p);
	assert_int_equal(held(), 0);
}

/* A freed 512 KiB buffer is the next 512 KiB allocation, aligned as asked, and usable whole. */
static void test_reused(void **state)
{
	(void)state;
	bufstash_keep(8 * MIB);
	void *p = bufstash_alloc(4096, MIB / 2);
	assert_non_null(p);
	bufstash_free(p);
	size_t bytes;
	assert_int_equal(bufstash_held(&bytes), 1);
	assert_true(bytes >= MIB / 2);
	void *q = bufstash_alloc(4096, MIB / 2 - 100);
	assert_ptr_equal(q, p);
	assert_int_equal(held(), 0);
	memset(q, 0xa5, MIB / 2 - 100);
	bufstash_free(q);
}

/* Small buffers are the allocator's; a buffer much larger than asked is not handed out. */
static void test_sizes(void **state)
{
	(void)state;
	bufstash_keep(8 * MIB);
	bufstash_free(bufstash_alloc(16, BUFSTASH_MIN / 2));
	assert_int_equal(held(), 0);
	void *big = bufstash_alloc(4096, MIB / 2);
	bufstash_free(big);
	assert_int_equal(held(), 1);
	void *p = bufstash_alloc(4096, MIB / 4);
	assert_ptr_not_equal(p, big);
	bufstash_free(p);
	void *q = bufstash_alloc(4096, MIB / 2 - 4096);
	assert_ptr_equal(q, big);
	bufstash_free(q);
}

/* An alignment the stashed buffer does not have gets a fresh one. */
static void test_alignment(void **state)
{
	(void)state;
	bufstash_keep(8 * MIB);
	void *p = bufstash_alloc(4096, MIB);
	bufstash_free(p);
	size_t align = 4096;
	while ((uintptr_t)p % (align * 2) == 0)
		align *= 2;     /* the first power of two p is not aligned to */
	void *q = bufstash_alloc(align * 2, MIB);
	assert_non_null(q);
	assert_ptr_not_equal(q, p);
	assert_int_equal((uintptr_t)q % (align * 2), 0);
	bufstash_free(q);
}

/* The bound holds: what does not fit is freed, and lowering it frees what is over. */
static void test_bound(void **state)
{
	(void)state;
	void *b[3];
	bufstash_keep(MIB + MIB / 2);
	for (int i = 0; i < 3; i++)
		b[i] = bufstash_alloc(4096, MIB - 8192);
	for (int i = 0; i < 3; i++)
		bufstash_free(b[i]);
	size_t bytes;
	assert_int_equal(bufstash_held(&bytes), 1);
	assert_true(bytes <= MIB + MIB / 2);
	bufstash_keep(MIB / 2);
	assert_int_equal(bufstash_held(&bytes), 0);
	assert_int_equal(bytes, 0);
}

/* A record of a few kilobytes placed on a page (as a WRITE's is) comes back warm too. */
static void test_small_records(void **state)
{
	(void)state;
	bufstash_keep(MIB);
	void *p[8];
	for (int i = 0; i < 8; i++)
		p[i] = bufstash_alloc(4096, 6000 + 160);
	for (int i = 0; i < 8; i++)
		bufstash_free(p[i]);
	assert_int_equal(held(), 8);
	for (int i = 8; i-- > 0;) {
		void *q = bufstash_alloc(4096, 6000 + 100);
		assert_ptr_equal(q, p[i]);     /* the newest first */
		memset(q, 0x5a, 6100);
	}
	assert_int_equal(held(), 0);
	for (int i = 0; i < 8; i++)
		bufstash_free(p[i]);
}

/* A stash full of one size gives way to another: a ring whose calls changed size keeps the new
 * one, within the same bound. */
static void test_gives_way(void **state)
{
	(void)state;
	enum { SMALL = 64 };
	void *s[SMALL];
	bufstash_keep(MIB + MIB / 2);
	for (int i = 0; i < SMALL; i++)
		s[i] = bufstash_alloc(4096, 16384);
	for (int i = 0; i < SMALL; i++)
		bufstash_free(s[i]);
	size_t bytes;
	assert_int_equal(bufstash_held(&bytes), SMALL);
	void *big = bufstash_alloc(4096, MIB - 8192);
	bufstash_free(big);
	assert_true(bufstash_held(&bytes) < SMALL + 1);
	assert_true(bytes <= MIB + MIB / 2);
	assert_ptr_equal(bufstash_alloc(4096, MIB - 8192), big);
	free(big);
}

/* The VmFlags of the mapping p lies in contain flag ("hg": advised MADV_HUGEPAGE). */
static bool mapping_has_flag(const void *p, const char *flag)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	assert_non_null(f);
	char line[512];
	bool inside = false, found = false;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {   /* a mapping's first line */
			inside = (uintptr_t)p >= lo && (uintptr_t)p < hi;
			continue;
		}
		if (inside && strncmp(line, "VmFlags:", 8) == 0) {
			char want[8];
			snprintf(want, sizeof want, " %s", flag);
			found = strstr(line, want) != NULL;
			break;
		}
	}
	fclose(f);
	return found;
}

/* A buffer of a megabyte or more is whole huge pages, aligned to one and advised as such (so
 * that the kernel can back it with contiguous memory, and O_DIRECT I/O of it goes to the device
 * in large requests); freed, it comes back for any size that rounds to as many huge pages. */
static void test_huge(void **state)
{
	(void)state;
	if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) != 0)
		skip();   /* a kernel without THP refuses the advice: nothing to see */
	bufstash_keep(8 * MIB);
	const size_t hp = BUFSTASH_HUGE_PAGE;
	void *p = bufstash_alloc(4096, MIB + 4096 + 200);   /* a 1 MiB WRITE's record */
	assert_non_null(p);
	assert_int_equal((uintptr_t)p % hp, 0);
	assert_true(malloc_usable_size(p) >= hp);
	assert_true(mapping_has_flag(p, "hg"));
	assert_true(mapping_has_flag((char *)p + hp - 1, "hg"));
	memset(p, 0x3c, hp);
	bufstash_free(p);
	assert_int_equal(held(), 1);
	void *q = bufstash_alloc(4096, 2 * MIB - 4096);
	assert_ptr_equal(q, p);
	bufstash_free(q);
	void *r = bufstash_alloc(4096, MIB / 2);            /* below the mark: no huge pages */
	assert_ptr_not_equal(r, p);
	assert_true(malloc_usable_size(r) < hp);
	bufstash_free(r);
	void *big = bufstash_alloc(4096, 9 * MIB);          /* a READ and its readahead */
	assert_non_null(big);
	assert_int_equal((uintptr_t)big % hp, 0);
	assert_true(malloc_usable_size(big) >= 10 * MIB);
	assert_true(mapping_has_flag((char *)big + 9 * MIB, "hg"));
	free(big);
}

static void *other_thread(void *arg)
{
	void *p = bufstash_alloc(4096, MIB);
	*(size_t *)arg = held();
	bufstash_free(p);          /* this thread keeps none: back to the allocator */
	return p;
}

/* A stash is its thread's: another thread neither takes from it nor adds to it. */
static void test_per_thread(void **state)
{
	(void)state;
	bufstash_keep(8 * MIB);
	void *p = bufstash_alloc(4096, MIB);
	bufstash_free(p);
	pthread_t t;
	size_t seen = 99;
	void *theirs;
	assert_int_equal(pthread_create(&t, NULL, other_thread, &seen), 0);
	assert_int_equal(pthread_join(t, &theirs), 0);
	assert_int_equal(seen, 0);
	assert_ptr_not_equal(theirs, p);
	assert_int_equal(held(), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_off_by_default, teardown),
		cmocka_unit_test_teardown(test_reused, teardown),
		cmocka_unit_test_teardown(test_sizes, teardown),
		cmocka_unit_test_teardown(test_alignment, teardown),
		cmocka_unit_test_teardown(test_bound, teardown),
		cmocka_unit_test_teardown(test_small_records, teardown),
		cmocka_unit_test_teardown(test_gives_way, teardown),
		cmocka_unit_test_teardown(test_per_thread, teardown),
		cmocka_unit_test_teardown(test_huge, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
