/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fs/exptable.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <time.h>
#include <unistd.h>

#include "conf/config.h"
#include "fs/fh.h"
#include "fs/fs_int.h"
#include "io/fiber.h"
#include "base/log.h"
#include "fs/nocmtime.h"

#define RELEASE_WAIT_MS 30000     /* a reload waits this long for requests begun before it */

/* ---- opening one export ---- */

/* Only a cached export writes after the reply, and so needs writes that leave the times alone
 * (a direct one's WRITE writes, and the kernel stamps the times then). Asked once, here. */
static void probe_times(struct export_rt *e, int fd)
{
	if (e->cfg->write_mode != IO_MODE_CACHED)
		return;
	int q = nocmtime_open(fd, e->root_fd, true);
	e->keeps_times = q >= 0;
	if (q >= 0)
		close(q);
	else
		log_info("export %s: write-behind will move mtime and ctime (%s: only XFS keeps them)",
			 e->cfg->path, strerror(-q));
}

static bool seek_fits(int fd, uint64_t off)
{
	return lseek(fd, (off_t)off, SEEK_SET) >= 0;
}

static bool trunc_fits(int fd, uint64_t off)
{
	return ftruncate(fd, (off_t)off) == 0;
}

/* The largest x <= hi that fits (0 always does). */
static uint64_t largest(int fd, uint64_t hi, bool (*fits)(int fd, uint64_t off))
{
	uint64_t a = 0, b = hi;
	while (a < b) {
		uint64_t mid = a + (b - a + 1) / 2;
		if (fits(fd, mid))
			a = mid;
		else
			b = mid - 1;
	}
	return a;
}

/* The file system's maximum file size, on a regular file of it. lseek(SEEK_SET) is bounded by
 * the kernel's generic_file_llseek_size() at the very s_maxbytes that write() and ftruncate()
 * refuse with EFBIG past (ext4 passes its per-file limit, XFS, btrfs, tmpfs and FAT the
 * superblock's): a seek changes nothing, where a search with ftruncate would allocate the whole
 * size on a file system without sparse files (FAT), and a table by file system type would go
 * stale (ext4's limit depends on its block size and on extents). If ftruncate disagrees (a file
 * system with an llseek of its own), the search runs again on what ftruncate takes: such file
 * systems keep files sparse. At most RLIMIT_FSIZE: past it the kernel sends SIGXFSZ, whose
 * default action ends the daemon. */
static uint64_t probe_maxbytes(int fd)
{
	uint64_t hi = INT64_MAX;
	struct rlimit rl;
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < hi)
		hi = rl.rlim_cur;
	uint64_t max = largest(fd, hi, seek_fits);
	if (max < hi ? trunc_fits(fd, max + 1) : !trunc_fits(fd, max))
		max = largest(fd, hi, trunc_fits);
	if (lseek(fd, 0, SEEK_SET) < 0 || ftruncate(fd, 0) < 0)
		log_debug("resetting the size probe's file: %s", strerror(errno));
	return max;
}

/* The export's maximum file size, probed on fd (or on a file of its own when the file system
 * refused O_DIRECT for fd). A file system where no file can be made (read-only) gets no bound:
 * its WRITEs fail anyway. */
static uint64_t size_probe(const struct export_rt *e, int fd)
{
	int own = fd < 0 ? openat(e->root_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600) : -1;
	if (fd < 0 && own < 0)
		return INT64_MAX;
	uint64_t max = probe_maxbytes(fd >= 0 ? fd : own);
	if (own >= 0)
		close(own);
	return max;
}

/* Does a file system of this type move a directory's ctime on every change of its entries,
 * stamped as statx shows it? Local ones whose code says so; not those whose directories another
 * host may change (NFS, FUSE, cluster file systems). */
static bool times_kept_by(long f_type)
{
	return f_type == XFS_SUPER_MAGIC || f_type == EXT4_SUPER_MAGIC ||
	       f_type == BTRFS_SUPER_MAGIC || f_type == TMPFS_MAGIC;
}

/* Can this export take O_DIRECT, and at what alignment? An unnamed temporary file tells without
 * leaving anything behind. */
