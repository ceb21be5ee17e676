/* SPDX-License-Identifier: GPL-2.0-or-later */
/* 3000 connections at once, each with a large record barely begun (a record mark for 1 MiB and
 * the first kilobyte of it), as a flood of clients or one hostile one makes: the daemon stays
 * up, its memory stays bounded (receive_memory caps the record buffers; its resident set is
 * asserted below 400 MiB), and a new client is served meanwhile and afterwards. All come from
 * 127.0.0.1, so past connections_per_client (1024) the longest idle ones are closed. */
#include "client.h"
#include "rawnfs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define NCONN 3000
#define RSS_MAX_KIB (400 * 1024)

static int fds[NCONN];

static long rss_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* A NULL call and a GETATTR of the export root on a fresh connection. */
static void expect_served(const struct itest *t)
{
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root;
	struct xb b;
	struct raw_reply r;
	static uint8_t buf[65536];
	uint64_t size;
	assert_true(fd >= 0);
	assert_int_equal(rn_mnt(fd, t->exports[EXP_RW], &root), 0);
	rn_enc_getattr(&b, 0x3000, &root);
	assert_int_equal(rn_exchange(fd, &b, buf, sizeof buf, &r), 0);
	assert_int_equal(rn_dec_getattr(&r, &size), 0);
	close(fd);
}

static void test_3000_begun_records(void **state)
{
	struct itest *t = *state;
	static uint8_t part[4 + 1024];
	uint32_t mark = htonl(0x80000000u | (1u << 20));
	memcpy(part, &mark, 4);
	memset(part + 4, 0x5a, sizeof part - 4);
	long before = rss_kib(t->pid);
	for (int i = 0; i < NCONN; i++) {
		fds[i] = raw_connect(t->port, NULL);
		if (fds[i] < 0)
			fail_msg("connection %d: %s", i, strerror(errno));
		assert_int_equal(raw_send_all(fds[i], part, sizeof part), 0);
	}
	it_sleep_ms(1000);
	assert_true(it_alive(t));
	long during = rss_kib(t->pid);
	print_message("daemon RSS: %ld KiB before, %ld KiB with %d begun records\n", before, during,
		      NCONN);
	assert_true(during > 0 && during < RSS_MAX_KIB);
	/* The large records within receive_memory (default 512M); small calls (the counters'
	 * own) are taken past it. */
	assert_true(rn_counter_must(t->port, "receive_memory_bytes") <= (512u << 20) + (64u << 10));
	expect_served(t);
	for (int i = 0; i < NCONN; i++)
		close(fds[i]);
	it_sleep_ms(500);
	assert_true(it_alive(t));
	expect_served(t);
	/* Given back: what is left is the counters' call itself. */
	assert_true(rn_counter_must(t->port, "receive_memory_bytes") < 4096);
}

int main(int argc, char **argv)
{
	/* The daemon inherits this: it needs a descriptor per connection, we one per socket. */
	struct rlimit rl = {16384, 16384};
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		perror("setrlimit");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_3000_begun_records),
	};
	return IT_MAIN("3000 connections", tests);
}
