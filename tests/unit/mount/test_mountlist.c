/* SPDX-License-Identifier: GPL-2.0-or-later */
/* MOUNT's list: one entry per client and export, bounded, the least recently mounted dropped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "mount/mountlist.h"

struct seen {
	char text[1024];
	size_t n, stop_after;
};

static bool collect(void *arg, const char *host, const char *dir)
{
	struct seen *s = arg;
	size_t len = strlen(s->text);
	snprintf(s->text + len, sizeof s->text - len, "%s%s:%s", len ? " " : "", host, dir);
	return ++s->n != s->stop_after;
}

/* The entries, newest first, as "host:dir host:dir ...". */
static const char *listing(struct mount_list *l, struct seen *s)
{
	memset(s, 0, sizeof *s);
	mount_list_walk(l, collect, s);
	return s->text;
}

static uint64_t entries(struct mount_list *l)
{
	struct mount_list_stats st;
	mount_list_stats(l, &st);
	return st.entries;
}

static void test_one_entry_per_client_and_export(void **state)
{
	(void)state;
	struct mount_list *l = mount_list_new(8);
	struct seen s;
	assert_non_null(l);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(mount_list_add(l, "10.0.0.1", "/srv/a"), 0);
	assert_int_equal(entries(l), 1);
	assert_int_equal(mount_list_add(l, "10.0.0.2", "/srv/a"), 0);
	assert_int_equal(mount_list_add(l, "10.0.0.1", "/srv/b"), 0);
	assert_string_equal(listing(l, &s), "10.0.0.1:/srv/b 10.0.0.2:/srv/a 10.0.0.1:/srv/a");
	/* a new MNT of an entry makes it the newest */
	assert_int_equal(mount_list_add(l, "10.0.0.1", "/srv/a"), 0);
	assert_string_equal(listing(l, &s), "10.0.0.1:/srv/a 10.0.0.1:/srv/b 10.0.0.2:/srv/a");
	mount_list_free(l);
}

static void test_bound_drops_least_recent(void **state)
{
	(void)state;
	struct mount_list *l = mount_list_new(3);
	struct mount_list_stats st;
	struct seen s;
	char host[32];
	assert_non_null(l);
	for (int i = 1; i <= 3; i++) {
		snprintf(host, sizeof host, "10.0.0.%d", i);
		assert_int_equal(mount_list_add(l, host, "/srv"), 0);
	}
	assert_int_equal(mount_list_add(l, "10.0.0.1", "/srv"), 0);   /* 1 is the newest now */
	assert_int_equal(mount_list_add(l, "10.0.0.4", "/srv"), 1);   /* 2 goes */
	assert_int_equal(mount_list_add(l, "10.0.0.5", "/srv"), 1);   /* 3 goes */
	assert_string_equal(listing(l, &s), "10.0.0.5:/srv 10.0.0.4:/srv 10.0.0.1:/srv");
	mount_list_stats(l, &st);
	assert_int_equal(st.entries, 3);
	assert_int_equal(st.dropped, 2);
	/* many clients: never more than the bound, and every one found again */
	for (int i = 0; i < 10000; i++) {
		snprintf(host, sizeof host, "fd00::%x", i);
		assert_true(mount_list_add(l, host, "/srv") >= 0);
	}
	assert_int_equal(entries(l), 3);
	assert_int_equal(mount_list_add(l, "fd00::270f", "/srv"), 0);
	s = (struct seen){.stop_after = 1};
	mount_list_walk(l, collect, &s);
	assert_string_equal(s.text, "fd00::270f:/srv");
	mount_list_free(l);
}

static void test_remove(void **state)
{
	(void)state;
	struct mount_list *l = mount_list_new(16);
	struct seen s;
	assert_non_null(l);
	mount_list_add(l, "10.0.0.1", "/a");
	mount_list_add(l, "10.0.0.1", "/b");
	mount_list_add(l, "10.0.0.2", "/a");
	mount_list_remove(l, "10.0.0.1", "/a");
	mount_list_remove(l, "10.0.0.9", "/a");   /* not there: nothing happens */
	assert_string_equal(listing(l, &s), "10.0.0.2:/a 10.0.0.1:/b");
	mount_list_add(l, "10.0.0.1", "/c");
	mount_list_remove(l, "10.0.0.1", NULL);   /* UMNTALL */
	assert_string_equal(listing(l, &s), "10.0.0.2:/a");
	mount_list_remove(l, "10.0.0.2", "/a");
	assert_string_equal(listing(l, &s), "");
	assert_int_equal(mount_list_add(l, "10.0.0.2", "/a"), 0);
	assert_int_equal(entries(l), 1);
	mount_list_free(l);
}

/* MNT, UMNT and DUMP of several rings at once (TSan checks the locking). */
struct worker_arg {
	struct mount_list *l;
	int id;
	size_t most;          /* the longest walk it saw (cmocka asserts only on the test's thread) */
};

static bool count_only(void *arg, const char *host, const char *dir)
{
	(void)host, (void)dir;
	return ++*(size_t *)arg < 100000;
}

static void *worker(void *p)
{
	struct worker_arg *a = p;
	char host[32];
	for (int i = 0; i < 2000; i++) {
		snprintf(host, sizeof host, "10.%d.%d.%d", a->id, i / 250, i % 250);
		mount_list_add(a->l, host, i % 2 ? "/a" : "/b");
		if (i % 7 == 0)
			mount_list_remove(a->l, host, "/a");
		if (i % 100 == 0) {
			size_t n = 0;
			mount_list_walk(a->l, count_only, &n);
			if (n > a->most)
				a->most = n;
		}
	}
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	struct mount_list *l = mount_list_new(500);
	pthread_t th[4];
	struct worker_arg args[4];
	assert_non_null(l);
	for (int i = 0; i < 4; i++) {
		args[i] = (struct worker_arg){l, i, 0};
		assert_int_equal(pthread_create(&th[i], NULL, worker, &args[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_true(args[i].most <= 500);
	}
	assert_int_equal(entries(l), 500);
	mount_list_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_entry_per_client_and_export),
		cmocka_unit_test(test_bound_drops_least_recent),
		cmocka_unit_test(test_remove),
		cmocka_unit_test(test_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
