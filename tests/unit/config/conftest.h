/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers shared by the config and export tests: a scratch directory holding a conf file and
 * the directories it exports, a heap gauge for leak checks without a sanitizer, and the config
 * tests' checked loads (test_config's two sources share them). */
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

/* ---- loads checked (test_config.c, test_config_errors.c) ---- */

/* TEMPLATE with every "{D}" replaced by the scratch directory. */
void expand(const struct scratch *s, const char *templ, char *out, size_t len);
/* TEXT loads; the test fails with the error otherwise. */
struct config load_ok(const struct scratch *s, const char *text);
/* TEXT must fail with exactly "CONF:" WANT ({D} = scratch dir), leave *cfg empty, and give
 * back every byte it took. */
void expect_error(const struct scratch *s, const char *text, const char *want);
/* What --dump-config prints for cfg (malloc'd). */
char *dump_of(const struct config *cfg);

/* ---- the tests of test_config_errors.c, listed by test_config.c ---- */

void test_structure_errors(void **state);
void test_export_errors(void **state);
void test_value_errors(void **state);
void test_client_errors(void **state);
void test_host_names_and_wildcards(void **state);
void test_unreadable_files(void **state);
void test_error_truncated_to_buffer(void **state);
void test_success_takes_back_everything(void **state);
/* test_config_check.c */
void test_every_error_reported(void **state);
void test_errors_stop_at_a_bound(void **state);
void test_quoted_values(void **state);
void test_host_checks(void **state);
void test_dump_loads_back(void **state);
void test_exports_dir(void **state);
/* test_config_gss.c */
void test_sec_parsing(void **state);
void test_sec_errors(void **state);
void test_gss_keys(void **state);
void test_keytab_check(void **state);

#endif
