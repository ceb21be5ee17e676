/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The exports as served, as one table that a reload (SIGHUP) replaces whole. Each ring holds the
 * table it got last; a request takes its ring's table when it begins and keeps it until it ends.
 * The main thread builds a new table, hands it to every ring by message (a ring switches between
 * its fibers: nothing of it is read from another thread), and frees the old one once every ring
 * says its last request using the old one has ended. */
#ifndef NFSD_UC_EXPTABLE_H
#define NFSD_UC_EXPTABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "nfsd.h"

struct export_table {
	struct config *cfg;           /* the exports' configuration (and the rest of its file) */
	bool owns_cfg;                /* a reload's, freed with the table (not the start-up one) */
	struct export_rt *exports;    /* cfg->nexports of them */
	size_t n;
	unsigned gen;
};

/* At start: the table of srv->cfg's exports (opened and probed). 0 or -errno (logged). */
int exptable_open(struct server *srv);
/* At exit, once the rings are gone: the current table and any a reload could not free. */
void exptable_close_all(struct server *srv);

/* SIGHUP, on the main thread: read file again; exports, client lists and log_level take effect,
 * the rest is logged as ignored until a restart. A file that does not load, or has no export,
 * changes nothing. verbose: -v was given (the log level stays debug). */
void exptable_reload(struct server *srv, const char *file, bool verbose);

/* A ring: its request begins (the table it uses) or ends. */
struct export_table *exptable_get(struct worker *w);
void exptable_put(struct worker *w, struct export_table *t);

/* The export of t with this fsid (NULL: none, or no table), or whose path holds path. */
const struct export_rt *exptable_by_fsid(const struct export_table *t, uint32_t fsid);

#endif
