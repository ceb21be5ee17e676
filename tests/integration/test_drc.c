/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The duplicate request cache, as a Linux client meets it: after a timeout it sends the same
 * call again (same xid) on the same connection, or, after a reconnect, on a new connection from
 * the same source port. Each non-idempotent procedure must then get the original reply, byte for
 * byte (run twice, REMOVE would answer NOENT, MKDIR EXIST, and every reply's wcc_data would
 * differ), a copy that arrives while the original still runs must be dropped rather than run
 * again (checked for each procedure), and a new xid must run. */
#include "client.h"
#include "rawnfs.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define NFS_PROG 100003
enum { P_SETATTR = 2, P_LOOKUP = 3, P_WRITE = 7, P_CREATE = 8, P_MKDIR = 9, P_SYMLINK = 10,
       P_MKNOD = 11, P_REMOVE = 12, P_RMDIR = 13, P_RENAME = 14, P_LINK = 15 };

static uint8_t rbuf[3][65536];
static uint32_t next_xid = 0x0d0c0000;

/* ---- connections ---- */

static uint16_t local_port(int fd)
{
	struct sockaddr_in a;
	socklen_t n = sizeof a;
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &n), 0);
	return ntohs(a.sin_port);
}

/* From 127.0.0.1:src (0: any port), as a client reconnecting from its old port does. */
static int connect_from(uint16_t port, uint16_t src)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_in from = {.sin_family = AF_INET, .sin_port = htons(src),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	assert_int_equal(bind(fd, (struct sockaddr *)&from, sizeof from), 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&to, sizeof to), 0);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}

/* A reset rather than a FIN: no TIME_WAIT, so the port can be bound again at once. */
static void reset_close(int fd)
{
	struct linger l = {1, 0};
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
	close(fd);
}

/* ---- calls ---- */

static void call_hdr(struct xb *b, uint32_t xid, uint32_t proc)
{
	struct xb cred = {0};
	xb_auth_sys(&cred, 0, 0);
	b->len = 0;
	xb_call(b, xid, 2, NFS_PROG, 3, proc, RAW_AUTH_SYS, &cred);
}

static void put_fh(struct xb *b, const struct rn_fh *fh)
{
	xb_opaque(b, fh->data, fh->len);
}

static void put_dirop(struct xb *b, const struct rn_fh *dir, const char *name)
{
	put_fh(b, dir);
	xb_string(b, name);
}

static void put_sattr(struct xb *b, int mode)
{
	if (mode >= 0) {
		xb_u32(b, 1);
		xb_u32(b, (uint32_t)mode);
	} else {
		xb_u32(b, 0);
	}
	for (int i = 0; i < 5; i++)
		xb_u32(b, 0);        /* uid, gid, size, atime, mtime: not set */
}

/* Send b and receive one reply record into out: its length. */
static size_t exchange(int fd, const struct xb *b, uint8_t *out)
{
	assert_int_equal(raw_send_record(fd, b->buf, b->len), 0);
	ssize_t n = raw_recv_record(fd, out, sizeof rbuf[0], 5000);
	if (n < 12)
		fail_msg("no reply to xid %08x (%zd)", get_u32(b->buf), n);
	assert_int_equal(get_u32(out), get_u32(b->buf));
	return (size_t)n;
}

static uint32_t status_of(const uint8_t *rec, size_t len)
{
	struct raw_reply r;
	assert_int_equal(raw_parse_reply(rec, len, &r), 0);
	assert_int_equal(r.reply_stat, 0);
	assert_int_equal(r.accept_stat, 0);
	assert_true(r.body_len >= 4);
	return get_u32(r.body);
}

static struct rn_fh lookup(int fd, const struct rn_fh *dir, const char *name)
{
	struct rn_fh fh;
	assert_int_equal(rn_lookup(fd, dir, name, &fh), 0);
	return fh;
}

static struct rn_fh export_root(int fd, const struct itest *t)
{
	struct rn_fh root;
	assert_int_equal(rn_mnt(fd, t->exports[EXP_RW], &root), 0);
	return root;
}

/* ---- the check every procedure gets ---- */

/* Send b twice in one segment: the copy is read while the original waits for the file system
 * (every one of these procedures does), so it must be dropped, not run: one reply, and the
 * server's counter of dropped copies goes up by one. Its length. */