static void probe_export(struct export_rt *e)
{
	const struct export_cfg *c = e->cfg;
	struct statfs sfs;
	size_t block = 4096, dio_align = 0;
	bool fs_known = fstatfs(e->root_fd, &sfs) == 0;
	if (fs_known && (size_t)sfs.f_bsize > block)
		block = (size_t)sfs.f_bsize;
	e->list_handles = fs_known && times_kept_by(sfs.f_type);
	int fd = openat(e->root_fd, ".", O_TMPFILE | O_RDWR | O_DIRECT | O_CLOEXEC, 0600);
	bool direct_ok = fd >= 0;
	int direct_err = errno;
	e->maxbytes = size_probe(e, fd);
	if (fd >= 0) {
		struct statx st;
		if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &st) == 0 && (st.stx_mask & STATX_DIOALIGN))
			dio_align = st.stx_dio_offset_align;
		probe_times(e, fd);
		e->extent_hints = fh_set_extent_hint(fd) == 1;
		close(fd);
	}
	if (dio_align > block)
		block = dio_align;
	e->block = c->block ? c->block : block;
	e->write_mode = c->write_mode;
	e->read_mode = c->read_mode;
	bool cache_writes = io_mode_uses_cache(e->write_mode);
	if (!direct_ok && (cache_writes || e->read_mode == IO_MODE_DIRECT)) {
		log_warn("export %s: file system refuses O_DIRECT (%s); serving it as dontcache", c->path,
			 strerror(direct_err));
		if (cache_writes)
			e->write_mode = IO_MODE_DONTCACHE;
		if (e->read_mode == IO_MODE_DIRECT)
			e->read_mode = IO_MODE_DONTCACHE;
	}
	/* The cache writes whole blocks: one ending past the bound would fail at write-behind. */
	if (io_mode_uses_cache(e->write_mode))
		e->maxbytes &= ~(uint64_t)(e->block - 1);
	log_info("export %s fsid %u block %zu write %s read %s max file size %llu", c->path, c->fsid,
		 e->block, io_mode_name(e->write_mode), io_mode_name(e->read_mode),
		 (unsigned long long)e->maxbytes);
}

static bool any_subtree_check(const struct export_cfg *c)
{
	for (size_t r = 0; r < c->nclients; r++)
		if (c->clients[r].subtree_check)
			return true;
	return false;
}

static int open_one(struct export_rt *e, const struct export_cfg *c)
{
	*e = (struct export_rt){.cfg = c, .owns_root = true};
	e->root_fd = open(c->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat sb;
	if (e->root_fd < 0 || fstat(e->root_fd, &sb) < 0) {
		int err = errno;
		log_err("export %s: %s", c->path, strerror(err));
		if (e->root_fd >= 0)
			close(e->root_fd);
		e->root_fd = -1;
		return -err;
	}
	e->dev = sb.st_dev;
	e->root_ino = sb.st_ino;
	e->subtree_check = any_subtree_check(c);
	probe_export(e);
	return 0;
}

/* Two exports of one file system, one through nfsd-uc's cache and one through the page cache: a
 * file reached through both must not show the paged one stale cached bytes, nor have them
 * written over its newer ones later. */
static void mark_shared_caches(struct export_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		struct export_rt *e = &t->exports[i];
		for (size_t j = 0; j < t->n && !io_mode_uses_cache(e->write_mode); j++)
			if (j != i && t->exports[j].dev == e->dev &&
			    io_mode_uses_cache(t->exports[j].write_mode) && !e->shares_cache) {
				e->shares_cache = true;
				/* its cache handles must take the inode's block size (the first open
				 * sets it), or the cached export's would be refused */
				e->block = t->exports[j].block;
				log_info("export %s shares its file system with a cached export: its "
					 "calls flush and drop what the cache holds of a file first",
					 e->cfg->path);
			}
	}
}

static void table_free(struct export_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		if (t->exports[i].owns_root && t->exports[i].root_fd >= 0)
			close(t->exports[i].root_fd);
	free(t->exports);
	if (t->owns_cfg) {
		config_free(t->cfg);
		free(t->cfg);
	}
	free(t);
}

static struct export_table *table_new(struct config *cfg, bool owns_cfg)
{
	struct export_table *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->exports = calloc(cfg->nexports ? cfg->nexports : 1, sizeof *t->exports);
	if (!t->exports) {
		free(t);
		return NULL;
	}
	t->cfg = cfg;
	t->owns_cfg = owns_cfg;
	return t;
}

