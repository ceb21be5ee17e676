/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "io/ring.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/fiber.h"

struct parked {
	struct io_op *op;
	int res;
};

struct io_ring {
	struct io_uring ring;
	unsigned pending;        /* async ops in flight */
	struct parked *parked;   /* async completions seen while a sync op waited */
	size_t nparked, capparked;
	struct fiber_sched *sched;   /* the thread's fibers, run by io_ring_run() */
	void (*between)(void *);     /* called by io_ring_run() before each wait */
	void *between_ctx;
	int (*personality)(void *);  /* the calling fiber's personality id, or 0 */
	void *personality_ctx;
	int next_personality;        /* for the SQE get_file_sqe() just handed out */
};

static _Thread_local struct io_ring *thread_ring;

void io_ring_bind_thread(struct io_ring *r) { thread_ring = r; }
struct io_ring *io_ring_thread(void) { return thread_ring; }

struct io_ring *io_ring_new(unsigned entries)
{
	struct io_ring *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	/* Every thread waits for its completions inside io_uring_enter, where the kernel runs the
	 * completion work anyway: no need to interrupt the thread for it (COOP_TASKRUN). */
	int rc = io_uring_queue_init(entries, &r->ring, IORING_SETUP_COOP_TASKRUN);
	if (rc == -EINVAL)
		rc = io_uring_queue_init(entries, &r->ring, 0);   /* kernels before 5.19 */
	if (rc < 0) {
		free(r);
		errno = -rc;
		return NULL;
	}
	return r;
}

void io_ring_set_sched(struct io_ring *r, struct fiber_sched *s, void (*between)(void *), void *ctx)
{
	r->sched = s;
	r->between = between;
	r->between_ctx = ctx;
}

int io_ring_register_personality(struct io_ring *r)
{
	return io_uring_register_personality(&r->ring);
}

void io_ring_unregister_personality(struct io_ring *r, int id)
{
	io_uring_unregister_personality(&r->ring, id);
}

void io_ring_submit(struct io_ring *r)
{
	io_uring_submit(&r->ring);
}

void io_ring_set_personality_hook(struct io_ring *r, int (*fn)(void *ctx), void *ctx)
{
	r->personality = fn;
	r->personality_ctx = ctx;
}

void io_ring_free(struct io_ring *r)
{
	if (!r)
		return;
	io_uring_queue_exit(&r->ring);
	free(r->parked);
	free(r);
}

/* An SQE, submitting what is queued to make room when the SQ is full. */
static struct io_uring_sqe *get_sqe(struct io_ring *r)
{
	struct io_uring_sqe *sqe;
	while (!(sqe = io_uring_get_sqe(&r->ring)))
		io_uring_submit(&r->ring);
	return sqe;
}

/* An SQE for a waiting file call. Its personality is looked up first, while no SQE of ours is
 * in the ring: the lookup may submit what is queued (to retire an old personality). */
static struct io_uring_sqe *get_file_sqe(struct io_ring *r)
{
	r->next_personality = r->personality && fiber_self() ? r->personality(r->personality_ctx) : 0;
	return get_sqe(r);
}

static void queue_async(struct io_ring *r, struct io_uring_sqe *sqe, struct io_op *op)
{
	io_uring_sqe_set_data(sqe, op);
	r->pending++;
}

void io_ring_accept(struct io_ring *r, struct io_op *op, int fd, struct sockaddr *addr, socklen_t *len)
{
	struct io_uring_sqe *sqe = get_sqe(r);
	io_uring_prep_accept(sqe, fd, addr, len, SOCK_CLOEXEC);
	queue_async(r, sqe, op);
}

void io_ring_recv(struct io_ring *r, struct io_op *op, int fd, void *buf, size_t len)
{
	struct io_uring_sqe *sqe = get_sqe(r);
	io_uring_prep_recv(sqe, fd, buf, len, 0);
	queue_async(r, sqe, op);
}

void io_ring_recvmsg(struct io_ring *r, struct io_op *op, int fd, struct msghdr *msg)
{
	struct io_uring_sqe *sqe = get_sqe(r);
	io_uring_prep_recvmsg(sqe, fd, msg, 0);
	queue_async(r, sqe, op);
}

void io_ring_sendmsg(struct io_ring *r, struct io_op *op, int fd, const struct msghdr *msg)
{
	struct io_uring_sqe *sqe = get_sqe(r);
	io_uring_prep_sendmsg(sqe, fd, msg, MSG_NOSIGNAL);
	queue_async(r, sqe, op);
}

void io_ring_read(struct io_ring *r, struct io_op *op, int fd, void *buf, size_t len)
{
	struct io_uring_sqe *sqe = get_sqe(r);
	io_uring_prep_read(sqe, fd, buf, (unsigned)len, 0);
	queue_async(r, sqe, op);
}

void io_ring_timeout(struct io_ring *r, struct io_op *op, struct __kernel_timespec *ts)
{
	struct io_uring_sqe *sqe = get_sqe(r);
	io_uring_prep_timeout(sqe, ts, 0, 0);
	queue_async(r, sqe, op);
}

