/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Bad input over a raw TCP socket: random bytes, truncated and oversized records, a valid call
 * cut at every length, fragments of length 0 and 2^31 - 1, 16 MiB of garbage, calls with a
 * wrong program, version, procedure, RPC version, auth flavor or arguments. Each gets the reply
 * RFC 5531 prescribes (or the connection is closed), the connection stays usable where it
 * should, and afterwards the daemon is still up and serves the next libnfs client. */
#include "client.h"
#include "rawnfs.h"
#include "rawrpc.h"

#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define PROG_UNAVAIL 1
#define PROG_MISMATCH 2
#define PROC_UNAVAIL 3
#define GARBAGE_ARGS 4
#define MSG_ACCEPTED 0
#define MSG_DENIED 1
#define REJ_RPC_MISMATCH 0
#define REJ_AUTH_ERROR 1
#define AUTH_BADCRED_ 1
#define AUTH_TOOWEAK_ 5

static uint8_t reply_buf[1 << 20];

static int conn(struct itest *t, uint16_t port)
{
	int fd = raw_connect(port, NULL);
	struct timeval tv = { 5, 0 };

	assert_true(fd >= 0);
	/* a server that stops reading must not hang the test */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	(void)t;
	return fd;
}

static void call_root(struct xb *b, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc)
{
	struct xb cred = { .len = 0 };

	xb_auth_sys(&cred, 0, 0);
	xb_call(b, xid, 2, prog, vers, proc, RAW_AUTH_SYS, &cred);
}

static struct raw_reply call(int fd, const struct xb *b)
{
	struct raw_reply r;

	if (raw_call(fd, b, reply_buf, sizeof(reply_buf), &r) != 0)
		fail_msg("no well-formed reply with xid 0x%08x", get_u32(b->buf));
	return r;
}

/* NULL on this connection answers SUCCESS: the connection survived what came before. */
static void expect_null_ok(int fd, uint32_t prog, uint32_t vers)
{
	struct xb b = { .len = 0 };
	struct raw_reply r;

	call_root(&b, 0x600dd00d, prog, vers, 0);
	r = call(fd, &b);
	assert_int_equal(r.reply_stat, MSG_ACCEPTED);
	assert_int_equal(r.accept_stat, 0);
	assert_int_equal(r.body_len, 0);
}

static void expect_accepted(int fd, const struct xb *b, uint32_t stat)
{
	struct raw_reply r = call(fd, b);

	assert_int_equal(r.reply_stat, MSG_ACCEPTED);
	if (r.accept_stat != stat)
		fail_msg("accept_stat %u, want %u", r.accept_stat, stat);
}