int exptable_open(struct fs *fs)
{
	struct export_table *t = table_new(fs->cfg, false);
	if (!t)
		return -ENOMEM;
	for (; t->n < fs->cfg->nexports; t->n++) {
		int rc = open_one(&t->exports[t->n], &fs->cfg->exports[t->n]);
		if (rc < 0) {
			table_free(t);
			return rc;
		}
	}
	mark_shared_caches(t);
	fs->place_align = 4096;
	for (size_t i = 0; i < t->n; i++)
		while (fs->place_align < t->exports[i].block)
			fs->place_align *= 2;
	fs->table = t;
	return 0;
}

void exptable_close_all(struct fs *fs)
{
	pthread_mutex_lock(&fs->table_mu);
	struct export_table *t = fs->table;
	fs->table = NULL;
	pthread_mutex_unlock(&fs->table_mu);
	table_free(t);
	for (size_t i = 0; i < fs->nretired; i++)
		table_free(fs->retired[i]);
	free(fs->retired);
	fs->retired = NULL;
	fs->nretired = 0;
}

void fs_exports_each(struct fs *fs, void (*fn)(void *ctx, const char *path), void *ctx)
{
	pthread_mutex_lock(&fs->table_mu);
	for (size_t i = 0; fs->table && i < fs->table->n; i++)
		fn(ctx, fs->table->exports[i].cfg->path);
	pthread_mutex_unlock(&fs->table_mu);
}

const struct export_rt *exptable_by_fsid(const struct export_table *t, uint32_t fsid)
{
	for (size_t i = 0; t && i < t->n; i++)
		if (t->exports[i].cfg->fsid == fsid)
			return &t->exports[i];
	return NULL;
}

const struct export_rt *exptable_for_path(const struct export_table *t, const char *path,
					  const char **rest)
{
	const struct export_rt *best = NULL;
	size_t best_len = 0;
	for (size_t i = 0; t && i < t->n; i++) {
		const char *ep = t->exports[i].cfg->path;
		size_t n = strlen(ep);
		if (strcmp(ep, "/") == 0)
			n = 0;
		if (strncmp(path, ep, n) == 0 && (path[n] == 0 || path[n] == '/') && (!best || n > best_len)) {
			best = &t->exports[i];
			best_len = n;
		}
	}
	if (best) {
		*rest = path + best_len;
		while (**rest == '/')
			(*rest)++;
	}
	return best;
}

/* ---- the rings' side ---- */

static void release_old(struct fs_chan *ch)
{
	ch->old_table = NULL;
	atomic_store(&ch->table_released, ch->table->gen);
}

struct export_table *exptable_get(struct fs_chan *ch)
{
	ch->table_refs++;
	return ch->table;
}

void exptable_put(struct fs_chan *ch, struct export_table *t)
{
	if (t == ch->table)
		ch->table_refs--;
	else if (t && t == ch->old_table && --ch->old_refs == 0)
		release_old(ch);
}

/* In the ring, between fibers: the requests that begin from now on use the new table. */
static void on_table(struct fiber_msg *m)
{
	struct fs_chan *ch = (struct fs_chan *)((char *)m - offsetof(struct fs_chan, table_msg));
	ch->old_table = ch->table;
	ch->old_refs = ch->table_refs;
	ch->table = ch->table_next;
	ch->table_refs = 0;
	if (ch->old_refs == 0)
		release_old(ch);
}

/* ---- reload, on the main thread ---- */

static bool all_released(struct fs *fs, unsigned gen)
{
	for (unsigned i = 0; i < fs->nchans; i++)
		if (atomic_load(&fs->chans[i].table_released) != gen)
			return false;
	return true;
}

/* Until every ring let go of the table before gen, at most RELEASE_WAIT_MS; a SIGTERM or SIGINT
 * meanwhile ends the wait at once (fs->stop_pending: the server stops next). */
static bool wait_released(struct fs *fs, unsigned gen)
{
	struct timespec tick = {0, 10 * 1000 * 1000};
	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	for (int ms = 0; !all_released(fs, gen); ms += 10) {
		if (ms >= RELEASE_WAIT_MS || fs->stop_pending)
			return false;
		if (sigtimedwait(&stop, NULL, &tick) > 0)
			fs->stop_pending = true;
	}
	return true;
}

