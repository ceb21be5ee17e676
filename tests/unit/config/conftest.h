/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers shared by the config and export tests: a scratch directory holding a conf file and
 * the directories it exports, and a heap gauge for leak checks without a sanitizer. */
#ifndef NFSD_UC_CONFTEST_H
#define NFSD_UC_CONFTEST_H

#include <limits.h>
#include <stddef.h>

#include "conf/config.h"

struct scratch {
	char dir[PATH_MAX];       /* canonical, so it compares equal to realpath'd export paths */
	char conf[PATH_MAX + 16]; /* dir/nfsd-uc.conf */
};

/* Make a fresh directory with subdirectories data/ and data2/ and a regular file "file". */
int scratch_new(struct scratch *s);
/* Remove it and everything below. */
void scratch_delete(struct scratch *s);
/* Write TEXT to dir/REL; returns 0 or -1. */
int scratch_write(const struct scratch *s, const char *rel, const char *text);
/* Write TEXT as the conf file and load it. */
int scratch_load(const struct scratch *s, const char *text, struct config *cfg, char *err,
		 size_t errlen);
/* Bytes the C heap holds now (glibc mallinfo2; flat under ASan, whose leak check covers it).
 * Exact only once heap_gauge_init() ran first thing in main(). */
size_t heap_in_use(void);
/* glibc's per-thread cache keeps freed chunks counted as in use, which would blur a
 * before/after comparison: re-execute the test once with the cache turned off. */
void heap_gauge_init(char **argv);

#endif
