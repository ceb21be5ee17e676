/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The NFSv3 program (RFC 1813), as the daemon registers it: its procedure table, and its state,
 * the request counters the counters program reports. */
#ifndef NFSD_UC_NFS3_NFS3_H
#define NFSD_UC_NFS3_NFS3_H

#include <stdatomic.h>
#include <stdint.h>

#include "svc/dispatch.h"

/* Counted by the handlers of every ring (the boundary cache keeps its own). */
struct nfs3_stats {
	_Atomic uint64_t writes, reads, commits, bytes_written, bytes_read;
};

/* Registered with a struct nfs3_stats as its state. */
extern const struct prog_desc nfs3_program;

#endif
