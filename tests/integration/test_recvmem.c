/* SPDX-License-Identifier: GPL-2.0-or-later */
/* receive_memory (8M here) is charged as a record's bytes arrive, not as its record mark promises
 * them; one connection holds at most its share of it, and the connections of one client address
 * together at most the client's share (4M here, half): clients that begin 1 MiB WRITEs and send
 * 600 bytes of each, or that earned large receive windows with fast WRITEs before stalling, hold
 * what they sent; one that sends READs and reads none of the replies holds its share; one client
 * with 16 connections doing either holds its client's share; none keeps another client's 1 MiB
 * WRITE waiting. Before, that WRITE waited until record_timeout (60 s here) closed the others.
 *
 * Each stalling connection has an address of its own on the loopback (127.0.1.N, from conn_as),
 * unless the test is about one client's many connections; the client served is 127.0.0.2. */
#include "client.h"
#include "rawbig.h"
#include "rawnfs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MIB (1u << 20)
#define NCONN 64
#define BEGUN 600              /* payload bytes each stalled WRITE sends */
#define SERVED_MS 5000         /* the other client's WRITE answered by then (the bug: 60 s) */
#define CLIENT_SHARE (4u * MIB) /* receive_memory_per_client: its default, half */
#define SERVED_FROM "127.0.0.2"

static struct rn_fh file;
static int conns[NCONN];
static uint8_t payload[MIB];

static void setup_file(const struct itest *t)
{
	if (file.len)
		return;
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root;
	assert_true(fd >= 0);
	assert_int_equal(rn_mnt(fd, t->exports[EXP_RW], &root), 0);
	assert_int_equal(rn_create(fd, &root, "recvmem", &file), 0);
	close(fd);
	memset(payload, 0x5a, sizeof payload);
}

/* A connection from a client address of its own for each n (127.0.1.1, 127.0.1.2, ...). */
static int conn_as(const struct itest *t, unsigned n)
{
	char a[32];
	snprintf(a, sizeof a, "127.0.%u.%u", 1 + n / 250, 1 + n % 250);
	int fd = raw_connect(t->port, a);
	assert_true(fd >= 0);
	return fd;
}

/* Begin a 1 MiB WRITE on fd and send BEGUN bytes of its payload. */
static void begin_write(int fd, uint32_t xid)
{
	uint8_t head[512 + BEGUN];
	size_t n = rb_write_head(head, sizeof head, xid, &file, (uint64_t)xid % 64 * MIB, MIB);
	assert_true(n > 0);
	memset(head + n, 0x77, BEGUN);
	assert_int_equal(raw_send_all(fd, head, n + BEGUN), 0);
}

/* Another client's 1 MiB WRITE, answered OK in time. */
static void expect_write_served(const struct itest *t, uint32_t xid)
{
	int fd = raw_connect(t->port, SERVED_FROM);
	assert_true(fd >= 0);
	long long t0 = rb_now_ms();
	int st = rb_write(fd, xid, &file, 0, payload, MIB, SERVED_MS);
	print_message("another client's 1 MiB WRITE: status %d after %lld ms\n", st, rb_now_ms() - t0);
	assert_int_equal(st, 0);
	close(fd);
}

static int close_all(void **state)
{
	(void)state;
	for (int i = 0; i < NCONN; i++)
		if (conns[i] > 0)
			close(conns[i]);
	memset(conns, 0, sizeof conns);
	return 0;
}

/* 64 connections each promise 1 MiB and send 600 bytes: what they hold is what they sent. */
static void test_promised_records_charge_what_arrived(void **state)
{
	struct itest *t = *state;
	setup_file(t);
	for (int i = 0; i < NCONN; i++) {
		conns[i] = conn_as(t, (unsigned)i);
		begin_write(conns[i], 0x4e000000u + (uint32_t)i);
	}
	it_sleep_ms(300);
	uint64_t held = rn_counter_must(t->port, "receive_memory_bytes");
	print_message("receive memory held by %d begun 1 MiB WRITEs: %llu bytes\n", NCONN,
		      (unsigned long long)held);
	/* about 700 bytes each and the counter's own call; the whole promise was 64 MiB */
	assert_true(held < NCONN * 4096);
	expect_write_served(t, 0x4e100000u);
}

/* Connections that sent fast WRITEs (their receive windows grew to a record, charged ahead of
 * each receive) and then stall in the middle of the next: a tenth of a second later their
 * windows are taken back, and they hold what they sent. */
