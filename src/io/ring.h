/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The io_uring engine of one ring thread. It knows nothing of NFS.
 *
 * Two kinds of operations share the ring:
 *  - asynchronous ones (accept, recv, send, eventfd read), whose completion calls the op's callback
 *    from io_ring_run()'s loop;
 *  - waiting ones (the file and metadata calls io_openat() .. io_linkat() below). Called from a
 *    fiber (fiber.h) they submit, suspend the fiber and return when the CQE resumes it, while the
 *    loop goes on with other fibers and callbacks: many calls in flight per ring, none holding
 *    the thread. Called outside a fiber (the main thread at exit) they wait in place, parking the
 *    completions of asynchronous ops to be delivered later by the loop.
 * Credentials: io_uring issues a request (or captures the creds for its async worker) under the
 * submitter's fsuid/fsgid/groups at submit time. A fiber's waiting call therefore carries a
 * personality (io_ring_set_personality_hook) and goes with the loop's next submit; without one it
 * is submitted at once, while the thread has the fiber's credentials. */
#ifndef NFSD_UC_IO_RING_H
#define NFSD_UC_IO_RING_H

#include <liburing.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080   /* Linux 6.14: uncached buffered I/O */
#endif

struct io_ring;
struct io_op;
typedef void (*io_cb)(struct io_op *op, int res);

/* Embed in the owner's state; container_of() back in the callback. */
struct io_op {
	io_cb cb;
};

struct io_ring *io_ring_new(unsigned entries);
void io_ring_free(struct io_ring *r);

/* Asynchronous: the callback gets the CQE's res (>= 0 or -errno). */
void io_ring_accept(struct io_ring *r, struct io_op *op, int fd, struct sockaddr *addr, socklen_t *len);
void io_ring_recv(struct io_ring *r, struct io_op *op, int fd, void *buf, size_t len);
void io_ring_sendmsg(struct io_ring *r, struct io_op *op, int fd, const struct msghdr *msg);
void io_ring_recvmsg(struct io_ring *r, struct io_op *op, int fd, struct msghdr *msg);
void io_ring_read(struct io_ring *r, struct io_op *op, int fd, void *buf, size_t len);
/* Complete op after ms milliseconds (res -ETIME), or earlier with -ECANCELED at shutdown. */
void io_ring_timeout(struct io_ring *r, struct io_op *op, struct __kernel_timespec *ts);
/* Cancel the pending op (by identity). */
void io_ring_cancel_op(struct io_ring *r, struct io_op *op);
/* Cancel every pending op on fd (their callbacks still run, with -ECANCELED). */
void io_ring_cancel_fd(struct io_ring *r, int fd);

/* The ring of the calling thread, for code that runs on whichever ring calls it (the boundary
 * cache's I/O): bound by the ring thread at start, NULL on threads without one (then callers fall back
 * to plain syscalls). Thread-local: no thread ever sees another's ring. */
void io_ring_bind_thread(struct io_ring *r);
struct io_ring *io_ring_thread(void);

/* Register the calling thread's current credentials (fsuid, fsgid, groups, capabilities) as a
 * personality of the ring: an SQE that carries its id runs with them, whoever submits it.
 * The id (> 0), or -errno. */
int io_ring_register_personality(struct io_ring *r);
void io_ring_unregister_personality(struct io_ring *r, int id);
/* Submit what is queued now, without waiting. */
void io_ring_submit(struct io_ring *r);
/* Which personality the calling fiber's file calls carry: called when each is prepared; 0 (the
 * default, or no hook) means none: the SQE is then submitted at once, under the submitter's
 * credentials as they are. With a personality the SQE waits for the loop's next submit, with
 * the others of that turn (one io_uring_enter for all). */
void io_ring_set_personality_hook(struct io_ring *r, int (*fn)(void *ctx), void *ctx);

/* The fibers io_ring_run() runs: every time no callback is due it fires the expired timers, runs the
 * ready fibers and then between(ctx), and it waits no longer than the next timer. */
struct fiber_sched;
void io_ring_set_sched(struct io_ring *r, struct fiber_sched *s, void (*between)(void *), void *ctx);

/* Run callbacks and fibers until *stop is true and no async op is pending, or an unrecoverable
 * ring error. */
int io_ring_run(struct io_ring *r, const bool *stop);

/* Synchronous calls: return the syscall's result, negative errno on failure. */
int io_openat(struct io_ring *r, int dirfd, const char *path, int flags, mode_t mode);
int io_close(struct io_ring *r, int fd);
int io_statx(struct io_ring *r, int dirfd, const char *path, int flags, unsigned mask, struct statx *st);
ssize_t io_pread(struct io_ring *r, int fd, void *buf, size_t len, uint64_t off);
/* rwf: RWF_* flags of preadv2/pwritev2, e.g. RWF_DONTCACHE. */
ssize_t io_pread_flags(struct io_ring *r, int fd, void *buf, size_t len, uint64_t off, int rwf);
ssize_t io_pwrite(struct io_ring *r, int fd, const void *buf, size_t len, uint64_t off, int rwf);
ssize_t io_pwritev(struct io_ring *r, int fd, const struct iovec *iov, int iovcnt, uint64_t off,
		   int rwf);
int io_fsync(struct io_ring *r, int fd, bool datasync);
int io_unlinkat(struct io_ring *r, int dirfd, const char *path, int flags);
int io_renameat(struct io_ring *r, int olddir, const char *oldp, int newdir, const char *newp, unsigned flags);
int io_mkdirat(struct io_ring *r, int dirfd, const char *path, mode_t mode);
int io_symlinkat(struct io_ring *r, const char *target, int dirfd, const char *path);
int io_linkat(struct io_ring *r, int olddir, const char *oldp, int newdir, const char *newp, int flags);

#endif