static size_t send_twice(const struct itest *t, int fd, const struct xb *b, uint8_t *out)
{
	static uint8_t two[2 * (sizeof b->buf + 4)];
	uint32_t mark = htonl(0x80000000u | (uint32_t)b->len);
	memcpy(two, &mark, 4);
	memcpy(two + 4, b->buf, b->len);
	memcpy(two + 4 + b->len, &mark, 4);
	memcpy(two + 8 + b->len, b->buf, b->len);
	uint64_t drops = rn_counter_must(t->port, "drc_inprogress_drops");
	assert_int_equal(raw_send_all(fd, two, 8 + 2 * b->len), 0);
	ssize_t n = raw_recv_record(fd, out, sizeof rbuf[0], 5000);
	if (n < 12)
		fail_msg("no reply to xid %08x (%zd)", get_u32(b->buf), n);
	assert_int_equal(raw_recv_record(fd, rbuf[2], sizeof rbuf[2], 300), -2);   /* no second */
	assert_int_equal(rn_counter_must(t->port, "drc_inprogress_drops"), drops + 1);
	return (size_t)n;
}

/* b is a call whose first run answers want, and whose copy sent right behind it is dropped;
 * its retransmissions on the same connection and from the same port after a reconnect get the
 * same bytes; a second run under a new xid answers rerun (what the procedure says when it
 * finds its own work done). */
static void expect_replayed(const struct itest *t, struct xb *b, uint32_t want, int rerun)
{
	int fd = connect_from(t->port, 0);
	uint16_t port = local_port(fd);
	size_t n0 = send_twice(t, fd, b, rbuf[0]);
	assert_int_equal(status_of(rbuf[0], n0), want);

	size_t n1 = exchange(fd, b, rbuf[1]);           /* same connection */
	assert_int_equal(n1, n0);
	assert_memory_equal(rbuf[1], rbuf[0], n0);

	reset_close(fd);                                 /* reconnect from the same port */
	fd = connect_from(t->port, port);
	size_t n2 = exchange(fd, b, rbuf[2]);
	assert_int_equal(n2, n0);
	assert_memory_equal(rbuf[2], rbuf[0], n0);

	if (rerun >= 0) {                                /* a new xid is a new call: it runs */
		uint32_t xid = next_xid++;
		b->buf[0] = (uint8_t)(xid >> 24), b->buf[1] = (uint8_t)(xid >> 16);
		b->buf[2] = (uint8_t)(xid >> 8), b->buf[3] = (uint8_t)xid;
		size_t n3 = exchange(fd, b, rbuf[1]);
		assert_int_equal(status_of(rbuf[1], n3), (uint32_t)rerun);
	}
	close(fd);
}

static bool exists(const struct itest *t, const char *rel)
{
	char path[PATH_MAX + 64];
	struct stat sb;
	it_path(t, EXP_RW, rel, path, sizeof path);
	return lstat(path, &sb) == 0;
}

static void mkdir_rel(const struct itest *t, const char *rel)
{
	char path[PATH_MAX + 64];
	it_path(t, EXP_RW, rel, path, sizeof path);
	assert_int_equal(mkdir(path, 0755), 0);
}

/* ---- one test per procedure ---- */

static void test_remove(void **state)
{
	struct itest *t = *state;
	it_write_file(t, EXP_RW, "drc-rm", "x", 1, 0644);
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root = export_root(fd, t);
	close(fd);
	struct xb b;
	call_hdr(&b, next_xid++, P_REMOVE);
	put_dirop(&b, &root, "drc-rm");
	expect_replayed(t, &b, NFS3_OK, NFS3ERR_NOENT);
	assert_false(exists(t, "drc-rm"));
}

static void test_mkdir(void **state)
{
	struct itest *t = *state;
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root = export_root(fd, t);
	close(fd);
	struct xb b;
	call_hdr(&b, next_xid++, P_MKDIR);
	put_dirop(&b, &root, "drc-dir");
	put_sattr(&b, 0755);
	expect_replayed(t, &b, NFS3_OK, NFS3ERR_EXIST);
	assert_true(exists(t, "drc-dir"));
}

static void test_rmdir(void **state)
{
	struct itest *t = *state;
	mkdir_rel(t, "drc-rmdir");
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root = export_root(fd, t);
	close(fd);
	struct xb b;
	call_hdr(&b, next_xid++, P_RMDIR);
	put_dirop(&b, &root, "drc-rmdir");
	expect_replayed(t, &b, NFS3_OK, NFS3ERR_NOENT);
	assert_false(exists(t, "drc-rmdir"));
}