static void test_stalled_windows_revoked(void **state)
{
	struct itest *t = *state;
	setup_file(t);
	uint64_t revoked0 = rn_counter(t->port, "receive_windows_revoked");
	for (int i = 0; i < NCONN; i++) {
		conns[i] = conn_as(t, (unsigned)i);
		for (uint32_t k = 0; k < 3; k++)
			assert_int_equal(rb_write(conns[i], 0x4e200000u + (uint32_t)i * 4 + k, &file,
						  (uint64_t)(i % 8) * MIB, payload, MIB, 10000), 0);
		begin_write(conns[i], 0x4e300000u + (uint32_t)i);
	}
	it_sleep_ms(500);
	uint64_t held = rn_counter_must(t->port, "receive_memory_bytes");
	uint64_t revoked = rn_counter_must(t->port, "receive_windows_revoked") - revoked0;
	print_message("receive memory held by %d stalled WRITEs that had grown windows: %llu bytes "
		      "(%llu windows taken back)\n", NCONN, (unsigned long long)held,
		      (unsigned long long)revoked);
	assert_true(held < NCONN * 4096);
	assert_true(revoked > 0);
	expect_write_served(t, 0x4e400000u);
}

/* The file's first 8 MiB written, so that READs of them have data to answer. */
static void fill_file(int fd)
{
	for (uint32_t m = 0; m < 8; m++)
		assert_int_equal(rb_write(fd, 0x4e500000u + m, &file, (uint64_t)m * MIB, payload, MIB,
					  10000), 0);
}

/* 48 READs of 1 MiB on fd, none of whose replies it reads: it holds its share. */
static void send_unread_reads(int fd, uint32_t xid0)
{
	int rcv = 64 << 10;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
	for (uint32_t i = 0; i < 48; i++) {
		struct xb b;
		rn_enc_read(&b, xid0 + i, &file, (uint64_t)(i % 8) * MIB, MIB);
		assert_int_equal(raw_send_record(fd, b.buf, b.len), 0);
	}
}

/* One connection sends 48 READs of 1 MiB and reads no reply: it holds its share (a quarter of
 * receive_memory, at least two max_record) and one READ more, and the rest stays for others. */
static void test_connection_share_bounded(void **state)
{
	struct itest *t = *state;
	setup_file(t);
	int fd = conns[0] = conn_as(t, 0);
	fill_file(fd);
	uint64_t waits0 = rn_counter(t->port, "receive_memory_share_waits");
	send_unread_reads(fd, 0x4e600000u);
	it_sleep_ms(500);
	uint64_t held = rn_counter_must(t->port, "receive_memory_bytes");
	print_message("receive memory held by 48 unread 1 MiB READs of one connection: %llu bytes\n",
		      (unsigned long long)held);
	assert_true(held <= 2 * 1088 * 1024 + MIB + (64u << 10));
	assert_true(rn_counter_must(t->port, "receive_memory_share_waits") > waits0);
	expect_write_served(t, 0x4e700000u);
}

/* With all of receive_memory held (8 connections' unread READs), a record begun before goes on
 * past the bound only with its ring's token. One such record (x) takes it and stalls: within a
 * fraction of a second the token passes to the other (y), whose WRITE is read and answered while
 * the READs still hold the memory. Before, y waited for x's record_timeout, and a record waiting
 * in the middle of its direct receive was never looked at again. x[k] and y[k] share a ring
 * (connections go to the two rings in turn). */
#define HOGS 8
static void test_stalled_token_passed(void **state)
{
	struct itest *t = *state;
	setup_file(t);
	int *x = conns, *y = conns + 2, *hog = conns + 4;
	int fd = raw_connect(t->port, NULL);
	assert_true(fd >= 0);
	fill_file(fd);
	close(fd);
	for (int k = 0; k < 4; k++)
		conns[k] = conn_as(t, (unsigned)k);
	for (int k = 0; k < 4; k++)
		begin_write(conns[k], 0x4e800000u + (uint32_t)k);
	for (int i = 0; i < HOGS; i++) {
		hog[i] = conn_as(t, 4 + (unsigned)i);
		send_unread_reads(hog[i], 0x4e900000u + (uint32_t)i * 64);
	}
	uint64_t held = 0;
	for (long long end = rb_now_ms() + 10000; held < 8u * MIB && rb_now_ms() < end;) {
		it_sleep_ms(100);
		held = rn_counter_must(t->port, "receive_memory_bytes");
	}
	print_message("receive memory held by %d connections' unread READs: %llu bytes\n", HOGS,
		      (unsigned long long)held);
	assert_true(held >= 8u * MIB);
	uint64_t passed0 = rn_counter_must(t->port, "receive_tokens_passed");
	for (int k = 0; k < 2; k++)
		assert_int_equal(rb_send_by(x[k], payload, 1000, rb_now_ms() + 2000), 0);
	it_sleep_ms(30);      /* x's bytes taken, the token with them; y's come while x holds it */
	long long t0 = rb_now_ms();
	for (int k = 0; k < 2; k++) {
		assert_int_equal(rb_send_by(y[k], payload, MIB - BEGUN, t0 + SERVED_MS), 0);
		int st = rb_write_reply(y[k], 0x4e800002u + (uint32_t)k, MIB,
					(int)(t0 + SERVED_MS - rb_now_ms()));
		print_message("WRITE past a stalled record: status %d after %lld ms\n", st,
			      rb_now_ms() - t0);
		assert_int_equal(st, 0);
	}
	assert_true(rn_counter_must(t->port, "receive_memory_bytes") >= 8u * MIB);
	/* On a busy machine y's bytes may be taken before x's, and y take the token first: x takes
	 * it once y is done, and passes it a tenth of a second later. */
	uint64_t passed = rn_counter_must(t->port, "receive_tokens_passed");
	for (long long end = rb_now_ms() + 3000; passed <= passed0 && rb_now_ms() < end;) {
		it_sleep_ms(100);
		passed = rn_counter_must(t->port, "receive_tokens_passed");
	}
	assert_true(passed > passed0);
}

