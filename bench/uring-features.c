/* SPDX-License-Identifier: GPL-2.0-or-later */
/* uring-features: does an io_uring feature pay on this machine, for the way nfsd-uc would use it?
 * Each case runs its two variants back to back, over loopback TCP, and prints one line with the
 * figures (MiB/s or operations/s, and the process's CPU seconds):
 *   send    1 MiB READ-sized payloads from one ring, 8 in flight: IORING_OP_SEND against
 *           IORING_OP_SEND_ZC (zero-copy: the pages are lent to the stack, the buffer comes back
 *           with a notification CQE). A thread of ours receives and discards.
 *   accept  connections accepted by one ring: a fresh IORING_OP_ACCEPT per connection against one
 *           multishot accept. A thread of ours connects and closes, one after another.
 *   files   4 KiB O_DIRECT writes at random aligned offsets of a 64 MiB file in DIR, 32 in
 *           flight: a plain descriptor, a registered (fixed) file, and a fixed file with
 *           registered buffers (WRITE_FIXED), as the O_DIRECT middles of small WRITEs would be.
 * usage: uring-features [send|accept|files|all] [seconds per variant, default 3] [DIR, default .] */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PAYLOAD (1u << 20)
#define INFLIGHT 8

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int listener(uint16_t *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 1024) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		perror("listener");
		exit(2);
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static int connect_to(uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		perror("connect");
		exit(2);
	}
	return fd;
}

/* ---- send ---- */

static void *drain(void *arg)
{
	int fd = *(int *)arg;
	char *buf = malloc(PAYLOAD);
	while (recv(fd, buf, PAYLOAD, 0) > 0)
		;
	free(buf);
	return NULL;
}

/* Bytes sent in `secs` with plain or zero-copy sends of whole buffers. */
static void run_send(bool zc, double secs)
{
	uint16_t port;
	int lfd = listener(&port), cfd = connect_to(port), sfd = accept(lfd, NULL, NULL);
	pthread_t th;
	pthread_create(&th, NULL, drain, &cfd);
	struct io_uring ring;
	if (io_uring_queue_init(64, &ring, 0) < 0)
		exit(2);
	char *bufs[INFLIGHT];
	int busy[INFLIGHT] = {0};   /* CQEs still owed for the buffer (ZC: result + notification) */
	for (int i = 0; i < INFLIGHT; i++) {
		bufs[i] = malloc(PAYLOAD);
		memset(bufs[i], i, PAYLOAD);
	}
	double t0 = now_s(), c0 = cpu_s(), end = t0 + secs;
	uint64_t bytes = 0;
	bool stop = false;
	for (;;) {
		for (int i = 0; i < INFLIGHT && !stop; i++) {
			if (busy[i])
				continue;
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			if (zc)
				io_uring_prep_send_zc(sqe, sfd, bufs[i], PAYLOAD, MSG_WAITALL, 0);
			else
				io_uring_prep_send(sqe, sfd, bufs[i], PAYLOAD, MSG_WAITALL);
			io_uring_sqe_set_data64(sqe, (uint64_t)i);
			busy[i] = zc ? 2 : 1;
		}
		int any = 0;
		for (int i = 0; i < INFLIGHT; i++)
			any += busy[i] != 0;
		if (!any)
			break;
		struct io_uring_cqe *cqe;
		if (io_uring_submit_and_wait(&ring, 1) < 0 || io_uring_peek_cqe(&ring, &cqe) < 0)
			exit(2);
		unsigned head, n = 0;
		io_uring_for_each_cqe(&ring, head, cqe) {
			int i = (int)cqe->user_data;
			if (!(cqe->flags & IORING_CQE_F_NOTIF) && cqe->res > 0)
				bytes += (uint64_t)cqe->res;
			if (!(cqe->flags & IORING_CQE_F_NOTIF) && !(cqe->flags & IORING_CQE_F_MORE) && zc)
				busy[i]--;   /* no notification will follow */
			busy[i]--;
			n++;
		}
		io_uring_cq_advance(&ring, n);
		if (now_s() >= end)
			stop = true;
	}
	double dt = now_s() - t0, dc = cpu_s() - c0;
	printf("send %-9s %8.1f MiB/s  %.2f CPU s/GiB (sender and receiver)\n",
	       zc ? "zerocopy" : "plain", (double)bytes / dt / (1 << 20), dc / ((double)bytes / (1 << 30)));
	shutdown(sfd, SHUT_RDWR);
	close(sfd);
	pthread_join(th, NULL);
	close(cfd);
	close(lfd);
	io_uring_queue_exit(&ring);
	for (int i = 0; i < INFLIGHT; i++)
		free(bufs[i]);
}

/* ---- accept ---- */

struct connector {
	uint16_t port;
	volatile bool stop;
	long made;
};

static void *connector_main(void *arg)
{
	struct connector *c = arg;
	while (!c->stop) {
		int fd = connect_to(c->port);
		close(fd);
		c->made++;
	}
	return NULL;
}

