/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A call to nfsd-uc's private counters program (0x20004e55 v1, see src/stats.c), encoded by hand
 * on a plain TCP socket so that the tools that use it depend on nothing but libc and can check a
 * server whose own XDR code is what is being tested: bench/nfsduc-stat (procedure STATS) and
 * nfsd-uc-stat (procedure METRICS). */
#ifndef NFSD_UC_STATRPC_H
#define NFSD_UC_STATRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STATRPC_EXIT_PROTO 3

/* The name error messages start with (the tool's). */
extern const char *statrpc_prog;

/* A cursor over a reply body; every read checks the end. */
struct statrpc_cur {
	const uint8_t *p, *end;
};
bool statrpc_u32(struct statrpc_cur *c, uint32_t *v);
bool statrpc_u64(struct statrpc_cur *c, uint64_t *v);
/* Opaque of len bytes padded to 4: *data points into the reply. */
bool statrpc_opaque(struct statrpc_cur *c, uint32_t len, const uint8_t **data);

/* TCP to host:port, or -1 (said on stderr). */
int statrpc_connect(const char *host, const char *port);
/* Call procedure proc (no arguments, AUTH_NONE) on fd: 0 with *reply (the caller frees it) and
 * *body its result, past a checked accepted-SUCCESS header; or STATRPC_EXIT_PROTO (said). */
int statrpc_call(int fd, uint32_t proc, uint8_t **reply, struct statrpc_cur *body);

#endif