/* receive_memory_bytes once it stops moving (what the stalled clients hold). */
static uint64_t held_settled(const struct itest *t)
{
	uint64_t prev = UINT64_MAX, held = rn_counter_must(t->port, "receive_memory_bytes");
	for (int i = 0; i < 50 && held != prev; i++) {
		it_sleep_ms(200);
		prev = held;
		held = rn_counter_must(t->port, "receive_memory_bytes");
	}
	return held;
}

/* One client (one address) with 16 connections, each sending READs of 1 MiB and reading none of
 * the replies: together they hold the client's share (and a READ more), not all of
 * receive_memory, and another client's WRITE is served. Before, each held its connection's share
 * and the 16 held all of it. */
#define MANY 16
static void test_client_share_bounded_reads(void **state)
{
	struct itest *t = *state;
	setup_file(t);
	int fd = conn_as(t, 100);
	fill_file(fd);
	close(fd);
	uint64_t waits0 = rn_counter(t->port, "receive_memory_client_waits");
	for (int i = 0; i < MANY; i++) {
		conns[i] = raw_connect(t->port, "127.0.2.1");
		assert_true(conns[i] >= 0);
		send_unread_reads(conns[i], 0x4ea00000u + (uint32_t)i * 64);
	}
	uint64_t held = held_settled(t);
	print_message("receive memory held by one client's %d connections of unread READs: %llu "
		      "bytes\n", MANY, (unsigned long long)held);
	assert_true(held <= CLIENT_SHARE + MIB);
	assert_true(rn_counter_must(t->port, "receive_memory_client_waits") > waits0);
	expect_write_served(t, 0x4eb00000u);
}

/* The same client's 16 connections each begin a 1 MiB WRITE and send all of it but 1000 bytes:
 * the records it may begin are those whose announced sizes fit in its share, and the others
 * wait to begin (their bytes stay in the sockets), so another client's WRITE is served. */
static void test_client_share_bounded_records(void **state)
{
	struct itest *t = *state;
	setup_file(t);
	for (int i = 0; i < MANY; i++) {
		conns[i] = raw_connect(t->port, "127.0.2.1");
		assert_true(conns[i] >= 0);
		uint8_t head[512];
		uint32_t xid = 0x4ec00000u + (uint32_t)i;
		size_t n = rb_write_head(head, sizeof head, xid, &file, (uint64_t)(i % 8) * MIB, MIB);
		assert_true(n > 0);
		assert_int_equal(raw_send_all(conns[i], head, n), 0);
		rb_send_until(conns[i], payload, MIB - 1000, rb_now_ms() + 200);
	}
	uint64_t held = held_settled(t);
	print_message("receive memory held by one client's %d nearly sent 1 MiB WRITEs: %llu "
		      "bytes\n", MANY, (unsigned long long)held);
	assert_true(held <= CLIENT_SHARE + MIB);
	expect_write_served(t, 0x4ed00000u);
}

int main(int argc, char **argv)
{
	it_server_conf_extra = "receive_memory = 8M\nrecord_timeout = 60\n";
	it_rw_clients_extra = "127.0.0.0/8(rw,no_root_squash,insecure)";
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_promised_records_charge_what_arrived, close_all),
		cmocka_unit_test_teardown(test_stalled_windows_revoked, close_all),
		cmocka_unit_test_teardown(test_connection_share_bounded, close_all),
		cmocka_unit_test_teardown(test_stalled_token_passed, close_all),
		cmocka_unit_test_teardown(test_client_share_bounded_reads, close_all),
		cmocka_unit_test_teardown(test_client_share_bounded_records, close_all),
	};
	return IT_MAIN("receive memory", tests);
}