static const struct export_rt *old_export(const struct export_table *t, const char *path)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->exports[i].cfg->path, path) == 0)
			return &t->exports[i];
	return NULL;
}

/* An export both tables have keeps what start-up learnt of it (its descriptor, block, modes:
 * those and its fsid change only with a restart); its client list and options are the new
 * file's. */
static void keep_export(struct export_rt *e, const struct export_rt *was, struct export_cfg *c)
{
	*e = *was;
	e->cfg = c;
	e->owns_root = false;          /* until the new table is the one in force */
	e->subtree_check = any_subtree_check(c);
	if (c->fsid != was->cfg->fsid) {
		log_warn("reload: export %s: fsid %u ignored until a restart (handles name %u)",
			 c->path, c->fsid, was->cfg->fsid);
		c->fsid = was->cfg->fsid;
	}
	if (c->write_mode != was->cfg->write_mode || c->read_mode != was->cfg->read_mode ||
	    c->block != was->cfg->block)
		log_warn("reload: export %s: write_mode, read_mode and block ignored until a restart",
			 c->path);
}

/* The new file's exports: kept ones from old, new ones opened. NULL when one cannot open. */
static struct export_table *build(struct fs *fs, const struct export_table *old,
				  struct config *nc, size_t *added)
{
	struct export_table *t = table_new(nc, true);
	if (!t)
		return NULL;
	*added = 0;
	for (; t->n < nc->nexports; t->n++) {
		struct export_cfg *c = &nc->exports[t->n];
		const struct export_rt *was = old_export(old, c->path);
		if (was) {
			keep_export(&t->exports[t->n], was, c);
			continue;
		}
		if (open_one(&t->exports[t->n], c) < 0) {
			t->owns_cfg = false;   /* the caller frees nc */
			table_free(t);
			return NULL;
		}
		(*added)++;
		if (t->exports[t->n].block > fs->place_align)
			log_warn("reload: export %s: its %zu-byte blocks get aligned WRITE buffers "
				 "only after a restart", c->path, t->exports[t->n].block);
	}
	mark_shared_caches(t);
	return t;
}

#define SAME_STR(a, b) ((a) == (b) || ((a) && (b) && strcmp((a), (b)) == 0))

/* The settings a running server cannot change: say which the new file changes. */
static void note_restart_only(const struct config *run, const struct config *nc)
{
	const char *changed[40];   /* room for every setting below */
	size_t n = 0;
#define CHECK(field, name) do { if (run->field != nc->field) changed[n++] = name; } while (0)
	if (!SAME_STR(run->listen, nc->listen))
		changed[n++] = "listen";
	CHECK(port, "port");
	CHECK(mount_port, "mount_port");
	CHECK(threads, "threads");
	CHECK(requests_per_connection, "requests_per_connection");
	CHECK(requests_per_ring, "requests_per_ring");
	CHECK(blocking_threads, "blocking_threads");
	CHECK(max_record, "max_record");
	CHECK(max_connections, "connections");
	CHECK(max_connections_per_client, "connections_per_client");
	CHECK(receive_memory, "receive_memory");
	CHECK(receive_memory_per_connection, "receive_memory_per_connection");
	CHECK(receive_memory_per_client, "receive_memory_per_client");
	CHECK(idle_timeout, "idle_timeout");
	CHECK(record_timeout, "record_timeout");
	CHECK(reply_cache_entries, "reply_cache_entries");
	CHECK(reply_cache_size, "reply_cache_size");
	CHECK(mount_list_entries, "mount_list_entries");
	CHECK(rpcbind, "rpcbind");
	CHECK(cache_size, "[cache] size");
	CHECK(cache_file_size, "[cache] file_size");
	CHECK(cache_writeback_depth, "[cache] writeback_depth");
	CHECK(cache_sync_behind, "[cache] sync_behind");
	CHECK(lock_port, "[lock] port");
	CHECK(grace_period, "[lock] grace_period");
	CHECK(max_locks, "[lock] locks");
	CHECK(max_locks_per_client, "[lock] locks_per_client");
	CHECK(max_waiters, "[lock] waiters");
	CHECK(max_waiters_per_client, "[lock] waiters_per_client");
	CHECK(max_names_per_client, "[lock] names_per_client");
	CHECK(metrics_connections, "[metrics] connections");
	CHECK(metrics_connections_per_client, "[metrics] connections_per_client");
	CHECK(metrics_timeout, "[metrics] timeout");
	CHECK(gss_contexts, "gss_contexts");
	CHECK(gss_contexts_per_client, "gss_contexts_per_client");
	CHECK(gss_window, "gss_window");
#undef CHECK
	if (!SAME_STR(run->state_dir, nc->state_dir))
		changed[n++] = "state_dir";
	if (!SAME_STR(run->keytab, nc->keytab))
		changed[n++] = "keytab";
	if (!SAME_STR(run->metrics_listen, nc->metrics_listen))
		changed[n++] = "[metrics] listen";
	for (size_t i = 0; i < n; i++)
		log_warn("reload: %s changed: ignored until a restart", changed[i]);
}

