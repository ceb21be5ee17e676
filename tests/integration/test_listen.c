/* SPDX-License-Identifier: GPL-2.0-or-later */
/* listen with several addresses, IPv4 and IPv6: the NFS and MOUNT ports answer on each. */
#include "client.h"
#include "rawnfs.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int connect_v6(uint16_t port)
{
	struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port),
				 .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	int fd = socket(AF_INET6, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void null_ok(int fd, uint32_t prog)
{
	struct xb b = {0}, cred = {0};
	struct raw_reply r;
	static uint8_t buf[4096];
	xb_auth_sys(&cred, 0, 0);
	xb_call(&b, 0x11570000u + prog, 2, prog, 3, 0, RAW_AUTH_SYS, &cred);
	assert_int_equal(raw_call(fd, &b, buf, sizeof buf, &r), 0);
	assert_int_equal(r.reply_stat, 0);
	assert_int_equal(r.accept_stat, 0);
}

static void test_both_families_serve(void **state)
{
	struct itest *t = *state;
	uint16_t ports[2] = {t->port, t->mount_port};
	for (int i = 0; i < 2; i++) {
		int v4 = raw_connect(ports[i], NULL), v6 = connect_v6(ports[i]);
		assert_true(v4 >= 0);
		assert_true(v6 >= 0);
		null_ok(v4, i ? 100005 : 100003);
		null_ok(v6, i ? 100005 : 100003);
		close(v4);
		close(v6);
	}
	/* and a real call over IPv6: the export admits ::1 too */
	int fd = connect_v6(t->port);
	struct rn_fh root;
	assert_int_equal(rn_mnt(fd, t->exports[EXP_SUBTREE], &root), MNT3ERR_ACCES);   /* 127.0.0.1 only */
	close(fd);
}

int main(int argc, char **argv)
{
	it_server_conf_extra = "listen = 127.0.0.1 ::1\n";
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_both_families_serve),
	};
	return IT_MAIN("listen addresses", tests);
}
