/* SPDX-License-Identifier: GPL-2.0-or-later */
/* READ replies count against receive_memory: a client that sends many 1 MiB READs and reads none
 * of the replies makes the server hold at most receive_memory of them (plus the one READ a
 * connection always gets), not one buffer per READ in flight; the rest wait unread in the
 * socket. Another client is served meanwhile, and once the first reads its replies every one
 * arrives, byte-exact, and the memory is given back. */
#include "client.h"
#include "rawnfs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MIB (1u << 20)
#define FILE_MIB 16
#define NREAD 48
#define RECEIVE_MEMORY (4u * MIB)

static uint8_t byte_at(uint64_t off)
{
	return (uint8_t)(off * 2654435761u >> 13);
}

static void write_file(int fd, const struct rn_fh *fh)
{
	static uint8_t chunk[MIB];
	for (uint32_t m = 0; m < FILE_MIB; m++) {
		for (uint32_t i = 0; i < MIB; i++)
			chunk[i] = byte_at((uint64_t)m * MIB + i);
		assert_int_equal(rn_write(fd, fh, (uint64_t)m * MIB, chunk, MIB, 2), 0);
	}
}

/* One 4 KiB READ on a fresh connection, answered. */
static void expect_read_served(const struct itest *t, const struct rn_fh *fh)
{
	int fd = raw_connect(t->port, NULL);
	uint8_t out[4096];
	assert_true(fd >= 0);
	assert_int_equal(rn_read(fd, fh, 8192, out, sizeof out), 0);
	for (size_t i = 0; i < sizeof out; i++)
		assert_int_equal(out[i], byte_at(8192 + i));
	close(fd);
}

static void test_unread_replies_bounded(void **state)
{
	struct itest *t = *state;
	struct rn_fh root, fh;
	int fd = raw_connect(t->port, NULL);
	assert_true(fd >= 0);
	assert_int_equal(rn_mnt(fd, t->exports[EXP_RW], &root), 0);
	assert_int_equal(rn_create(fd, &root, "readmem", &fh), 0);
	write_file(fd, &fh);
	uint64_t waits0 = rn_counter_must(t->port, "receive_memory_waits");

	/* A small receive buffer: the kernel holds few of the replies, the server the rest. */
	int rcv = 64 << 10;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
	for (uint32_t i = 0; i < NREAD; i++) {
		struct xb b;
		rn_enc_read(&b, 0x7000 + i, &fh, (uint64_t)(i % FILE_MIB) * MIB, MIB);
		assert_int_equal(raw_send_record(fd, b.buf, b.len), 0);
	}
	it_sleep_ms(1000);
	assert_true(it_alive(t));
	uint64_t held = rn_counter_must(t->port, "receive_memory_bytes");
	print_message("receive memory held with %d unread 1 MiB READs: %llu bytes\n", NREAD,
		      (unsigned long long)held);
	/* The READs are charged (at least one reply is held back)... */
	assert_true(held >= MIB);
	/* ...within the bound, plus the one a connection always gets and the counter's own call. */
	assert_true(held <= RECEIVE_MEMORY + MIB + (64u << 10));
	assert_true(rn_counter_must(t->port, "receive_memory_waits") > waits0);
	expect_read_served(t, &fh);

	/* Every reply once, in any order (RPC matches them by xid: a READ the cache answers may
	 * pass one that reads the disk). */
	static uint8_t buf[MIB + 4096];
	bool seen[NREAD] = {false};
	for (uint32_t n_got = 0; n_got < NREAD; n_got++) {
		struct raw_reply r;
		const uint8_t *data;
		uint32_t count;
		bool eof;
		ssize_t n = raw_recv_record(fd, buf, sizeof buf, 10000);
		assert_true(n > 0);
		assert_int_equal(raw_parse_reply(buf, (size_t)n, &r), 0);
		uint32_t i = r.xid - 0x7000;
		assert_true(i < NREAD && !seen[i]);
		seen[i] = true;
		assert_int_equal(rn_dec_read(&r, &data, &count, &eof), 0);
		assert_int_equal(count, MIB);
		uint64_t off = (uint64_t)(i % FILE_MIB) * MIB;
		for (uint32_t k = 0; k < count; k += 4093)
			if (data[k] != byte_at(off + k))
				fail_msg("READ %u: byte %u differs", i, k);
	}
	close(fd);
	it_sleep_ms(200);
	assert_true(rn_counter_must(t->port, "receive_memory_bytes") < 4096);
}

int main(int argc, char **argv)
{
	it_server_conf_extra = "receive_memory = 4M\n";
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unread_replies_bounded),
	};
	return IT_MAIN("READ reply memory", tests);
}