void io_ring_cancel_op(struct io_ring *r, struct io_op *op)
{
	struct io_uring_sqe *sqe = get_sqe(r);
	io_uring_prep_cancel(sqe, op, 0);
	io_uring_sqe_set_data(sqe, NULL);
	io_uring_submit(&r->ring);
}

void io_ring_cancel_fd(struct io_ring *r, int fd)
{
	struct io_uring_sqe *sqe = get_sqe(r);
	io_uring_prep_cancel_fd(sqe, fd, IORING_ASYNC_CANCEL_ALL);
	io_uring_sqe_set_data(sqe, NULL);   /* its own CQE is ignored */
	io_uring_submit(&r->ring);
}


static int park(struct io_ring *r, struct io_op *op, int res)
{
	if (r->nparked == r->capparked) {
		size_t cap = r->capparked ? r->capparked * 2 : 64;
		struct parked *p = realloc(r->parked, cap * sizeof *p);
		if (!p)
			return -ENOMEM;
		r->parked = p;
		r->capparked = cap;
	}
	r->parked[r->nparked++] = (struct parked){op, res};
	return 0;
}

static void deliver(struct io_ring *r, struct io_op *op, int res)
{
	r->pending--;
	op->cb(op, res);
}

/* A file call made by a fiber: the CQE wakes it. */
struct fiber_op {
	struct io_op op;
	struct fiber *f;
	int res;
};

static void fiber_op_done(struct io_op *op, int res)
{
	struct fiber_op *fo = (struct fiber_op *)op;
	fo->res = res;
	fiber_wake(fo->f);
}

/* In a fiber: suspend, and let the CQE resume us. The SQE carries the fiber's personality (its
 * credentials, registered with the ring) and goes with the loop's next submit, batched with the
 * others; without one, it is submitted now, under the thread's credentials, which are the
 * fiber's while it runs (io_uring takes them at submit time). Should a submit fail, the SQE
 * stays queued for the next: the fiber waits either way, so no SQE is ever left pointing at a
 * frame that returned. */
static int wait_fiber(struct io_ring *r, struct io_uring_sqe *sqe, struct fiber *f)
{
	struct fiber_op fo = {.op = {fiber_op_done}, .f = f};
	int id = r->next_personality;
	r->next_personality = 0;
	queue_async(r, sqe, &fo.op);
	if (id > 0)
		sqe->personality = (__u16)id;
	else
		io_uring_submit(&r->ring);
	fiber_suspend();
	return fo.res;
}

/* Submit one prepared SQE and wait for its completion, parking the others: for a thread with no
 * fibers (the main thread closing the handle caches at exit). The loop never waits like this. */
static int wait_sync(struct io_ring *r, struct io_uring_sqe *sqe)
{
	struct fiber *f = fiber_self();
	if (f)
		return wait_fiber(r, sqe, f);
	struct io_op self = {0};
	io_uring_sqe_set_data(sqe, &self);
	int rc = io_uring_submit(&r->ring);
	for (;;) {
		struct io_uring_cqe *cqe;
		rc = io_uring_wait_cqe(&r->ring, &cqe);
		if (rc == -EINTR || rc == -EAGAIN || rc == -EBUSY)
			continue;
		if (rc < 0) {
			/* Cannot wait any more, yet the kernel may still write into the caller's
			 * frame: returning would let it scribble over whatever reuses the stack. */
			fprintf(stderr, "io_uring wait failed: %s\n", strerror(-rc));
			abort();
		}
		struct io_op *op = io_uring_cqe_get_data(cqe);
		int res = cqe->res;
		io_uring_cqe_seen(&r->ring, cqe);
		if (op == &self)
			return res;
		/* Parking can only fail on ENOMEM; losing a completion would hang a connection,
		 * so retry delivery through the parked list at the cost of a short spin. */
		if (op && park(r, op, res) < 0)
			deliver(r, op, res);
	}
}

/* Run what is ready: fibers, expired timers, the owner's work between waits. */
static void run_ready(struct io_ring *r)
{
	if (!r->sched)
		return;
	do {
		fiber_sched_fire_timers(r->sched);
		fiber_sched_run(r->sched);
		if (r->between)
			r->between(r->between_ctx);
	} while (fiber_sched_run(r->sched));
}

static int wait_some(struct io_ring *r)
{
	uint64_t due = r->sched ? fiber_sched_next_deadline(r->sched) : UINT64_MAX;
	if (due == UINT64_MAX)
		return io_uring_submit_and_wait(&r->ring, 1);
	uint64_t now = fiber_now_ns(), ns = due > now ? due - now : 0;
	struct __kernel_timespec ts = {.tv_sec = (long long)(ns / 1000000000u),
				       .tv_nsec = (long long)(ns % 1000000000u)};
	struct io_uring_cqe *cqe;
	int rc = io_uring_submit_and_wait_timeout(&r->ring, &cqe, 1, &ts, NULL);
	return rc == -ETIME ? 0 : rc;
}

