/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "rawbig.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define NFS_PROG 100003
#define NFSPROC3_WRITE 7

size_t rb_write_args(uint8_t *out, size_t cap, uint32_t xid, const struct rn_fh *fh, uint64_t off,
                     uint32_t len)
{
	struct xb b = {0}, cred = {0};
	xb_auth_sys(&cred, 0, 0);
	xb_call(&b, xid, 2, NFS_PROG, 3, NFSPROC3_WRITE, RAW_AUTH_SYS, &cred);
	xb_opaque(&b, fh->data, fh->len);
	xb_u64(&b, off);
	xb_u32(&b, len);
	xb_u32(&b, RN_UNSTABLE);
	xb_u32(&b, len);              /* the payload's opaque length; its bytes follow */
	if (b.len > cap)
		return 0;
	memcpy(out, b.buf, b.len);
	return b.len;
}

size_t rb_write_head(uint8_t *out, size_t cap, uint32_t xid, const struct rn_fh *fh, uint64_t off,
                     uint32_t len)
{
	if (cap < 4)
		return 0;
	size_t n = rb_write_args(out + 4, cap - 4, xid, fh, off, len);
	uint32_t mark = htonl(0x80000000u | (uint32_t)(n + len));
	memcpy(out, &mark, 4);
	return n ? 4 + n : 0;
}

long long rb_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

size_t rb_send_until(int fd, const void *p, size_t len, long long deadline_ms)
{
	const uint8_t *q = p;
	size_t sent = 0;
	while (sent < len) {
		long long left = deadline_ms - rb_now_ms();
		struct pollfd pf = {fd, POLLOUT, 0};
		if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
			break;
		ssize_t n = send(fd, q + sent, len - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			break;
		if (n > 0)
			sent += (size_t)n;
	}
	return sent;
}

int rb_send_by(int fd, const void *p, size_t len, long long deadline_ms)
{
	return rb_send_until(fd, p, len, deadline_ms) == len ? 0 : -1;
}

int rb_write_reply(int fd, uint32_t xid, uint32_t len, int timeout_ms)
{
	static uint8_t reply[64 << 10];
	ssize_t got = raw_recv_record(fd, reply, sizeof reply, timeout_ms > 0 ? timeout_ms : 1);
	if (got == -2)
		return -2;
	struct raw_reply r;
	uint32_t count, committed;
	if (got < 0 || raw_parse_reply(reply, (size_t)got, &r) < 0 || r.xid != xid)
		return -1;
	int st = rn_dec_write(&r, &count, &committed);
	return st == 0 && count != len ? -1 : st;
}

int rb_write(int fd, uint32_t xid, const struct rn_fh *fh, uint64_t off, const void *data,
             uint32_t len, int timeout_ms)
{
	uint8_t head[512];
	long long deadline = rb_now_ms() + timeout_ms;
	size_t n = rb_write_head(head, sizeof head, xid, fh, off, len);
	if (!n)
		return -1;
	if (rb_send_by(fd, head, n, deadline) < 0 || rb_send_by(fd, data, len, deadline) < 0)
		return -2;
	return rb_write_reply(fd, xid, len, (int)(deadline - rb_now_ms()));
}

long rb_cpu_ticks(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	long ut = -1, st = -1;
	if (f) {
		/* fields 14 and 15: utime, stime (after "pid (comm) state"; comm has no spaces) */
		if (fscanf(f, "%*d %*s %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld", &ut, &st) != 2)
			ut = st = -1;
		fclose(f);
	}
	return ut < 0 ? -1 : ut + st;
}