static void test_rename(void **state)
{
	struct itest *t = *state;
	it_write_file(t, EXP_RW, "drc-from", "x", 1, 0644);
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root = export_root(fd, t);
	close(fd);
	struct xb b;
	call_hdr(&b, next_xid++, P_RENAME);
	put_dirop(&b, &root, "drc-from");
	put_dirop(&b, &root, "drc-to");
	expect_replayed(t, &b, NFS3_OK, NFS3ERR_NOENT);
	assert_false(exists(t, "drc-from"));
	assert_true(exists(t, "drc-to"));
}

static void test_create_guarded(void **state)
{
	struct itest *t = *state;
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root = export_root(fd, t);
	close(fd);
	struct xb b;
	call_hdr(&b, next_xid++, P_CREATE);
	put_dirop(&b, &root, "drc-new");
	xb_u32(&b, 1);                 /* GUARDED */
	put_sattr(&b, 0644);
	expect_replayed(t, &b, NFS3_OK, NFS3ERR_EXIST);
	assert_true(exists(t, "drc-new"));
}

static void test_symlink(void **state)
{
	struct itest *t = *state;
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root = export_root(fd, t);
	close(fd);
	struct xb b;
	call_hdr(&b, next_xid++, P_SYMLINK);
	put_dirop(&b, &root, "drc-link");
	put_sattr(&b, -1);
	xb_string(&b, "target");
	expect_replayed(t, &b, NFS3_OK, NFS3ERR_EXIST);
	assert_true(exists(t, "drc-link"));
}

static void test_mknod_fifo(void **state)
{
	struct itest *t = *state;
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root = export_root(fd, t);
	close(fd);
	struct xb b;
	call_hdr(&b, next_xid++, P_MKNOD);
	put_dirop(&b, &root, "drc-fifo");
	xb_u32(&b, 7);                 /* NF3FIFO */
	put_sattr(&b, 0644);
	expect_replayed(t, &b, NFS3_OK, NFS3ERR_EXIST);
	assert_true(exists(t, "drc-fifo"));
}

static void test_link(void **state)
{
	struct itest *t = *state;
	it_write_file(t, EXP_RW, "drc-orig", "x", 1, 0644);
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root = export_root(fd, t);
	struct rn_fh file = lookup(fd, &root, "drc-orig");
	close(fd);
	struct xb b;
	call_hdr(&b, next_xid++, P_LINK);
	put_fh(&b, &file);
	put_dirop(&b, &root, "drc-hard");
	expect_replayed(t, &b, NFS3_OK, NFS3ERR_EXIST);
	assert_true(exists(t, "drc-hard"));
}

/* Run again, SETATTR and WRITE would succeed too, but with other wcc_data (the ctime moves): the
 * byte-for-byte comparison is the check. */
static void test_setattr(void **state)
{
	struct itest *t = *state;
	it_write_file(t, EXP_RW, "drc-attr", "x", 1, 0644);
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root = export_root(fd, t);
	struct rn_fh file = lookup(fd, &root, "drc-attr");
	close(fd);
	struct xb b;
	call_hdr(&b, next_xid++, P_SETATTR);
	put_fh(&b, &file);
	put_sattr(&b, 0600);
	xb_u32(&b, 0);                 /* no guard */
	usleep(20 * 1000);             /* so that a second run would show another ctime */
	expect_replayed(t, &b, NFS3_OK, -1);
}

static void test_write(void **state)
{
	struct itest *t = *state;
	it_write_file(t, EXP_RW, "drc-write", "", 0, 0644);
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root = export_root(fd, t);
	struct rn_fh file = lookup(fd, &root, "drc-write");
	close(fd);
	struct xb b;
	rn_enc_write(&b, next_xid++, &file, 0, "retransmitted", 13, RN_FILE_SYNC);
	usleep(20 * 1000);
	expect_replayed(t, &b, NFS3_OK, -1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remove),
		cmocka_unit_test(test_mkdir),
		cmocka_unit_test(test_rmdir),
		cmocka_unit_test(test_rename),
		cmocka_unit_test(test_create_guarded),
		cmocka_unit_test(test_symlink),
		cmocka_unit_test(test_mknod_fifo),
		cmocka_unit_test(test_link),
		cmocka_unit_test(test_setattr),
		cmocka_unit_test(test_write),
	};
	return IT_MAIN("duplicate request cache", tests);
}
