/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The listing cache (src/fs/listcache.h): a handle is found only under the directory state and
 * inode it was filed with, the least recently used goes when a set is full, and a directory's
 * state is trusted only once the clock has passed its ctime by more than a change could hide in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "fs/listcache.h"

static const uint8_t key[16] = "listcache-test!";

static struct lc_dir dir_at(int64_t sec, uint32_t nsec)
{
	return (struct lc_dir){.dev = 0x801, .ino = 128, .ctime = {.tv_sec = sec, .tv_nsec = nsec}};
}

static struct fh_kernel handle_of(uint64_t ino, uint32_t gen)
{
	struct fh_kernel kh = {.h = {.handle_bytes = 12, .handle_type = 0x81}};
	memcpy(kh.h.f_handle, &ino, 8);
	memcpy(kh.h.f_handle + 8, &gen, 4);
	return kh;
}

static void assert_handle(const struct fh_kernel *got, const struct fh_kernel *want)
{
	assert_int_equal(got->h.handle_type, want->h.handle_type);
	assert_int_equal(got->h.handle_bytes, want->h.handle_bytes);
	assert_memory_equal(got->h.f_handle, want->h.f_handle, want->h.handle_bytes);
}

/* Found under the same directory state, name and inode; not under another of any of them. */
static void test_found_only_as_filed(void **state)
{
	(void)state;
	struct listcache *lc = listcache_new(key, 1024);
	assert_non_null(lc);
	struct lc_dir d = dir_at(1000, 5), changed = dir_at(1000, 6), other = d, connectable = d;
	other.ino = 129;
	connectable.connectable = true;
	struct fh_kernel kh = handle_of(77, 3), got;
	listcache_put(lc, &d, "a", 77, &kh);
	assert_true(listcache_get(lc, &d, "a", 77, &got));
	assert_handle(&got, &kh);
	assert_false(listcache_get(lc, &changed, "a", 77, &got));   /* the directory changed */
	assert_false(listcache_get(lc, &d, "a", 78, &got));         /* the name is another inode now */
	assert_false(listcache_get(lc, &d, "b", 77, &got));         /* a hard link's other name */
	assert_false(listcache_get(lc, &other, "a", 77, &got));     /* another directory */
	assert_false(listcache_get(lc, &connectable, "a", 77, &got));
	/* filed again: the newer handle */
	struct fh_kernel again = handle_of(77, 4);
	listcache_put(lc, &d, "a", 77, &again);
	assert_true(listcache_get(lc, &d, "a", 77, &got));
	assert_handle(&got, &again);
	listcache_free(lc);
}

/* Bounded: filing far more than it holds keeps the names filed last, not the first ones; a name
 * found meanwhile outlives names filed before it. */
static void test_bounded_least_recent_goes(void **state)
{
	(void)state;
	struct listcache *lc = listcache_new(key, 256);
	assert_non_null(lc);
	struct lc_dir d = dir_at(1000, 5);
	struct fh_kernel got;
	char name[32];
	int kept_first = 0, kept_last = 0, kept_used = 0;
	for (uint64_t i = 0; i < 4096; i++) {
		struct fh_kernel kh = handle_of(i, 1);
		snprintf(name, sizeof name, "n%llu", (unsigned long long)i);
		listcache_put(lc, &d, name, i, &kh);
		if (i >= 64 && i < 4000)   /* the first 64 are looked at again and again */
			for (uint64_t j = 0; j < 64; j += 8) {
				snprintf(name, sizeof name, "n%llu", (unsigned long long)j);
				listcache_get(lc, &d, name, j, &got);
			}
	}
	for (uint64_t i = 0; i < 4096; i++) {
		snprintf(name, sizeof name, "n%llu", (unsigned long long)i);
		bool found = listcache_get(lc, &d, name, i, &got);
		if (i < 64 && i % 8 == 0)
			kept_used += found;
		else if (i < 256)
			kept_first += found;
		else if (i >= 4096 - 64)
			kept_last += found;
	}
	assert_int_equal(kept_used, 8);
	assert_true(kept_first < 8);
	assert_true(kept_last > 48);
	listcache_free(lc);
}

/* A ctime with nanoseconds is trusted 50 ms after it; one of whole seconds (a file system that
 * keeps no finer grain) 3 s after; one ahead of the clock never. */
static void test_settled(void **state)
{
	(void)state;
	struct statx_timestamp fine = {.tv_sec = 1000, .tv_nsec = 900000000};
	struct statx_timestamp whole = {.tv_sec = 1000, .tv_nsec = 0};
	struct timespec soon = {1000, 940000000}, later = {1000, 960000000};
	struct timespec two_s = {1002, 500000000}, four_s = {1004, 0}, before = {999, 0};
	assert_false(listcache_settled(&fine, &soon));
	assert_true(listcache_settled(&fine, &later));
	assert_false(listcache_settled(&fine, &before));
	assert_false(listcache_settled(&whole, &two_s));
	assert_true(listcache_settled(&whole, &four_s));
	assert_false(listcache_settled(&whole, &before));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_found_only_as_filed),
		cmocka_unit_test(test_bounded_least_recent_goes),
		cmocka_unit_test(test_settled),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