int io_ring_run(struct io_ring *r, const bool *stop)
{
	while (!(*stop && r->pending == 0)) {
		while (r->nparked) {
			/* Deliver in arrival order; a callback may park more (through sync ops). */
			struct parked p = r->parked[0];
			memmove(r->parked, r->parked + 1, --r->nparked * sizeof *r->parked);
			deliver(r, p.op, p.res);
		}
		run_ready(r);
		if (*stop && r->pending == 0)
			break;
		struct io_uring_cqe *cqe;
		/* Messages that came while the fibers ran: no wait, but what they queued goes in. */
		bool wait = !r->sched || fiber_sched_may_wait(r->sched);
		int rc = wait ? wait_some(r) : io_uring_submit(&r->ring);
		if (wait && r->sched)
			fiber_sched_running(r->sched);
		if (rc == -EINTR || (!wait && (rc == -EBUSY || rc == -EAGAIN)))
			continue;
		if (rc < 0)
			return rc;
		while (io_uring_peek_cqe(&r->ring, &cqe) == 0) {
			struct io_op *op = io_uring_cqe_get_data(cqe);
			int res = cqe->res;
			io_uring_cqe_seen(&r->ring, cqe);
			if (op)
				deliver(r, op, res);
		}
	}
	return 0;
}

int io_openat(struct io_ring *r, int dirfd, const char *path, int flags, mode_t mode)
{
	struct io_uring_sqe *sqe = get_file_sqe(r);
	io_uring_prep_openat(sqe, dirfd, path, flags | O_CLOEXEC, mode);
	return wait_sync(r, sqe);
}

int io_close(struct io_ring *r, int fd)
{
	struct io_uring_sqe *sqe = get_file_sqe(r);
	io_uring_prep_close(sqe, fd);
	return wait_sync(r, sqe);
}

int io_statx(struct io_ring *r, int dirfd, const char *path, int flags, unsigned mask, struct statx *st)
{
	struct io_uring_sqe *sqe = get_file_sqe(r);
	io_uring_prep_statx(sqe, dirfd, path, flags, mask, st);
	return wait_sync(r, sqe);
}

ssize_t io_pread(struct io_ring *r, int fd, void *buf, size_t len, uint64_t off)
{
	return io_pread_flags(r, fd, buf, len, off, 0);
}

ssize_t io_pread_flags(struct io_ring *r, int fd, void *buf, size_t len, uint64_t off, int rwf)
{
	struct io_uring_sqe *sqe = get_file_sqe(r);
	io_uring_prep_read(sqe, fd, buf, (unsigned)len, off);
	sqe->rw_flags = rwf;
	return wait_sync(r, sqe);
}

ssize_t io_pwrite(struct io_ring *r, int fd, const void *buf, size_t len, uint64_t off, int rwf)
{
	struct io_uring_sqe *sqe = get_file_sqe(r);
	io_uring_prep_write(sqe, fd, buf, (unsigned)len, off);
	sqe->rw_flags = rwf;
	return wait_sync(r, sqe);
}

ssize_t io_pwritev(struct io_ring *r, int fd, const struct iovec *iov, int iovcnt, uint64_t off,
		   int rwf)
{
	struct io_uring_sqe *sqe = get_file_sqe(r);
	io_uring_prep_writev(sqe, fd, iov, (unsigned)iovcnt, off);
	sqe->rw_flags = rwf;
	return wait_sync(r, sqe);
}

int io_fsync(struct io_ring *r, int fd, bool datasync)
{
	struct io_uring_sqe *sqe = get_file_sqe(r);
	io_uring_prep_fsync(sqe, fd, datasync ? IORING_FSYNC_DATASYNC : 0);
	return wait_sync(r, sqe);
}

int io_unlinkat(struct io_ring *r, int dirfd, const char *path, int flags)
{
	struct io_uring_sqe *sqe = get_file_sqe(r);
	io_uring_prep_unlinkat(sqe, dirfd, path, flags);
	return wait_sync(r, sqe);
}

int io_renameat(struct io_ring *r, int olddir, const char *oldp, int newdir, const char *newp, unsigned flags)
{
	struct io_uring_sqe *sqe = get_file_sqe(r);
	io_uring_prep_renameat(sqe, olddir, oldp, newdir, newp, flags);
	return wait_sync(r, sqe);
}

int io_mkdirat(struct io_ring *r, int dirfd, const char *path, mode_t mode)
{
	struct io_uring_sqe *sqe = get_file_sqe(r);
	io_uring_prep_mkdirat(sqe, dirfd, path, mode);
	return wait_sync(r, sqe);
}

int io_symlinkat(struct io_ring *r, const char *target, int dirfd, const char *path)
{
	struct io_uring_sqe *sqe = get_file_sqe(r);
	io_uring_prep_symlinkat(sqe, target, dirfd, path);
	return wait_sync(r, sqe);
}

int io_linkat(struct io_ring *r, int olddir, const char *oldp, int newdir, const char *newp, int flags)
{
	struct io_uring_sqe *sqe = get_file_sqe(r);
	io_uring_prep_linkat(sqe, olddir, oldp, newdir, newp, flags);
	return wait_sync(r, sqe);
}
