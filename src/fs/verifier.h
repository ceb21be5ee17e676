/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The write verifier (RFC 1813 3.3.7), as WRITE and COMMIT replies carry it (verifier.c). */
#ifndef NFSD_UC_FS_VERIFIER_H
#define NFSD_UC_FS_VERIFIER_H

#include <stdbool.h>

struct fs;

/* The current write verifier as the 8 bytes a WRITE/COMMIT reply carries. */
void fs_write_verf(struct fs *fs, char out[8]);
/* A write or fsync failed: clients must resend what they sent UNSTABLE. */
void fs_rotate_verf(struct fs *fs);
/* Whether a WRITE or COMMIT that failed with err (-errno) may have lost data acknowledged as
 * UNSTABLE, so that the verifier must change: synced when the failure was writing out or syncing
 * data held before (a COMMIT, a stable WRITE), not when it was the request's own bytes. */
bool fs_verf_lost(int err, bool synced);

#endif
