/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What test_behind.c (the records, their frames and the chunks written behind, and the list of
 * every test) shares with the other sources of the test_behind binary: the tests defined in the
 * others, by file. */
#ifndef TEST_BEHIND_H
#define TEST_BEHIND_H

#include "test_env.h"

/* test_behind_flow.c */
void test_writer_ahead_waits_for_the_one_behind(void **state);
void test_old_open_chunks_hold_nobody(void **state);
void test_random_writers_never_held(void **state);
void test_file_bound_frees_clean_first(void **state);
void test_dirty_threshold(void **state);
void test_old_dirty_blocks_written_behind(void **state);
void test_young_dirty_blocks_wait(void **state);
void test_bound_holds_with_backpressure(void **state);
void test_file_bound_frees_clean_without_waiting(void **state);

/* test_behind_faults.c */
void test_full_cache_on_failing_disk(void **state);
void test_stable_writes_on_failing_disk(void **state);
void test_writeback_error_reported_by_commit(void **state);
void test_commit_enospc_then_retry(void **state);
void test_commit_writes_runs_side_by_side(void **state);
void test_commit_side_by_side_failure(void **state);
void test_sync_error_redirties(void **state);

/* test_behind_sync.c */
void test_sync_behind_as_data_goes(void **state);
void test_sync_behind_off_or_below(void **state);
void test_straight_middles_not_synced_behind(void **state);
void test_no_sync_behind_while_behind(void **state);
void test_commit_makes_sync_behind_moot(void **state);
void test_sync_behind_failure_reported_by_commit(void **state);
void test_close_waits_for_sync_behind(void **state);

/* test_behind_reads.c */
void test_scan_does_not_flush_hot_blocks(void **state);
void test_read_never_writes(void **state);
void test_stale_read_not_kept(void **state);
void test_truncate_spares_pinned_block(void **state);
void test_truncate_cached_blocks(void **state);
void test_kept_read_buffer_is_never_written(void **state);
void test_pinned_read_is_stable(void **state);
void test_stable_writes_share(void **state);
void test_stable_writes_wait_for_round(void **state);
void test_overwrite_during_writeback(void **state);
void test_read_not_kept_across_through_middle(void **state);
void test_through_and_behind_share(void **state);

#endif
