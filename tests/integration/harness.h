/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Integration harness: one nfsd-uc daemon per test program, started on a temporary export tree
 * and free high ports, stopped with SIGTERM at the end (its exit status must be 0).
 *
 * The tree under a fresh /tmp/nfsd-uc-it.XXXXXX:
 *   export/     rw, no_root_squash        (most tests)
 *   ro/         ro, no_root_squash        (holds hello.txt, written by the harness)
 *   rootsq/     rw, root_squash           (mode 0777)
 *   allsq/      rw, all_squash            (mode 0777)
 *   private/    rw for 127.0.0.2 only     (127.0.0.1, the libnfs clients, is not allowed)
 *   subtree/    rw, no_root_squash, subtree_check
 *   state/      state_dir
 *   nfsd-uc.conf, daemon.log
 */
#ifndef NFSD_UC_IT_HARNESS_H
#define NFSD_UC_IT_HARNESS_H

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <cmocka.h>

enum it_export { EXP_RW = 0, EXP_RO, EXP_ROOTSQ, EXP_ALLSQ, EXP_PRIVATE, EXP_SUBTREE, EXP_COUNT };

/* Lines a test program adds to the [server] section of the conf (set before IT_MAIN), e.g. a
 * short record_timeout (a "listen =" there replaces the harness's 127.0.0.1, a "rpcbind =" its
 * "rpcbind = no"); NULL: none. */
extern const char *it_server_conf_extra;
/* Lines added to the rw export's section (e.g. its write_mode), set before IT_MAIN. */
extern const char *it_rw_export_extra;
/* More hosts of the rw export's clients line, after 127.0.0.1's rule, set before IT_MAIN (e.g.
 * "127.0.0.0/8(rw,insecure)" for clients of their own addresses on the loopback). */
extern const char *it_rw_clients_extra;
/* Lines for the conf's [lock] section (its port is the harness's), set before it_setup. */
extern const char *it_lock_conf_extra;

#define IT_HELLO_NAME "hello.txt"
#define IT_HELLO_TEXT "hello from the read-only export\n"
/* The address the private export admits; raw sockets bind it as their source. */
#define IT_PRIVATE_CLIENT "127.0.0.2"

struct itest {
	const char *exe;               /* the nfsd-uc binary */
	char dir[256];                 /* temporary root, canonical (short: /tmp/...) */
	char conf[PATH_MAX];
	char log[PATH_MAX];
	char exports[EXP_COUNT][PATH_MAX];
	uint16_t port, mount_port, lock_port;   /* lock_port: NLM and NSM, TCP and UDP */
	pid_t pid;                     /* 0 while stopped */
};

/* Make the tree, pick the ports and write the conf. 0, or -1 with a message on stderr. */
int it_setup(struct itest *t, const char *exe);
/* Start the daemon and wait (10 s at most) until it says "ready". */
int it_start(struct itest *t);
/* SIGTERM and wait (10 s at most, then SIGKILL). The exit status (0..255), 128+signal when
 * killed by one, -1 when it had to be killed or was not running. */
int it_stop(struct itest *t);
/* SIGKILL and reap: a crash. 0, or -1 when it was not running. */
int it_kill(struct itest *t);
/* Still running? (reaps it and says so on stderr when it died) */
int it_alive(struct itest *t);
/* The log's size now: where what the daemon logs next begins. */
long it_log_size(const struct itest *t);
/* How many descriptors process pid has open (its /proc/PID/fd). */
int it_open_fds(pid_t pid);
/* The first line of the log past offset from that contains what (malloc'd, newline kept), or
 * NULL. */
char *it_log_find(const struct itest *t, long from, const char *what);
/* Print the last lines of the daemon's log on stderr. */
void it_log_tail(const struct itest *t, int lines);
/* Remove the tree (kept when NFSD_UC_IT_KEEP is set in the environment). */
void it_cleanup(struct itest *t);

/* main() of every test program: the daemon from argv[1] (or $NFSD_UC_EXE) is started, each
 * test gets the struct itest * as its state, the daemon is stopped and must exit 0; the log
 * tail is printed when anything failed. Returns main's exit code. */
int it_main(const char *group, const struct CMUnitTest *tests, size_t ntests,
            int argc, char **argv);
#define IT_MAIN(group, tests) it_main(group, tests, sizeof(tests) / sizeof((tests)[0]), argc, argv)

/* A port nobody listens on now on 127.0.0.1: bound to port 0 and read back, the socket left open
 * in *keep_fd (close it before the port is used); never one it returned before in this process.
 * The port, or -1. */
int it_free_port(int *keep_fd);

/* Small file-system helpers for fixtures and for checking results on disk (abort the test
 * through cmocka on failure). path is relative to the export's directory. */
void it_sleep_ms(int ms);
void it_path(const struct itest *t, enum it_export e, const char *rel, char *out, size_t outlen);
void it_write_file(const struct itest *t, enum it_export e, const char *rel,
                   const void *data, size_t len, mode_t mode);

/* The daemon's counter name (rawnfs.h's rn_counter), failing the test when it has none. */
uint64_t rn_counter_must(uint16_t port, const char *name);

#endif
