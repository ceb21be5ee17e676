/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A WRITE parked for its neighbour: a stable WRITE whose end blocks are still partial, or a
 * direct-mode UNSTABLE one that leaves a partial block in a crowded file, waits (its fiber, not
 * its ring) for the WRITE that completes the block, rather than read what nobody wrote yet.
 * Whether anything else runs or arrives, and the wake-up once nothing does, are the rings'
 * business: they come through fs_ring_ops. */
#include "fs/fileio.h"

#include "cache/bcache.h"
#include "fs/fs_int.h"
#include "io/fiber.h"


static int write_finish(struct fs_call *fc, struct fh_obj *o, uint64_t off, uint32_t count,
			enum fs_stable stable, bool force)
{
	int err = 0;
	struct bcache_file *bf = cache_of(fc, o, &err);
	if (!bf)
		return -err;
	if (stable == FS_UNSTABLE)
		return !force && hold_back(o, bf, off, count) ? FILEIO_WAIT : 0;
	if (bcache_range_partial(bf, off, count)) {
		if (!force)
			return FILEIO_WAIT;
		count_alone(fc->ch->fs);
	}
	int rc = bcache_commit(bf, off, count, sync_of(stable));
	if (rc < 0)
		fileio_write_failed(fc, off, count, rc, true);
	return rc;
}

/* A parked WRITE waits for its neighbour while other requests run or keep arriving (one of them
 * may be it), and at least PARK_MIN_NS; once nothing has run or arrived anywhere for PARK_MIN_NS
 * it waits no more, and never more than PARK_MAX_NS. Arrivals count, not only requests running:
 * behind a slow writer every WRITE in flight may be parked at one moment, the next ones the
 * clients send bringing the neighbours (32 FILE_SYNC writers of 47008-byte records: 4-23 blocks
 * completed by a read per 24000 overwriting WRITEs when "nothing running" alone decided, each
 * parked 10-20 ms beside 24-57 others). The wait is on the inode's own wake-ups (a block
 * completed, filled or freed), with the fiber suspended: its ring serves other calls meanwhile.
 * Once nothing runs anywhere, the rings kick their parked WRITEs (fs_ring_ops): no periodic
 * look. */
#define PARK_MIN_NS (10 * 1000 * 1000ull)

#define PARK_MAX_NS (1000 * 1000 * 1000ull)

int fileio_write_wait(struct fs_call *fc, struct fh_obj *o, uint64_t off, uint32_t count,
		      enum fs_stable stable)
{
	int err = 0;
	struct bcache_file *bf = cache_of(fc, o, &err);
	if (!bf)
		return -err;
	struct fs_chan *ch = fc->ch;
	const struct fs_ring_ops *ops = &ch->fs->ops;
	struct fs_parked pc;
	ops->park_begin(ch->ring, &pc);
	uint64_t start = fiber_now_ns(), min = start + PARK_MIN_NS, end = start + PARK_MAX_NS;
	int rc;
	for (;;) {
		uint64_t now = fiber_now_ns();
		uint64_t quiet = ops->last_start(ch->ring) + PARK_MIN_NS;
		uint64_t until = quiet > min ? quiet : min;
		/* Counted as running again here (ops->running), so "others" is anyone but us. */
		bool force = now >= end || (now >= until && !ops->busy(ch->ring));
		rc = write_finish(fc, o, off, count, stable, force);
		if (rc != FILEIO_WAIT)
			break;
		pc.kick.kicked = false;
		ops->running(ch->ring, false);
		/* Before then the idle kick is not armed: it would end each wait at once (nothing
		 * else runs) and the loop would spin on it. */
		bcache_wait_partial(bf, off, count, stable == FS_UNSTABLE, now < until ? until : end,
				    now < until ? NULL : &pc.kick);
		ops->running(ch->ring, true);
	}
	ops->park_end(ch->ring, &pc);
	return rc;
}
