/* SPDX-License-Identifier: GPL-2.0-or-later */
/* MOUNT's list (DUMP) under a client that spells one export many ways and under thousands of
 * clients: one entry per client and export, at most [server] mount_list_entries of them (the
 * least recently mounted dropped, counted), and a DUMP that answers within one datagram however
 * long the list. Clients are 127.x.y.z addresses over UDP, on the export every 127.0.0.0/8
 * address may mount (rawnlm.h's SHARED). */
#include "rawnlm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BOUND 2000
#define CLIENTS 2500

struct dump_entry {
	char host[64], dir[PATH_MAX];
};

/* DUMP (MOUNT procedure 2) on fd: the number of entries (the first cap of them in out), -1 when
 * the call is not answered with a well-formed mountlist. *len: the reply record's length. */
static int dump(int fd, struct dump_entry *out, size_t cap, size_t *len)
{
	static uint8_t buf[128 * 1024];
	struct xb *b = calloc(1, sizeof *b), cred = {0};
	struct raw_reply r;
	int n = 0;
	assert_non_null(b);
	xb_auth_sys(&cred, 0, 0);
	xb_call(b, 0x4d4c0000u + (uint32_t)rand() % 0xffff, 2, RL_MOUNT_PROG, 3, 2, RAW_AUTH_SYS,
	        &cred);
	int rc = rl_exchange(fd, b, buf, sizeof buf, &r);
	free(b);
	if (rc < 0 || r.reply_stat != 0 || r.accept_stat != 0)
		return -1;
	*len = (size_t)(r.body + r.body_len - buf);
	const uint8_t *p = r.body, *end = r.body + r.body_len;
	for (;;) {
		if (end - p < 4)
			return -1;
		uint32_t more = get_u32(p);
		p += 4;
		if (!more)
			return p == end ? n : -1;
		for (int field = 0; field < 2; field++) {
			if (end - p < 4)
				return -1;
			uint32_t sl = get_u32(p);
			if ((size_t)(end - p - 4) < ((sl + 3u) & ~3u))
				return -1;
			if ((size_t)n < cap) {
				char *dst = field ? out[n].dir : out[n].host;
				size_t dcap = field ? sizeof out[n].dir : sizeof out[n].host;
				snprintf(dst, dcap, "%.*s", (int)sl, (const char *)p + 4);
			}
			p += 4 + ((sl + 3u) & ~3u);
		}
		n++;
	}
}

static int mnt(int fd, const char *path)
{
	struct xb *b = calloc(1, sizeof *b);
	static uint8_t buf[4096];
	static uint32_t xid = 0x4d4e0000;
	struct raw_reply r;
	struct rn_fh fh;
	assert_non_null(b);
	rn_enc_mnt(b, xid++, path);
	int rc = rl_exchange(fd, b, buf, sizeof buf, &r);
	free(b);
	return rc < 0 ? -1 : rn_dec_mnt(&r, &fh);
}

static void shared_dir(const struct itest *t, char *out, size_t cap)
{
	assert_true((size_t)snprintf(out, cap, "%s/%s", t->dir, RL_SHARED) < cap);
}

/* 600 spellings of one export from one client: one entry, under the export's own name. */
static void test_one_entry_per_spelling(void **state)
{
	struct itest *t = *state;
	char base[512], path[1024];
	static struct dump_entry e[64];
	size_t len;
	int fd = rl_udp_connect(t->mount_port, "127.0.0.9"), n = 0;
	assert_true(fd >= 0);
	shared_dir(t, base, sizeof base);
	for (int slashes = 1; slashes <= 30; slashes++)
		for (int dots = 0; dots < 20; dots++) {
			int k = snprintf(path, sizeof path, "%s%.*s", base, slashes,
			                 "//////////////////////////////");
			for (int d = 0; d < dots; d++)
				k += snprintf(path + k, sizeof path - (size_t)k, "./");
			assert_int_equal(mnt(fd, path), 0);
			n++;
		}
	assert_int_equal(n, 600);
	int got = dump(fd, e, 64, &len), mine = 0;
	assert_true(got >= 1);
	for (int i = 0; i < got && i < 64; i++)
		if (strcmp(e[i].host, "127.0.0.9") == 0) {
			mine++;
			assert_string_equal(e[i].dir, base);
		}
	assert_int_equal(mine, 1);
	/* UMNT under yet another spelling takes it away */
	snprintf(path, sizeof path, "%s/./", base);
	struct xb *b = calloc(1, sizeof *b);
	struct raw_reply r;
	static uint8_t buf[4096];
	struct xb cred = {0};
	assert_non_null(b);
	xb_auth_sys(&cred, 0, 0);
	xb_call(b, 0x4d550001, 2, RL_MOUNT_PROG, 3, 3, RAW_AUTH_SYS, &cred);
	xb_string(b, path);
	assert_int_equal(rl_exchange(fd, b, buf, sizeof buf, &r), 0);
	free(b);
	got = dump(fd, e, 64, &len);
	for (int i = 0; i < got && i < 64; i++)
		assert_string_not_equal(e[i].host, "127.0.0.9");
	close(fd);
}

/* More clients than the bound: the list holds the bound, the rest were dropped and counted,
 * and DUMP still answers, the newest first, in one datagram's room. */
static void test_bound_and_dump(void **state)
{
	struct itest *t = *state;
	char base[512], host[32], last[32] = "";
	static struct dump_entry e[BOUND];
	size_t len = 0;
	shared_dir(t, base, sizeof base);
	uint64_t dropped0 = rn_counter_must(t->port, "mount_list_dropped");
	for (int i = 0; i < CLIENTS; i++) {
		snprintf(host, sizeof host, "127.1.%d.%d", i / 250, 1 + i % 250);
		int fd = rl_udp_connect(t->mount_port, host);
		assert_true(fd >= 0);
		if (mnt(fd, base) != 0)
			fail_msg("MNT %s from %s refused", base, host);
		close(fd);
		snprintf(last, sizeof last, "%s", host);
	}
	assert_int_equal(rn_counter_must(t->port, "mount_list_entries"), BOUND);
	assert_true(rn_counter_must(t->port, "mount_list_dropped") - dropped0 >= CLIENTS - BOUND);
	int tcp = raw_connect(t->mount_port, NULL), udp = rl_udp_connect(t->mount_port, NULL);
	assert_true(tcp >= 0 && udp >= 0);
	for (int round = 0; round < 2; round++) {
		int n = dump(round ? udp : tcp, e, BOUND, &len);
		if (n < 0)
			fail_msg("DUMP over %s of %d entries: no well-formed answer", round ? "UDP" : "TCP",
			         BOUND);
		/* as many as fit 60 KiB, each ~60 bytes here: most of them, never more than held */
		assert_true(n >= 800 && n <= BOUND);
		assert_true(len <= 65536);
		assert_string_equal(e[0].host, last);
		assert_string_equal(e[0].dir, base);
	}
	close(tcp);
	close(udp);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_entry_per_spelling),
		cmocka_unit_test(test_bound_and_dump),
	};
	it_server_conf_extra = "mount_list_entries = 2000\n";
	return RL_MAIN("integration-mountlist", tests);
}
