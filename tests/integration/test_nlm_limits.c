/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The lock manager's bounds ([lock] locks, locks_per_client, waiters, waiters_per_client,
 * names_per_client): past each, a LOCK gets NLM4_DENIED_NOLOCKS and the log says which bound,
 * and what was granted before stays granted; freeing makes room again. Host A calls from
 * 127.0.0.1, B from 127.0.0.2, C from 127.0.0.3, D (three names) from 127.0.0.4. */
#include "rawnlm.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define A_ADDR "127.0.0.1"
#define B_ADDR "127.0.0.2"
#define C_ADDR "127.0.0.3"
#define D_ADDR "127.0.0.4"

/* Lock records: separate ranges of one owner do not merge when they do not touch. */
static struct rl_lock nth(const char *caller, struct rn_fh fh, int32_t svid, unsigned i)
{
	return lk(caller, "oh", fh, svid, (uint64_t)i * 10, 5);
}

static int log_count(const struct itest *t, const char *what)
{
	char line[1024];
	int n = 0;
	FILE *f = fopen(t->log, "r");
	while (f && fgets(line, sizeof line, f))
		n += strstr(line, what) != NULL;
	if (f)
		fclose(f);
	return n;
}

static bool log_says(const struct itest *t, const char *what)
{
	return log_count(t, what) > 0;
}

static void test_locks_per_client(void **state)
{
	struct itest *t = *state;
	struct rn_fh fh = rl_make_file(t, "perclient");
	int a = rl_conn(t, A_ADDR), b = rl_conn(t, B_ADDR);
	for (unsigned i = 0; i < 3; i++) {
		struct rl_lock l = nth("hostA", fh, 1, i);
		RL_EXPECT(rl_lock(a, &l, EXCL, NOBLOCK, false), RL_GRANTED);
	}
	struct rl_lock over = nth("hostA", fh, 1, 3);
	RL_EXPECT(rl_lock(a, &over, EXCL, NOBLOCK, false), RL_DENIED_NOLOCKS);
	assert_true(log_says(t, "locks_per_client 3"));
	/* A's three are still A's; B is not bound by A's share */
	struct rl_lock first = nth("hostB", fh, 2, 0), other = nth("hostB", fh, 2, 5);
	RL_EXPECT(rl_lock(b, &first, EXCL, NOBLOCK, false), RL_DENIED);
	RL_EXPECT(rl_lock(b, &other, EXCL, NOBLOCK, false), RL_GRANTED);
	/* an unlock makes room */
	struct rl_lock l0 = nth("hostA", fh, 1, 0);
	RL_EXPECT(rl_unlock(a, &l0), RL_GRANTED);
	RL_EXPECT(rl_lock(a, &over, EXCL, NOBLOCK, false), RL_GRANTED);
	for (unsigned i = 1; i < 4; i++) {
		struct rl_lock l = nth("hostA", fh, 1, i);
		RL_EXPECT(rl_unlock(a, &l), RL_GRANTED);
	}
	RL_EXPECT(rl_unlock(b, &other), RL_GRANTED);
	close(a);
	close(b);
}

static void test_locks_in_all(void **state)
{
	struct itest *t = *state;
	struct rn_fh fh = rl_make_file(t, "inall");
	int a = rl_conn(t, A_ADDR), b = rl_conn(t, B_ADDR), c = rl_conn(t, C_ADDR);
	/* 3 + 2 = locks (5): C's first is one too many */
	for (unsigned i = 0; i < 3; i++) {
		struct rl_lock l = nth("hostA", fh, 1, i);
		RL_EXPECT(rl_lock(a, &l, EXCL, NOBLOCK, false), RL_GRANTED);
	}
	for (unsigned i = 3; i < 5; i++) {
		struct rl_lock l = nth("hostB", fh, 2, i);
		RL_EXPECT(rl_lock(b, &l, EXCL, NOBLOCK, false), RL_GRANTED);
	}
	struct rl_lock lc = nth("hostC", fh, 3, 6);
	RL_EXPECT(rl_lock(c, &lc, EXCL, NOBLOCK, false), RL_DENIED_NOLOCKS);
	assert_true(log_says(t, "locks 5 in all"));
	/* FREE_ALL of A makes room for C */
	assert_int_equal(rl_free_all(a, "hostA", 3), 0);
	RL_EXPECT(rl_lock(c, &lc, EXCL, NOBLOCK, false), RL_GRANTED);
	for (unsigned i = 3; i < 5; i++) {
		struct rl_lock l = nth("hostB", fh, 2, i);
		RL_EXPECT(rl_unlock(b, &l), RL_GRANTED);
	}
	RL_EXPECT(rl_unlock(c, &lc), RL_GRANTED);
	close(a);
	close(b);
	close(c);
}