static void test_raw_null(void **state)
{
	struct itest *t = *state;
	int fd = conn(t, t->port);
	struct xb b = { .len = 0 };
	uint8_t frag[4];
	ssize_t n;
	struct raw_reply r;

	expect_null_ok(fd, NFS_PROGRAM, NFS_V3);
	expect_null_ok(fd, MOUNT_PROGRAM, MOUNT_V3);
	/* the same call split into three fragments is one record */
	call_root(&b, 0xf4a9, NFS_PROGRAM, NFS_V3, 0);
	for (size_t off = 0, k = 0; k < 3; k++) {
		size_t len = k < 2 ? 8 : b.len - off;
		uint32_t mark = (uint32_t)len | (k == 2 ? 0x80000000u : 0);
		frag[0] = (uint8_t)(mark >> 24); frag[1] = (uint8_t)(mark >> 16);
		frag[2] = (uint8_t)(mark >> 8); frag[3] = (uint8_t)mark;
		assert_int_equal(raw_send_all(fd, frag, 4), 0);
		assert_int_equal(raw_send_all(fd, b.buf + off, len), 0);
		off += len;
	}
	n = raw_recv_record(fd, reply_buf, sizeof(reply_buf), 5000);
	assert_true(n > 0);
	assert_int_equal(raw_parse_reply(reply_buf, (size_t)n, &r), 0);
	assert_int_equal(r.xid, 0xf4a9);
	assert_int_equal(r.accept_stat, 0);
	close(fd);
	it_assert_served(t);
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Random bytes, raw and inside well-framed records: whatever the server makes of them, it
 * closes the connection once the client has gone and stays up. */
static void test_random_bytes(void **state)
{
	struct itest *t = *state;
	static uint8_t junk[65536];

	for (uint64_t seed = 1; seed <= 16; seed++) {
		uint64_t s = seed * 0x9e3779b97f4a7c15ull;
		int fd = conn(t, seed % 2 ? t->port : t->mount_port);
		size_t len = 64 + xorshift(&s) % (sizeof(junk) - 64);

		for (size_t i = 0; i < len; i++)
			junk[i] = (uint8_t)xorshift(&s);
		if (seed > 8)
			(void)raw_send_record(fd, junk, len % 2000);   /* framed garbage */
		else
			(void)raw_send_all(fd, junk, len);             /* unframed */
		shutdown(fd, SHUT_WR);
		if (!raw_wait_closed(fd, 5000))
			fail_msg("seed %llu: connection still open 5 s after the client closed its side",
			         (unsigned long long)seed);
		close(fd);
		assert_true(it_alive(t));
	}
	it_assert_served(t);
}

static void test_truncated_records(void **state)
{
	struct itest *t = *state;
	struct xb b = { .len = 0 };
	int fd;

	/* the mark promises 200 bytes, 50 come, then the client is gone */
	fd = conn(t, t->port);
	call_root(&b, 0x7701, NFS_PROGRAM, NFS_V3, 1);
	xb_opaque(&b, "0123456789012345678901234567890123456789", 40);
	assert_int_equal(raw_send_all(fd, (const uint8_t *)"\x80\x00\x00\xc8", 4), 0);
	assert_int_equal(raw_send_all(fd, b.buf, 50), 0);
	close(fd);
	/* half a record mark */
	fd = conn(t, t->mount_port);
	assert_int_equal(raw_send_all(fd, (const uint8_t *)"\x80\x00", 2), 0);
	close(fd);
	/* a first fragment, then nothing */
	fd = conn(t, t->port);
	assert_int_equal(raw_send_all(fd, (const uint8_t *)"\x00\x00\x00\x08", 4), 0);
	assert_int_equal(raw_send_all(fd, b.buf, 8), 0);
	close(fd);
	it_assert_served(t);
}

/* A fragment header of 2 GiB, or fragments adding up past any sane record: the server hangs
 * up instead of waiting for (or allocating) it. */
static void test_huge_records(void **state)
{
	struct itest *t = *state;
	static uint8_t chunk[100000];
	int fd = conn(t, t->port);

	assert_int_equal(raw_send_all(fd, (const uint8_t *)"\xff\xff\xff\xff", 4), 0);
	assert_int_equal(raw_send_all(fd, chunk, 1000), 0);
	if (!raw_wait_closed(fd, 5000))
		fail_msg("a 2 GiB fragment header did not get the connection closed in 5 s");
	close(fd);

	fd = conn(t, t->port);
	assert_int_equal(raw_send_all(fd, (const uint8_t *)"\x7f\xff\xff\xff", 4), 0);
	if (!raw_wait_closed(fd, 5000))
		fail_msg("a 2 GiB non-last fragment header did not get the connection closed in 5 s");
	close(fd);

	/* 100 KB fragments, never the last: 64 of them are 6.4 MB */
	fd = conn(t, t->port);
	for (int i = 0; i < 64; i++) {
		uint8_t mark[4] = { 0x00, 0x01, 0x86, 0xa0 };   /* 100000, not last */
		if (raw_send_all(fd, mark, 4) < 0 || raw_send_all(fd, chunk, sizeof(chunk)) < 0)
			break;                                       /* already hung up on */
	}
	if (!raw_wait_closed(fd, 5000))
		fail_msg("6.4 MB of fragments without an end did not get the connection closed");
	close(fd);
	it_assert_served(t);
}

static void test_bad_program(void **state)
{
	struct itest *t = *state;
	int fd = conn(t, t->port);
	struct xb b = { .len = 0 };

	call_root(&b, 0xb001, 100099, 1, 0);
	expect_accepted(fd, &b, PROG_UNAVAIL);
	b.len = 0;
	call_root(&b, 0xb002, 100000, 2, 3);    /* rpcbind: not served here */
	expect_accepted(fd, &b, PROG_UNAVAIL);
	expect_null_ok(fd, NFS_PROGRAM, NFS_V3);
	close(fd);
	it_assert_served(t);
}

static void expect_mismatch(int fd, uint32_t prog, uint32_t vers, uint32_t served)
{
	struct xb b = { .len = 0 };
	struct raw_reply r;

	call_root(&b, 0xc000 + vers, prog, vers, 0);
	r = call(fd, &b);
	assert_int_equal(r.reply_stat, MSG_ACCEPTED);
	assert_int_equal(r.accept_stat, PROG_MISMATCH);
	if (!(r.low <= served && served <= r.high) || (r.low <= vers && vers <= r.high))
		fail_msg("program %u version %u: PROG_MISMATCH says %u..%u", prog, vers, r.low, r.high);
}

static void test_bad_version(void **state)
{
	struct itest *t = *state;
	int fd = conn(t, t->port);

	expect_mismatch(fd, NFS_PROGRAM, 2, 3);
	expect_mismatch(fd, NFS_PROGRAM, 4, 3);
	expect_mismatch(fd, MOUNT_PROGRAM, 4, 3);
	expect_null_ok(fd, NFS_PROGRAM, NFS_V3);
	close(fd);
	it_assert_served(t);
}

static void test_bad_procedure(void **state)
{
	struct itest *t = *state;
	int fd = conn(t, t->port);
	struct xb b = { .len = 0 };

	call_root(&b, 0xd001, NFS_PROGRAM, NFS_V3, 22);
	expect_accepted(fd, &b, PROC_UNAVAIL);
	b.len = 0;
	call_root(&b, 0xd002, NFS_PROGRAM, NFS_V3, 0x7fffffff);
	expect_accepted(fd, &b, PROC_UNAVAIL);
	b.len = 0;
	call_root(&b, 0xd003, MOUNT_PROGRAM, MOUNT_V3, 6);
	expect_accepted(fd, &b, PROC_UNAVAIL);
	expect_null_ok(fd, NFS_PROGRAM, NFS_V3);
	close(fd);
	it_assert_served(t);
}

static void test_rpc_version(void **state)
{
	struct itest *t = *state;
	int fd = conn(t, t->port);
	struct xb b = { .len = 0 };
	struct raw_reply r;

	xb_call(&b, 0xe003, 3, NFS_PROGRAM, NFS_V3, 0, RAW_AUTH_NONE, NULL);
	r = call(fd, &b);
	assert_int_equal(r.reply_stat, MSG_DENIED);
	assert_int_equal(r.reject_stat, REJ_RPC_MISMATCH);
	assert_int_equal(r.low, 2);
	assert_int_equal(r.high, 2);
	expect_null_ok(fd, NFS_PROGRAM, NFS_V3);
	close(fd);
	it_assert_served(t);
}

static void expect_auth_error(int fd, uint32_t xid, uint32_t flavor, const struct xb *cred)
{
	struct xb b = { .len = 0 };
	struct raw_reply r;

	xb_call(&b, xid, 2, NFS_PROGRAM, NFS_V3, 1, flavor, cred);
	xb_opaque(&b, "handle", 6);
	r = call(fd, &b);
	if (r.reply_stat != MSG_DENIED || r.reject_stat != REJ_AUTH_ERROR ||
	    (r.auth_stat != AUTH_BADCRED_ && r.auth_stat != AUTH_TOOWEAK_))
		fail_msg("flavor %u: reply_stat %u reject_stat %u auth_stat %u, want MSG_DENIED "
		         "AUTH_ERROR with AUTH_BADCRED or AUTH_TOOWEAK", flavor, r.reply_stat,
		         r.reject_stat, r.auth_stat);
}

static void test_auth_flavors(void **state)
{
	struct itest *t = *state;
	int fd = conn(t, t->port);
	struct xb gss = { .len = 0 }, bad_sys = { .len = 0 };

	/* RPCSEC_GSS v1: DATA, seq 1, service none, a context handle nobody established */
	xb_u32(&gss, 1);
	xb_u32(&gss, 0);
	xb_u32(&gss, 1);
	xb_u32(&gss, 1);
	xb_opaque(&gss, "ctx!", 4);
	expect_auth_error(fd, 0xa006, RAW_RPCSEC_GSS, &gss);
	expect_auth_error(fd, 0xa003, 3, &gss);              /* AUTH_DH */
	/* AUTH_SYS whose machine name claims 1000 bytes */
	xb_u32(&bad_sys, 0);
	xb_u32(&bad_sys, 1000);
	xb_bytes(&bad_sys, "short", 5);
	expect_auth_error(fd, 0xa001, RAW_AUTH_SYS, &bad_sys);
	expect_null_ok(fd, NFS_PROGRAM, NFS_V3);
	close(fd);
	it_assert_served(t);
}

static void test_garbage_args(void **state)
{
	struct itest *t = *state;
	int fd = conn(t, t->port);
	struct xb b = { .len = 0 };
	uint8_t big[100] = { 0 };

	call_root(&b, 0x9001, NFS_PROGRAM, NFS_V3, 1);          /* GETATTR, no handle at all */
	expect_accepted(fd, &b, GARBAGE_ARGS);
	b.len = 0;
	call_root(&b, 0x9002, NFS_PROGRAM, NFS_V3, 1);          /* a 65-byte handle */
	xb_opaque(&b, big, 65);
	expect_accepted(fd, &b, GARBAGE_ARGS);
	b.len = 0;
	call_root(&b, 0x9003, NFS_PROGRAM, NFS_V3, 3);          /* LOOKUP, name of 4 GiB - 1 */
	xb_opaque(&b, big, 8);
	xb_u32(&b, 0xffffffffu);
	expect_accepted(fd, &b, GARBAGE_ARGS);
	b.len = 0;
	call_root(&b, 0x9004, NFS_PROGRAM, NFS_V3, 7);          /* WRITE, data shorter than said */
	xb_opaque(&b, big, 8);
	xb_u64(&b, 0);
	xb_u32(&b, 1000);
	xb_u32(&b, 2);
	xb_u32(&b, 1000);
	xb_bytes(&b, big, 100);
	expect_accepted(fd, &b, GARBAGE_ARGS);
	b.len = 0;
	call_root(&b, 0x9005, MOUNT_PROGRAM, MOUNT_V3, 1);      /* MNT, path cut short */
	xb_u32(&b, 500);
	xb_bytes(&b, "/tmp", 4);
	expect_accepted(fd, &b, GARBAGE_ARGS);
	expect_null_ok(fd, NFS_PROGRAM, NFS_V3);
	close(fd);
	it_assert_served(t);
}

/* A REPLY sent to the server is not a call: it gets no answer; the server either goes on
 * with the next call or hangs up, but does not hang or answer it. */
static void test_not_a_call(void **state)
{
	struct itest *t = *state;
	int fd = conn(t, t->port);
	struct xb b = { .len = 0 }, null = { .len = 0 };
	struct raw_reply r;
	ssize_t n;

	xb_u32(&b, 0x5eed);
	xb_u32(&b, 1);          /* REPLY */
	xb_u32(&b, 0);
	xb_u32(&b, 0);
	xb_u32(&b, 0);
	xb_u32(&b, 0);
	assert_int_equal(raw_send_record(fd, b.buf, b.len), 0);
	call_root(&null, 0x600dd00d, NFS_PROGRAM, NFS_V3, 0);
	if (raw_send_record(fd, null.buf, null.len) == 0) {
		n = raw_recv_record(fd, reply_buf, sizeof(reply_buf), 5000);
		if (n == -2)
			fail_msg("no answer to NULL and no hang-up within 5 s after a stray REPLY");
		if (n > 0) {
			assert_int_equal(raw_parse_reply(reply_buf, (size_t)n, &r), 0);
			assert_int_equal(r.xid, 0x600dd00d);
			assert_int_equal(r.accept_stat, 0);
		}
	}
	close(fd);
	it_assert_served(t);
}

/* A valid CREATE (a real directory handle) cut at every length: as a whole record of that
 * length, each gets GARBAGE_ARGS or an RPC-level refusal, or no answer (a header too short to
 * answer), never a hang-up that takes the next call with it unnoticed, and none runs (the
 * file does not appear). Then the same cuts as a record whose mark promised the whole call,
 * the client leaving after the cut. */
static void test_every_truncation(void **state)
{
	struct itest *t = *state;
	struct rn_fh root;
	struct xb b = { .len = 0 };
	int fd = conn(t, t->port);

	assert_int_equal(rn_mnt(fd, t->exports[EXP_RW], &root), 0);
	call_root(&b, 0x7700, NFS_PROGRAM, NFS_V3, 8);
	xb_opaque(&b, root.data, root.len);
	xb_string(&b, "cut-short");
	xb_u32(&b, 1);                       /* GUARDED */
	for (int i = 0; i < 6; i++)
		xb_u32(&b, 0);
	for (size_t k = 0; k < b.len; k++) {
		struct xb null = { .len = 0 };
		struct raw_reply r;
		uint32_t want = 0x600d0000u + (uint32_t)k;

		if (raw_send_record(fd, b.buf, k) < 0) {
			close(fd);                   /* hung up on: a new connection goes on */
			fd = conn(t, t->port);
			continue;
		}
		call_root(&null, want, NFS_PROGRAM, NFS_V3, 0);
		if (raw_send_record(fd, null.buf, null.len) < 0) {
			close(fd);
			fd = conn(t, t->port);
			continue;
		}
		for (;;) {                           /* maybe a refusal first, then NULL's reply */
			ssize_t n = raw_recv_record(fd, reply_buf, sizeof(reply_buf), 5000);
			if (n == -2)
				fail_msg("cut at %zu: no reply and no hang-up in 5 s", k);
			if (n < 0) {
				close(fd);
				fd = conn(t, t->port);
				break;
			}
			assert_int_equal(raw_parse_reply(reply_buf, (size_t)n, &r), 0);
			if (r.xid == want) {
				assert_int_equal(r.accept_stat, 0);
				break;
			}
			assert_int_equal(r.xid, 0x7700);
			assert_true(r.reply_stat != 0 || r.accept_stat != 0);   /* refused, never run */
		}
	}
	close(fd);
	for (size_t k = 0; k < b.len; k += 7) {
		uint8_t mark[4] = { 0x80, 0, (uint8_t)(b.len >> 8), (uint8_t)b.len };
		fd = conn(t, t->port);
		assert_int_equal(raw_send_all(fd, mark, 4), 0);
		assert_int_equal(raw_send_all(fd, b.buf, k), 0);
		close(fd);
	}
	char path[PATH_MAX + 64];
	it_path(t, EXP_RW, "cut-short", path, sizeof(path));
	assert_int_not_equal(access(path, F_OK), 0);
	assert_true(it_alive(t));
	it_assert_served(t);
}

/* Fragments of length 0: an empty first fragment before the call is no harm (RFC 5531 allows
 * any split); an empty record on its own is answered by nothing and the connection goes on or
 * is closed; a header of 2^31 - 1 for a last fragment is refused (past max_record). */
static void test_zero_and_max_fragments(void **state)
{
	struct itest *t = *state;
	struct xb null = { .len = 0 };
	struct raw_reply r;
	uint8_t rec[4 + 4 + sizeof(null.buf)];
	int fd = conn(t, t->port);

	call_root(&null, 0x2e10, NFS_PROGRAM, NFS_V3, 0);
	memcpy(rec, "\x00\x00\x00\x00", 4);              /* empty, not last */
	rec[4] = 0x80, rec[5] = 0, rec[6] = (uint8_t)(null.len >> 8), rec[7] = (uint8_t)null.len;
	memcpy(rec + 8, null.buf, null.len);
	assert_int_equal(raw_send_all(fd, rec, 8 + null.len), 0);
	ssize_t n = raw_recv_record(fd, reply_buf, sizeof(reply_buf), 5000);
	assert_true(n > 0);
	assert_int_equal(raw_parse_reply(reply_buf, (size_t)n, &r), 0);
	assert_int_equal(r.xid, 0x2e10);
	assert_int_equal(r.accept_stat, 0);

	assert_int_equal(raw_send_all(fd, "\x80\x00\x00\x00", 4), 0);   /* an empty record */
	if (raw_send_record(fd, null.buf, null.len) == 0) {
		n = raw_recv_record(fd, reply_buf, sizeof(reply_buf), 5000);
		if (n == -2)
			fail_msg("an empty record left the connection hanging");
		if (n > 0) {
			assert_int_equal(raw_parse_reply(reply_buf, (size_t)n, &r), 0);
			assert_int_equal(r.xid, 0x2e10);
		}
	}
	close(fd);

	fd = conn(t, t->port);
	assert_int_equal(raw_send_all(fd, "\xff\xff\xff\xff", 4), 0);   /* last, 2^31 - 1 */
	if (!raw_wait_closed(fd, 5000))
		fail_msg("a 2^31 - 1 byte record was not refused");
	close(fd);
	it_assert_served(t);
}

/* 16 MiB of garbage: unframed on one connection (its first bytes read as an absurd record
 * mark: closed), and as sixteen well-framed 1 MiB records of random bytes on another (each
 * refused or ignored without taking the daemon's memory with it). */
static void test_16mib_of_garbage(void **state)
{
	struct itest *t = *state;
	static uint8_t junk[1 << 20];
	uint64_t s = 0x16;

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)xorshift(&s);
	junk[0] |= 0x40;                                  /* a mark past any max_record */
	int fd = conn(t, t->port);
	for (int i = 0; i < 16; i++)
		if (raw_send_all(fd, junk, sizeof(junk)) < 0)
			break;                                /* hung up on, as it should */
	if (!raw_wait_closed(fd, 5000))
		fail_msg("16 MiB of unframed garbage did not get the connection closed");
	close(fd);

	fd = conn(t, t->port);
	for (int i = 0; i < 16; i++) {
		junk[0] = (uint8_t)xorshift(&s);
		if (raw_send_record(fd, junk, sizeof(junk) - 8) < 0)
			break;
	}
	shutdown(fd, SHUT_WR);
	if (!raw_wait_closed(fd, 10000))
		fail_msg("16 framed MiB of garbage: connection still open 10 s after the client left");
	close(fd);
	assert_true(it_alive(t));
	it_assert_served(t);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_raw_null),
		cmocka_unit_test(test_random_bytes),
		cmocka_unit_test(test_truncated_records),
		cmocka_unit_test(test_huge_records),
		cmocka_unit_test(test_bad_program),
		cmocka_unit_test(test_bad_version),
		cmocka_unit_test(test_bad_procedure),
		cmocka_unit_test(test_rpc_version),
		cmocka_unit_test(test_auth_flavors),
		cmocka_unit_test(test_garbage_args),
		cmocka_unit_test(test_not_a_call),
		cmocka_unit_test(test_every_truncation),
		cmocka_unit_test(test_zero_and_max_fragments),
		cmocka_unit_test(test_16mib_of_garbage),
	};
	return IT_MAIN("integration-badinput", tests);
}
