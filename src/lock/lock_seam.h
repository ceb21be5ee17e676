/* SPDX-License-Identifier: GPL-2.0-or-later */
/* For unit tests only: the allocator of the lock tables and of the grace period, so a test can
 * make an allocation fail and check that the operation changed nothing. Only the tests and the
 * two files that define these include it; NULL restores malloc. */
#ifndef NFSD_UC_LOCK_SEAM_H
#define NFSD_UC_LOCK_SEAM_H

#include <stddef.h>

void lk_table_set_alloc(void *(*fn)(size_t));
void grace_set_alloc(void *(*fn)(size_t));

#endif
