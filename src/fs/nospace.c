/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A WRITE or COMMIT that found the disk full (ENOSPC, EDQUOT) tries again once deleted files the
 * rings still hold open are let go: their space may be what fills the disk. */
#include "fs/fileio.h"

#include <errno.h>

#include "cache/bcache.h"
#include "fs/fh.h"
#include "fs/fs_int.h"
#include "io/fiber.h"


/* Deleted files we still hold open may be what fills the disk: let them go (here now, in the
 * other rings at their next turn). fh_sweep skips the entries the request holds (pinned). */
static void free_deleted(struct fs_chan *ch)
{
	fh_sweep(ch);
	fh_close_doomed(ch);
	fs_sweep_everywhere(ch, true);
}

/* Did any ring let deleted files go in the last second? Their space may be on its way: the
 * file system hands it out a moment after the last close (a deferred final release, a journal
 * commit). */
bool fileio_freed_lately(struct fs *fs)
{
	return fiber_now_ns() - atomic_load(&fs->deleted_closed_ns) < 1000 * 1000 * 1000ull;
}

/* A file whose cached blocks could not be written is refused WRITEs past the bound: with space
 * freed, its blocks get another try before the WRITE does (not without: each WRITE so retried
 * would add its bytes to what cannot go). */
void fileio_retry_cached(struct fs_call *fc, struct fh_obj *o)
{
	int err = 0;
	struct bcache_file *bf = behind(o) ? cache_of(fc, o, &err) : NULL;
	if (bf)
		bcache_file_retry(bf);
}

/* A WRITE or COMMIT that found the disk full: may it try again (try number tries, from 0)?
 * Deleted files we still hold may be what fills it, so first let them go. The space they free
 * may take the file system a moment (a deferred final release; ext4 hands freed blocks out
 * after its journal commits): up to 4 tries, 50 ms apart, and with while_freed only while some
 * ring let deleted files go in the last second. */
bool fileio_space_again(struct fs_call *fc, int rc, int tries, bool while_freed)
{
	if ((rc != -ENOSPC && rc != -EDQUOT) || tries >= 4)
		return false;
	if (tries && while_freed && !fileio_freed_lately(fc->ch->fs))
		return false;
	free_deleted(fc->ch);
	if (tries)
		fiber_sleep_ns(50 * 1000 * 1000ull);
	return true;
}