/* Every ring takes t; then the old table goes once they all let go of it (or is kept for the
 * exit, if requests from before hold it too long). */
static void publish(struct fs *fs, struct export_table *t)
{
	struct export_table *old = fs->table;
	t->gen = old->gen + 1;
	for (size_t i = 0; i < t->n; i++)
		t->exports[i].owns_root = true;
	for (size_t i = 0; i < old->n; i++)
		if (old_export(t, old->exports[i].cfg->path))
			old->exports[i].owns_root = false;   /* the new table closes it */
	pthread_mutex_lock(&fs->table_mu);
	fs->table = t;
	pthread_mutex_unlock(&fs->table_mu);
	for (unsigned i = 0; i < fs->nchans; i++) {
		struct fs_chan *ch = &fs->chans[i];
		ch->table_next = t;
		ch->table_msg = (struct fiber_msg){.fn = on_table};
		fiber_sched_post(ch->sched, &ch->table_msg);
	}
	if (wait_released(fs, t->gen)) {
		table_free(old);
		return;
	}
	log_warn("reload: requests begun before it still run after %d s; the old exports are freed "
		 "at exit", RELEASE_WAIT_MS / 1000);
	struct export_table **r = realloc(fs->retired, (fs->nretired + 1) * sizeof *r);
	if (r) {
		fs->retired = r;
		fs->retired[fs->nretired++] = old;
	}   /* else: leaked, which is safer than freeing what a request may use */
}

/* One line per error of the file: a journal line may not hold a newline. */
static void log_reload_refused(const char *errors)
{
	while (*errors) {
		size_t n = strcspn(errors, "\n");
		log_err("reload: %.*s", (int)n, errors);
		errors += n + (errors[n] == '\n');
	}
	log_err("reload refused: the configuration in force stays");
}

void exptable_reload(struct fs *fs, const char *file, bool verbose)
{
	char err[8192];
	struct config *nc = calloc(1, sizeof *nc);
	if (!nc || config_load(file, nc, err, sizeof err) < 0) {
		log_reload_refused(nc ? err : strerror(ENOMEM));
		free(nc);
		return;
	}
	/* A reload changes the exports only: a file with none would just drop them all, which an
	 * editor's half-written file does more often than an administrator means it. */
	if (!nc->nexports) {
		log_err("reload: %s has no [export] section; the configuration in force stays (a "
			"restart serves no export)", file);
		config_free(nc);
		free(nc);
		return;
	}
	if (!all_released(fs, fs->table->gen) && !wait_released(fs, fs->table->gen)) {
		if (!fs->stop_pending)
			log_err("reload: the previous reload's requests still run; try again later");
		config_free(nc);
		free(nc);
		return;
	}
	note_restart_only(fs->cfg, nc);
	size_t added;
	struct export_table *t = build(fs, fs->table, nc, &added);
	if (!t) {
		log_err("reload: an export cannot be opened; the configuration in force stays");
		config_free(nc);
		free(nc);
		return;
	}
	if (!verbose)
		log_set_level(nc->log_level);
	size_t before = fs->table->n, kept = t->n - added;
	publish(fs, t);
	log_info("reloaded %s: %zu export(s), %zu new, %zu removed", file, t->n, added, before - kept);
}
