/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The write verifier (RFC 1813 3.3.7): clients compare it across WRITE and COMMIT replies and
 * resend their UNSTABLE data when it changes. It changes at every start (cached data did not
 * survive) and when data the server acknowledged as UNSTABLE may not reach the disk: a write of
 * held data or a sync failed. Never for a request refused on its own (a WRITE past the maximum
 * file size, a stale handle): its client learns from the reply, and a new verifier would make
 * every client of the server resend everything it has not seen committed. */
#include <errno.h>
#include <sodium.h>
#include <string.h>

#include "fs/fs_int.h"
#include "fs/verifier.h"

void fs_write_verf(struct fs *fs, char out[8])
{
	uint64_t v = atomic_load(&fs->write_verf);
	memcpy(out, &v, 8);
}

void fs_rotate_verf(struct fs *fs)
{
	uint64_t v;
	randombytes_buf(&v, sizeof v);
	atomic_store(&fs->write_verf, v);
}

bool fs_verf_lost(int err, bool synced)
{
	/* As knfsd's commit_reset_write_verifier: neither of these is the storage's trouble. */
	if (err == -EAGAIN || err == -ESTALE)
		return false;
	/* The request's own bytes failed: they were not acknowledged, and what was lies where it
	 * did, unless the device itself is failing. */
	return synced || err == -EIO;
}