static void test_waiters_per_client(void **state)
{
	struct itest *t = *state;
	struct rn_fh fh = rl_make_file(t, "waiters");
	int a = rl_conn(t, A_ADDR), b = rl_conn(t, B_ADDR);
	struct rl_lock whole = lk("hostA", "ohA", fh, 1, 0, 0);
	RL_EXPECT(rl_lock(a, &whole, EXCL, NOBLOCK, false), RL_GRANTED);
	for (int32_t svid = 10; svid < 12; svid++) {
		struct rl_lock w = lk("hostB", "ohB", fh, svid, 0, 10);
		RL_EXPECT(rl_lock(b, &w, EXCL, BLOCK, false), RL_BLOCKED);
	}
	struct rl_lock third = lk("hostB", "ohB", fh, 12, 0, 10);
	RL_EXPECT(rl_lock(b, &third, EXCL, BLOCK, false), RL_DENIED_NOLOCKS);
	assert_true(log_says(t, "waiters_per_client 2"));
	/* a CANCEL makes room */
	struct rl_lock w10 = lk("hostB", "ohB", fh, 10, 0, 10);
	RL_EXPECT(rl_cancel(b, &w10, EXCL, BLOCK), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &third, EXCL, BLOCK, false), RL_BLOCKED);
	for (int32_t svid = 11; svid < 13; svid++) {
		struct rl_lock w = lk("hostB", "ohB", fh, svid, 0, 10);
		RL_EXPECT(rl_cancel(b, &w, EXCL, BLOCK), RL_GRANTED);
	}
	RL_EXPECT(rl_unlock(a, &whole), RL_GRANTED);
	close(a);
	close(b);
}

/* Caller names per address: past names_per_client a new one is refused; the names of one
 * address share its locks_per_client (a client does not get more by naming itself anew). */
static void test_names_per_client(void **state)
{
	struct itest *t = *state;
	struct rn_fh fh = rl_make_file(t, "names");
	int d = rl_conn(t, D_ADDR);
	static const char *const names[] = {"d1", "d2", "d3"};
	uint64_t refused = rn_counter_must(t->port, "lock_hosts_refused");
	for (unsigned i = 0; i < 3; i++) {
		struct rl_lock l = nth(names[i], fh, 1, i);
		RL_EXPECT(rl_lock(d, &l, EXCL, NOBLOCK, false), RL_GRANTED);
	}
	struct rl_lock fourth = nth("d4", fh, 1, 3);
	RL_EXPECT(rl_lock(d, &fourth, EXCL, NOBLOCK, false), RL_DENIED_NOLOCKS);
	assert_true(log_says(t, "names_per_client"));
	assert_int_equal(rn_counter_must(t->port, "lock_hosts_refused"), refused + 1);
	/* d3 holds one lock, its address three: that is locks_per_client */
	struct rl_lock more = nth("d3", fh, 1, 4);
	RL_EXPECT(rl_lock(d, &more, EXCL, NOBLOCK, false), RL_DENIED_NOLOCKS);
	for (unsigned i = 0; i < 3; i++) {
		struct rl_lock l = nth(names[i], fh, 1, i);
		RL_EXPECT(rl_unlock(d, &l), RL_GRANTED);
	}
	close(d);
	/* every LOCK after the first NOLOCKS logged this hint once more; only the first does */
	assert_int_equal(log_count(t, "see [lock] locks and locks_per_client"), 1);
}

int main(int argc, char **argv)
{
	it_lock_conf_extra = "locks = 5\nlocks_per_client = 3\nwaiters_per_client = 2\n"
	                     "names_per_client = 3\n";
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_locks_per_client),
		cmocka_unit_test(test_locks_in_all),
		cmocka_unit_test(test_waiters_per_client),
		cmocka_unit_test(test_names_per_client),
	};
	return RL_MAIN("nlm-limits", tests);
}
