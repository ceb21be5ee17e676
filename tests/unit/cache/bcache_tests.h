/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The tests of the test_bcache binary that test_bcache.c (which lists them all) does not
 * define: those of test_bcache_inflight.c, with a middle or an entry write in flight. */
#ifndef BCACHE_TESTS_H
#define BCACHE_TESTS_H

#include "test_env.h"

void test_piece_during_middle(void **state);
void test_middle_waits_for_entry_write(void **state);
void test_commit_waits_for_middle(void **state);
void test_piece_waits_for_entry_write(void **state);
void test_failed_middle_keeps_entries(void **state);
void test_overlapping_middles_ack_order(void **state);
void test_completion_under_landed_middle(void **state);

#endif
