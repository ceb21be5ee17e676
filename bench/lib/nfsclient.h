/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfsclient: what the bench's load generators (nfs-interleave, nfs-workload) share: the data
 * pattern, clocks, size parsing, and synchronous NFSv3/MOUNT calls over libnfs's raw RPC layer
 * for set-up (connect, mount, lookup, create, fsinfo, getattr). The measured I/O itself is
 * asynchronous and lives in each tool. Messages go to stderr prefixed with the program's name. */
#ifndef NFSBENCH_NFSCLIENT_H
#define NFSBENCH_NFSCLIENT_H

#include <getopt.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>

#define NB_STALL_MS 60000       /* no reply for this long: give up */

struct nb_fh {
	u_int len;
	char data[NFS3_FHSIZE];
};

long long nb_now_ms(void);
double nb_now_s(void);

/* Keep freed memory in the process (call first in main): see nfsclient.c. */
void nb_keep_heap_warm(void);

/* A run of a file: what is still to be written or read (resends, remainders). */
struct piece {
	uint64_t off;
	uint32_t len;
};

struct pieces {
	struct piece *v;
	size_t n, cap;
};

/* Append; 0, or -1 out of memory. */
int nb_pieces_push(struct pieces *q, uint64_t off, uint32_t len);

/* Record a failure with its exit status in *failed and print it, unless one was recorded
 * already: the first failure is the one worth reading. */
__attribute__((format(printf, 3, 4)))
void nb_fail_first(int *failed, int status, const char *fmt, ...);
/* The same with a va_list, for a caller that wraps it (in a lock, among threads). */
__attribute__((format(printf, 3, 0)))
void nb_vfail_first(int *failed, int status, const char *fmt, va_list ap);

/* The load generators' exit statuses for a run's failures. */
#define NB_EXIT_MISMATCH 1      /* the data read back differ from what was written */
#define NB_EXIT_SERVER 3        /* the server failed a call or answered nonsense */

/* Check a WRITE reply to piece p asked with `want`: the count it wrote (1..p->len), or 0 after
 * recording the failure (nb_fail_first). The verifier is the caller's to check. */
uint32_t nb_write_check(int *failed, WRITE3res *res, const struct piece *p, stable_how want);
/* Check a READ reply to piece p: the count it returned (1..p->len, with that many bytes), or 0
 * after recording the failure. */
uint32_t nb_read_check(int *failed, READ3res *res, const struct piece *p);
/* Where got and want, which differ, first do (index), and whether zeros follow there (at least 8
 * up to len: bytes never written, most likely). */
size_t nb_first_diff(const uint8_t *got, const uint8_t *want, size_t len, bool *zeros_follow);

/* A load generator's command line: its options by getopt_long, each handed to opt with the
 * tool's own options o (-h: usage(stdout), exit 0), then exactly npos positional arguments, the
 * first four HOST NFS_PORT MOUNT_PORT EXPORT. 0, or -1 (a bad option is named on stderr). */
struct nb_args {
	const char *host, *export;
	int nfs_port, mount_port;
	char **rest;              /* the positional arguments after EXPORT */
};
typedef int nb_opt_fn(void *o, int c, const char *arg);
int nb_cmdline(int argc, char **argv, const char *shortopts, const struct option *longopts,
	       nb_opt_fn *opt, void *o, void (*usage)(FILE *), int npos, struct nb_args *out);

/* "123", "4K", "64M", "1G" (1024-based): 0, or -1 when it is not a size. */
int nb_parse_size(const char *s, uint64_t *out);

/* The data of byte `off` of a file written under `seed`: a function of both, so that bytes of an
 * earlier run (another seed) or bytes landed at the wrong offset are told apart from the right
 * ones: each 4 KiB block's splitmix64 word (nb_pattern_word of the block index) xor its word's
 * index within the block times a constant. nb_pattern_word is also the tools' random numbers. */
uint64_t nb_pattern_word(uint64_t seed, uint64_t index);
uint8_t nb_pattern_byte(uint64_t seed, uint64_t off);
void nb_pattern_fill(uint64_t seed, uint64_t off, uint8_t *buf, size_t len);

nfs_fh3 nb_fh3(struct nb_fh *f);
void nb_fh_set(struct nb_fh *to, u_int len, const char *data);

/* A connected context for prog/vers on host:port, or NULL (message printed). */
struct rpc_context *nb_connect(const char *host, int port, int prog, int vers);

/* Synchronous calls on a connected NFS context: 0, or -1 with the reason printed. */
int nb_mount_root(const char *host, int mount_port, const char *export, struct nb_fh *root);
int nb_lookup(struct rpc_context *rpc, struct nb_fh *dir, const char *name, struct nb_fh *out);
/* CREATE UNCHECKED with size 0 and mode 0644: makes the file, or truncates the one there. */
int nb_create_empty(struct rpc_context *rpc, struct nb_fh *dir, const char *name,
		    struct nb_fh *out);
/* SETATTR owner, group and mode (as a flexfiles MDS hands a data file to a layout's uid). */
int nb_setattr_owner(struct rpc_context *rpc, struct nb_fh *f, uint32_t uid, uint32_t gid,
		     uint32_t mode);
int nb_mkdir(struct rpc_context *rpc, struct nb_fh *dir, const char *name, struct nb_fh *out);
int nb_rmdir(struct rpc_context *rpc, struct nb_fh *dir, const char *name);
int nb_fsinfo(struct rpc_context *rpc, struct nb_fh *f, uint32_t *rtmax, uint32_t *wtmax);
int nb_size(struct rpc_context *rpc, struct nb_fh *f, uint64_t *size);

/* Service every context once (poll up to timeout_ms; pfd has room for n): 0, or -1 when one of
 * them failed (the index of the first is stored in *bad). */
int nb_service(struct rpc_context **rpcs, struct pollfd *pfd, unsigned n, int timeout_ms,
	       unsigned *bad);

#endif