static void run_accept(bool multishot, double secs)
{
	struct connector c = {0};
	int lfd = listener(&c.port);
	struct io_uring ring;
	if (io_uring_queue_init(64, &ring, 0) < 0)
		exit(2);
	pthread_t th;
	pthread_create(&th, NULL, connector_main, &c);
	double t0 = now_s(), c0 = cpu_s(), end = t0 + secs;
	long accepted = 0;
	bool armed = false;
	while (now_s() < end) {
		if (!armed) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			if (multishot)
				io_uring_prep_multishot_accept(sqe, lfd, NULL, NULL, 0);
			else
				io_uring_prep_accept(sqe, lfd, NULL, NULL, 0);
			armed = true;
		}
		struct io_uring_cqe *cqe;
		if (io_uring_submit_and_wait(&ring, 1) < 0)
			exit(2);
		unsigned head, n = 0;
		io_uring_for_each_cqe(&ring, head, cqe) {
			if (cqe->res >= 0) {
				close(cqe->res);
				accepted++;
			}
			if (!(cqe->flags & IORING_CQE_F_MORE))
				armed = false;
			n++;
		}
		io_uring_cq_advance(&ring, n);
	}
	c.stop = true;
	double dt = now_s() - t0, dc = cpu_s() - c0;
	/* Unblock the connector if it waits in connect: the listener stays open until it is done. */
	pthread_join(th, NULL);
	printf("accept %-9s %8.0f connections/s  %.1f CPU us/connection (acceptor and connector)\n",
	       multishot ? "multishot" : "single", (double)accepted / dt, dc / (double)accepted * 1e6);
	io_uring_queue_exit(&ring);
	close(lfd);
}

/* ---- registered files and buffers ---- */

#define FILE_SIZE (64u << 20)
#define WBS 4096
#define WDEPTH 32

enum fvariant { F_PLAIN, F_FIXED, F_FIXED_BUF };

static void run_files(enum fvariant v, double secs, const char *dir)
{
	struct io_uring ring;
	if (io_uring_queue_init(64, &ring, 0) < 0)
		exit(2);
	/* An unnamed file on DIR's file system, gone when closed. */
	int tmp = open(dir, O_TMPFILE | O_RDWR | O_DIRECT, 0600);
	if (tmp < 0) {
		perror("O_TMPFILE|O_DIRECT");
		exit(2);
	}
	if (ftruncate(tmp, FILE_SIZE) < 0)
		exit(2);
	void *mem;
	if (posix_memalign(&mem, WBS, (size_t)WBS * WDEPTH))
		exit(2);
	memset(mem, 7, (size_t)WBS * WDEPTH);
	struct iovec iov[WDEPTH];
	for (int i = 0; i < WDEPTH; i++)
		iov[i] = (struct iovec){(char *)mem + (size_t)i * WBS, WBS};
	if (v != F_PLAIN && io_uring_register_files(&ring, &tmp, 1) < 0)
		exit(2);
	if (v == F_FIXED_BUF && io_uring_register_buffers(&ring, iov, WDEPTH) < 0)
		exit(2);
	unsigned seed = 1;
	long done = 0;
	int inflight = 0;
	double t0 = now_s(), c0 = cpu_s(), end = t0 + secs;
	bool free_slot[WDEPTH];
	memset(free_slot, 1, sizeof free_slot);
	while (now_s() < end || inflight) {
		for (int i = 0; i < WDEPTH && now_s() < end; i++) {
			if (!free_slot[i])
				continue;
			uint64_t off = (uint64_t)(rand_r(&seed) % (FILE_SIZE / WBS)) * WBS;
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			if (v == F_FIXED_BUF)
				io_uring_prep_write_fixed(sqe, 0, iov[i].iov_base, WBS, off, i);
			else
				io_uring_prep_write(sqe, v == F_FIXED ? 0 : tmp, iov[i].iov_base, WBS, off);
			if (v != F_PLAIN)
				sqe->flags |= IOSQE_FIXED_FILE;
			io_uring_sqe_set_data64(sqe, (uint64_t)i);
			free_slot[i] = false;
			inflight++;
		}
		struct io_uring_cqe *cqe;
		if (io_uring_submit_and_wait(&ring, 1) < 0)
			exit(2);
		unsigned head, n = 0;
		io_uring_for_each_cqe(&ring, head, cqe) {
			if (cqe->res != WBS) {
				fprintf(stderr, "write: %s\n", strerror(-cqe->res));
				exit(2);
			}
			free_slot[cqe->user_data] = true;
			inflight--;
			done++;
			n++;
		}
		io_uring_cq_advance(&ring, n);
	}
	double dt = now_s() - t0, dc = cpu_s() - c0;
	static const char *names[] = {"plain fd", "fixed file", "fixed+buf"};
	printf("files %-10s %8.0f writes/s  %.1f CPU us/write\n", names[v], (double)done / dt,
	       dc / (double)done * 1e6);
	io_uring_queue_exit(&ring);
	close(tmp);
	free(mem);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "all";
	double secs = argc > 2 ? atof(argv[2]) : 3.0;
	const char *dir = argc > 3 ? argv[3] : ".";
	if (strcmp(what, "send") && strcmp(what, "accept") && strcmp(what, "files") &&
	    strcmp(what, "all")) {
		fprintf(stderr, "usage: uring-features [send|accept|files|all] [seconds] [dir]\n");
		return 2;
	}
	for (int round = 0; round < 2; round++) {
		if (!strcmp(what, "send") || !strcmp(what, "all")) {
			run_send(false, secs);
			run_send(true, secs);
		}
		if (!strcmp(what, "accept") || !strcmp(what, "all")) {
			run_accept(false, secs);
			run_accept(true, secs);
		}
		if (!strcmp(what, "files") || !strcmp(what, "all")) {
			run_files(F_PLAIN, secs, dir);
			run_files(F_FIXED, secs, dir);
			run_files(F_FIXED_BUF, secs, dir);
		}
	}
	return 0;
}
