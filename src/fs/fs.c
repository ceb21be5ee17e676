/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The file-system layer's start and end (main thread): the key of the handles, the exports, the
 * cache, the blocking pool and each ring's part. Blocking calls are fine here: no ring runs. */
#include "fs/fs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/log.h"
#include "cache/bcache.h"
#include "conf/config.h"
#include "fs/exptable.h"
#include "fs/fh.h"
#include "fs/fileio.h"
#include "fs/fs_int.h"
#include "fs/listcache.h"
#include "fs/verifier.h"
#include "io/pool.h"

/* Threads for reverse and forward lookups of clients' names (wildcard rules), apart from the
 * blocking pool so that a slow DNS server cannot hold that. */
#define RESOLVER_THREADS 2
/* The listing cache's handles: a few directories of tens of thousands of entries (about 6 MiB,
 * taken on the first listing). */
#define LISTCACHE_SLOTS 65536

/* Each ring's handle cache keeps up to five descriptors per file: O_PATH, read/write, O_DIRECT,
 * and for a cached export on XFS the cache's two that leave the times alone (nocmtime.h). Take
 * the hard limit and size the caches to fit in it, with room for sockets. (Counted as three,
 * 4000 small files written through two rings held 19998 descriptors of 20000, and READs of them
 * failed with EMFILE; fh.c's relieve() is what is left for the sockets' share.) */
#define FDS_PER_HANDLE 5
static unsigned handle_cache_size(unsigned rings)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	getrlimit(RLIMIT_NOFILE, &rl);
	rlim_t room = rl.rlim_cur > 2048 ? rl.rlim_cur - 1024 : rl.rlim_cur / 2;
	rlim_t per = room / (FDS_PER_HANDLE * (rlim_t)(rings ? rings : 1));
	return per > 4096 ? 4096 : per < 16 ? 16 : (unsigned)per;
}

static int chans_new(struct fs *fs, unsigned n)
{
	fs->chans = calloc(n ? n : 1, sizeof *fs->chans);
	if (!fs->chans)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		struct fs_chan *ch = &fs->chans[i];
		*ch = (struct fs_chan){.fs = fs, .id = i, .creds = {.is_root = true}, .table = fs->table};
		atomic_store(&ch->table_released, fs->table ? fs->table->gen : 0);
		fs->nchans++;
		if (cred_personalities_init(ch) < 0 || !(ch->fhc = fh_cache_new(fs, fs->fh_cache_max)))
			return -ENOMEM;
	}
	return 0;
}

static int forgets_new(struct fs *fs);

/* Everything but the exports (opened first: the cache's reserve depends on their modes). */
static int fs_prepare(struct fs *fs, const struct fs_params *p)
{
	const struct config *cfg = p->cfg;
	if (fileio_cache_create(fs) < 0) {
		log_err("cannot create the boundary cache of %zu bytes", cfg->cache_size);
		return -1;
	}
	/* A test sets this to make every READDIR buffer take that long (a stuck file system). */
	const char *delay = getenv("NFSD_UC_FAULT_READDIR_DELAY_MS");
	if (delay && *delay) {
		fs->fault_readdir_delay_ms = (unsigned)strtoul(delay, NULL, 10);
		log_warn("fault seam: every READDIR buffer waits %u ms", fs->fault_readdir_delay_ms);
	}
	fs->pool = pool_new(cfg->blocking_threads, NULL, NULL);
	fs->resolver = fs->pool ? pool_new(RESOLVER_THREADS, NULL, NULL) : NULL;
	if (!fs->pool || !fs->resolver) {
		log_err("cannot start %u blocking threads: %s", cfg->blocking_threads, strerror(errno));
		return -1;
	}
	/* Without it every listing looks each entry's handle up: slower, not wrong. */
	fs->listcache = listcache_new(fs->fh_key, LISTCACHE_SLOTS);
	if (forgets_new(fs) < 0 || chans_new(fs, p->rings) < 0) {
		log_err("out of memory for the rings' handle caches");
		return -1;
	}
	return 0;
}

int fs_new(const struct fs_params *p, struct fs **out)
{
	struct fs *fs = calloc(1, sizeof *fs);
	*out = NULL;
	if (!fs)
		return -1;
	pthread_mutex_init(&fs->table_mu, NULL);
	fs->cfg = p->cfg;
	fs->ops = *p->ops;
	fs->fh_cache_max = p->fh_cache_max ? p->fh_cache_max : handle_cache_size(p->rings);
	int rc = p->fh_key ? 0 : fh_load_key(p->cfg->state_dir, fs->fh_key);
	if (p->fh_key)
		memcpy(fs->fh_key, p->fh_key, sizeof fs->fh_key);
	if (rc < 0) {
		log_err("state_dir %s: cannot load or create fh.key: %s", p->cfg->state_dir,
			strerror(-rc));
		free(fs);
		return -1;
	}
	fs_rotate_verf(fs);
	if (exptable_open(fs) < 0 || fs_prepare(fs, p) < 0) {
		fs_free(fs);
		return -1;
	}
	*out = fs;
	return 0;
}

static int forgets_new(struct fs *fs)
{
	fs->forgets = calloc(1, sizeof *fs->forgets);
	if (!fs->forgets)
		return -ENOMEM;
	pthread_mutex_init(&fs->forgets->lock, NULL);
	return 0;
}

void fs_free(struct fs *fs)
{
	if (!fs)
		return;
	/* A ring that never ran still has its (empty) handle cache: closed as on any thread
	 * without a ring, with plain calls. */
	for (unsigned i = 0; i < fs->nchans; i++) {
		fh_cache_free(fs->chans[i].fhc);
		cred_personalities_free(&fs->chans[i]);
		free(fs->chans[i].names);
	}
	free(fs->chans);
	pool_free(fs->resolver);
	pool_free(fs->pool);
	listcache_free(fs->listcache);
	bcache_destroy(fs->cache);
	exptable_close_all(fs);
	if (fs->forgets) {
		pthread_mutex_destroy(&fs->forgets->lock);
		free(fs->forgets);
	}
	pthread_mutex_destroy(&fs->table_mu);
	free(fs);
}

int fs_sync_exports(struct fs *fs)
{
	int rc = 0;
	for (size_t i = 0; fs->table && i < fs->table->n; i++) {
		const struct export_rt *e = &fs->table->exports[i];
		if (e->root_fd >= 0 && syncfs(e->root_fd) < 0) {
			log_err("export %s: syncfs: %s", e->cfg->path, strerror(errno));
			rc = -1;
		}
	}
	return rc;
}

void fs_reload(struct fs *fs, const char *file, bool verbose)
{
	exptable_reload(fs, file, verbose);
}

bool fs_stop_pending(const struct fs *fs)
{
	return fs->stop_pending;
}

size_t fs_nexports(const struct fs *fs)
{
	return fs->table ? fs->table->n : 0;
}

size_t fs_place_align(const struct fs *fs)
{
	return fs->place_align;
}

struct bcache *fs_cache(const struct fs *fs)
{
	return fs->cache;
}

uint64_t fs_stable_alone(const struct fs *fs)
{
	return atomic_load_explicit(&fs->stable_alone, memory_order_relaxed);
}

void fs_list_stats(const struct fs *fs, struct fs_list_stats *out)
{
	struct listcache_stats st;
	listcache_stats(fs->listcache, &st);
	*out = (struct fs_list_stats){.hits = st.hits, .misses = st.misses, .filed = st.filed};
}

struct fs_chan *fs_chan(struct fs *fs, unsigned ring)
{
	return ring < fs->nchans ? &fs->chans[ring] : NULL;
}
