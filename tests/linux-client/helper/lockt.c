// SPDX-License-Identifier: GPL-2.0-or-later
/* lockt: lock helper of the Linux-client lock test (static, in the guest's initramfs).
 *
 * Every lock is a write (exclusive) lock on the whole file. Times are milliseconds of
 * CLOCK_MONOTONIC, shared by every process of the guest, so that two processes' lines can be
 * subtracted (the blocked waiter's GOT minus the holder's UNLOCKED is the hand-off time).
 *
 *   lockt hold fcntl|flock FILE [TMO]  F_SETLK / flock(LOCK_EX|LOCK_NB); prints
 *                                      "LOCKED T took=MS pid=P"; then waits for SIGUSR1 (or
 *                                      SIGTERM), prints "UNLOCKED T call=MS" with T taken just
 *                                      before F_UNLCK / LOCK_UN; gives up after TMO s (300)
 *   lockt try fcntl|flock FILE         F_SETLK / flock(LOCK_EX|LOCK_NB), released at once:
 *                                      "OK took=MS" (exit 0) or "DENIED ERRNO took=MS" (exit 1)
 *   lockt test FILE                    F_GETLK for a write lock: "none took=MS" or
 *                                      "held type=W|R pid=P start=S len=L took=MS" (exit 0)
 *   lockt wait FILE [TMO]              prints "REQ T", F_SETLKW (blocks while another owner
 *                                      holds a conflicting lock), "GOT T waited=MS", unlocks;
 *                                      "TIMEOUT T" (exit 1) when not granted within TMO s (120)
 * Any other failure prints "ERROR what: ERRNO" and exits 2.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

static long long ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

static const char *ename(int e)
{
	switch (e) {
	case EAGAIN: return "EAGAIN(EWOULDBLOCK)";
	case EACCES: return "EACCES";
	case ENOLCK: return "ENOLCK";
	case EINTR: return "EINTR";
	case EIO: return "EIO";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EDEADLK: return "EDEADLK";
	case EBADF: return "EBADF";
	case EINVAL: return "EINVAL";
	case ENOENT: return "ENOENT";
	case ESTALE: return "ESTALE";
	default: return strerror(e);
	}
}

static int error(const char *what)
{
	printf("ERROR %s: %s\n", what, ename(errno));
	return 2;
}

/* Without SA_RESTART: an alarm interrupts F_SETLKW (EINTR) instead of restarting it. */
static void catch(int sig)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static int posix_lock(int fd, int cmd, short type)
{
	struct flock f;
	memset(&f, 0, sizeof f);
	f.l_type = type;
	f.l_whence = SEEK_SET;
	return fcntl(fd, cmd, &f);
}

/* kind: 'p' fcntl, 'f' flock. 0, or -1 with errno. */
static int trylock(int fd, char kind)
{
	return kind == 'f' ? flock(fd, LOCK_EX | LOCK_NB) : posix_lock(fd, F_SETLK, F_WRLCK);
}

static int unlock(int fd, char kind)
{
	return kind == 'f' ? flock(fd, LOCK_UN) : posix_lock(fd, F_SETLK, F_UNLCK);
}

static char kind_of(const char *s)
{
	if (strcmp(s, "fcntl") == 0)
		return 'p';
	if (strcmp(s, "flock") == 0)
		return 'f';
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: lockt hold fcntl|flock FILE [TMO] | try fcntl|flock FILE | "
			"test FILE | wait FILE [TMO]\n");
	return 2;
}

/* hold: lock, report, wait for SIGUSR1 or SIGTERM (or the alarm of TMO s), unlock. */
static int hold(int fd, char kind, unsigned tmo)
{
	long long t;

	catch(SIGUSR1);
	catch(SIGTERM);
	catch(SIGALRM);
	alarm(tmo);
	t = ms();
	if (trylock(fd, kind) != 0)
		return printf("DENIED %s took=%lld\n", ename(errno), ms() - t), 1;
	printf("LOCKED %lld took=%lld pid=%d\n", ms(), ms() - t, (int)getpid());
	while (!got_signal)
		pause();
	if (got_signal == SIGALRM)
		printf("hold: no SIGUSR1 in time, unlocking\n");
	t = ms();
	if (unlock(fd, kind) != 0)
		return error("unlock");
	printf("UNLOCKED %lld call=%lld\n", t, ms() - t);
	return got_signal == SIGALRM ? 1 : 0;
}

/* try: lock and unlock at once, or DENIED. */
static int try(int fd, char kind)
{
	long long t = ms();

	if (trylock(fd, kind) != 0) {
		int e = errno;
		printf("DENIED %s took=%lld\n", ename(e), ms() - t);
		return e == EAGAIN || e == EACCES ? 1 : 2;
	}
	printf("OK took=%lld\n", ms() - t);
	if (unlock(fd, kind) != 0)
		return error("unlock");
	return 0;
}

/* test: F_GETLK for a write lock on the whole file, and what holds it. */
static int test(int fd)
{
	long long t;
	struct flock f;

	memset(&f, 0, sizeof f);
	f.l_type = F_WRLCK;
	f.l_whence = SEEK_SET;
	t = ms();
	if (fcntl(fd, F_GETLK, &f) != 0)
		return error("F_GETLK");
	t = ms() - t;
	if (f.l_type == F_UNLCK)
		printf("none took=%lld\n", t);
	else
		printf("held type=%s pid=%d start=%lld len=%lld took=%lld\n",
		       f.l_type == F_WRLCK ? "W" : "R", (int)f.l_pid, (long long)f.l_start,
		       (long long)f.l_len, t);
	return 0;
}

/* wait: F_SETLKW until granted or the alarm of TMO s, then unlock. */
static int wait_lock(int fd, unsigned tmo)
{
	long long t;

	catch(SIGALRM);
	alarm(tmo);
	t = ms();
	printf("REQ %lld pid=%d\n", t, (int)getpid());
	if (posix_lock(fd, F_SETLKW, F_WRLCK) != 0) {
		if (errno == EINTR && got_signal == SIGALRM)
			return printf("TIMEOUT %lld\n", ms()), 1;
		return error("F_SETLKW");
	}
	long long g = ms();
	printf("GOT %lld waited=%lld\n", g, g - t);
	if (posix_lock(fd, F_SETLK, F_UNLCK) != 0)
		return error("unlock");
	return 0;
}

int main(int argc, char **argv)
{
	int fd;
	char kind = 0;
	const char *file;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3)
		return usage();
	if (strcmp(argv[1], "hold") == 0 || strcmp(argv[1], "try") == 0) {
		if (argc < 4 || !(kind = kind_of(argv[2])))
			return usage();
		file = argv[3];
	} else {
		file = argv[2];
	}
	fd = open(file, O_RDWR | O_CREAT, 0666);
	if (fd < 0)
		return error("open");

	if (strcmp(argv[1], "hold") == 0)
		return hold(fd, kind, argc > 4 ? (unsigned)atoi(argv[4]) : 300);
	if (strcmp(argv[1], "try") == 0)
		return try(fd, kind);
	if (strcmp(argv[1], "test") == 0)
		return test(fd);
	if (strcmp(argv[1], "wait") == 0)
		return wait_lock(fd, argc > 3 ? (unsigned)atoi(argv[3]) : 120);
	return usage();
}
