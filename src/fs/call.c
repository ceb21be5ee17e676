/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A call's use of the file-system layer: its exports, its handles and whom it acts as; the verbs
 * that look at objects (attributes, access) and MNT's. statx and faccessat2 on an open descriptor
 * run in place (memory only), and so do a name's statx and handle where the dentry cache has the
 * name (RESOLVE_CACHED); name_to_handle_at by name, open_by_handle_at and MNT's openat2 on the
 * pool. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/log.h"
#include "conf/export.h"
#include "conf/peername.h"
#include "fs/fileio.h"
#include "fs/fs_int.h"
#include "fs/verifier.h"
#include "io/ring.h"

void fs_call_begin(struct fs_call *fc, struct fs_chan *ch, const struct rpc_cred *cred,
		   const struct sockaddr_storage *peer, struct arena *arena, struct record_mem *rec)
{
	*fc = (struct fs_call){.ch = ch, .cred = *cred, .peer = peer, .arena = arena, .rec = rec,
			       .tbl = ch ? exptable_get(ch) : NULL};
}

void fs_call_end(struct fs_call *fc)
{
	if (!fc->ch)
		return;
	fh_unpin_all(fc);
	if (fc->tbl)
		exptable_put(fc->ch, fc->tbl);
	fc->tbl = NULL;
}

static uint16_t peer_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return 0;
}

/* The confirmed name of the call's client, for wildcard rules (export_match_named). */
static const char *peer_name(void *arg)
{
	struct fs_call *fc = arg;
	return peer_confirmed_name(&fc->ch->names, fc->ch->fs->resolver, fc->peer, fc->arena);
}

/* The rule of exp that lets the call's client in, or NULL: none matches, or the rule wants a
 * privileged source port (secure) and the client's is not. A GSS call proves its user, which
 * is what a privileged port stood for: exports(5)'s secure holds only "requests not using
 * gss", as knfsd's nfsd_originating_port_ok. */
static const struct client_rule *client_rule(struct fs_call *fc, const struct export_rt *exp)
{
	const struct client_rule *rule = export_match_named(exp->cfg,
							    (const struct sockaddr *)fc->peer,
							    peer_name, fc);
	bool gss = fc->cred.flavor == RPC_AUTH_GSS;
	return rule && !(rule->secure && !gss && peer_port(fc->peer) >= 1024) ? rule : NULL;
}

/* o is its export's root (a statx of its O_PATH descriptor: only on the root bypass's path). */
static bool is_export_root(const struct fh_obj *o)
{
	struct statx st;
	return statx(o->fd, "", AT_EMPTY_PATH, STATX_INO, &st) == 0 &&
	       st.stx_ino == o->exp->root_ino;
}

/* Whether the rule's sec= lets the call in; if not, the dispatcher is told (wrongsec). NLM's
 * AUTH_SYS and AUTH_NONE calls pass whatever sec= says (sec_exempt), as knfsd's NFSD_MAY_LOCK
 * and NFSD_MAY_BYPASS_GSS let lockd's through, and so do GETATTR, FSINFO and FSSTAT of the
 * export's root (root_bypass). */
static bool flavor_ok(struct fs_call *fc, const struct client_rule *rule, const struct fh_obj *o)
{
	bool clear = fc->cred.flavor != RPC_AUTH_GSS;
	if (export_flavor_ok(rule, &fc->cred) || (fc->sec_exempt && clear) ||
	    (fc->root_bypass && clear && is_export_root(o)))
		return true;
	uint32_t f = rpc_cred_pseudoflavor(&fc->cred);
	const char *name = config_flavor_name(f);
	log_debug("flavor %s (%u) not in the sec= of the client's rule on export %s",
		  name ? name : "?", (unsigned)f, o->exp->cfg->path);
	fc->wrongsec = true;
	return false;
}

int fs_fh_get(struct fs_call *fc, const void *fh, size_t len, struct fh_obj *out)
{
	int err = 0;
	switch (fh_resolve(fc, fh, len, out, &err)) {
	case FH_OK: break;
	case FH_BADHANDLE: return -FS_EBADHANDLE;
	case FH_STALE: return -ESTALE;
	case FH_ERR:
		log_ratelimited(&fc->ch->fs->fh_log, LOG_WARNING, "cannot open file handle: %s",
				strerror(err));
		return -err;
	}
	const struct client_rule *rule = client_rule(fc, out->exp);
	if (!rule) {
		log_debug("client not allowed on export %s", out->exp->cfg->path);
		return -EACCES;
	}
	if (!flavor_ok(fc, rule, out))
		return -EACCES;
	if (rule->subtree_check && !fh_in_subtree(out)) {
		log_debug("handle outside export %s (subtree_check)", out->exp->cfg->path);
		return -ESTALE;
	}
	/* Credentials of the first handle's export win (RENAME/LINK name two handles of one export). */
	if (!fc->exp) {
		fc->exp = out->exp;
		fc->rule = rule;
		export_squash(rule, &fc->cred);
	} else if (fc->exp != out->exp) {
		return -EXDEV;
	}
	return fs_as_caller(fc) < 0 ? -FS_ESERVERFAULT : 0;
}

int fs_getattr(struct fs_call *fc, const struct fh_obj *o, struct statx *st)
{
	if (fs_as_caller(fc) < 0)
		return -FS_ESERVERFAULT;
	/* An open inode's attributes are in memory, so statx on the descriptor itself never waits
	 * for the disk; through the ring it is always handed to an io-wq thread, which cost two
	 * thread switches per call, four per WRITE (its pre- and post-op attributes). */
	struct fileio_size_seq seq;
	fileio_size_seq(o, &seq);
	int rc = statx(o->fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
		       STATX_BASIC_STATS | STATX_BTIME, st) < 0 ? -errno : 0;
	/* The handle's file was removed behind our back (its descriptor outlives the last link). */
	if (rc == 0 && st->stx_nlink == 0)
		return -ESTALE;
	if (rc == 0 && S_ISREG(st->stx_mode))
		fileio_fix_size(fc->ch, (struct fh_obj *)o, st, &seq);
	return rc;
}

/* The name's inode opened O_PATH from the dentry cache alone (RESOLVE_CACHED: memory only, so
 * in place), or -EAGAIN where a lookup would go to the disk (or the kernel predates the flag).
 * The caller's search permission on dirfd is checked as a statx by name checks it. */
static int open_cached(int dirfd, const char *name)
{
	struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC, .resolve = RESOLVE_CACHED};
	long fd = syscall(SYS_openat2, dirfd, name, &how, sizeof how);
	if (fd >= 0)
		return (int)fd;
	return errno == EINVAL || errno == ENOSYS || errno == E2BIG ? -EAGAIN : -errno;
}

/* statx of dir/name (name "": dir itself), as the caller. Where the dentry cache has the name, in
 * place through its O_PATH descriptor, left in *fdp for the caller to keep or close; else by the
 * ring, whose statx is always handed to an io-wq thread (two thread switches in every LOOKUP and
 * REMOVE), *fdp -1. */
static int stat_name(struct fs_call *fc, const struct fh_obj *dir, const char *name,
		     struct statx *st, int *fdp)
{
	const unsigned mask = STATX_BASIC_STATS | STATX_BTIME;
	*fdp = -1;
	if (!name[0])
		return statx(dir->fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, mask, st) < 0 ? -errno
											      : 0;
	int fd = open_cached(dir->fd, name);
	if (fd == -EAGAIN)
		return io_statx(fc->ch->io, dir->fd, name, AT_SYMLINK_NOFOLLOW, mask, st);
	if (fd < 0)
		return fd;
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, mask, st) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	*fdp = fd;
	return 0;
}

int fs_getattr_at(struct fs_call *fc, const struct fh_obj *dir, const char *name,
		  struct statx *st)
{
	if (fs_as_caller(fc) < 0)
		return -FS_ESERVERFAULT;
	int fd;
	int rc = stat_name(fc, dir, name, st, &fd);
	if (fd >= 0)
		close(fd);
	return rc;
}

int fs_stat_plain(struct fs_call *fc, const struct fh_obj *o, struct statx *st)
{
	(void)fc;
	return statx(o->fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_INO | STATX_UID, st) < 0 ? -errno
											  : 0;
}

int fs_access(struct fs_call *fc, const struct fh_obj *o, int mode)
{
	if (fs_as_caller(fc) < 0)
		return -FS_ESERVERFAULT;
	return cred_access(o->fd, mode);
}

int fs_permission(struct fs_call *fc, const struct fh_obj *o, const struct statx *st, int mode)
{
	/* Root that was not squashed passes the kernel's permission check anyway (an immutable
	 * file or a read-only mount still fails the I/O itself): spare the syscall. */
	if (fc->cred.uid == 0 || fs_access(fc, o, mode) == 0 || st->stx_uid == fc->cred.uid)
		return 0;
	return -EACCES;
}

/* Whether st, found by name inside exp, lies past a mount point: another file system, or the
 * root of a mount inside the export (a bind mount of a directory of the same device has the
 * export's st_dev). Not crossed, as knfsd without crossmnt; the export root itself may be a
 * mount root (a whole file system exported). */
bool fs_off_export(const struct export_rt *exp, const struct statx *st)
{
	if (makedev(st->stx_dev_major, st->stx_dev_minor) != exp->dev)
		return true;
	bool mount_root = (st->stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
			  (st->stx_attributes & STATX_ATTR_MOUNT_ROOT);
	return mount_root && st->stx_ino != exp->root_ino;
}

/* The handle of the object fd opened (by name), made in place and fd left in the handle cache,
 * as CREATE does (describe_new): no name_to_handle_at on the pool, and the calls that follow a
 * LOOKUP (GETATTR, ACCESS, READ) find the object open. Not under subtree_check: the kernel makes
 * connectable handles only from a name. false: fd untouched, the caller composes by name. */
static bool adopt_found(struct fs_call *fc, const struct fh_obj *dir, int fd,
			const struct statx *st, struct fh *fh)
{
	struct fh_kernel kh;
	if (dir->exp->subtree_check || fh_kernel_at(fd, "", false, &kh) < 0)
		return false;
	fh_seal(fc->ch->fs, dir->exp, &kh, fh);
	fh_adopt(fc->ch, fh, fd, makedev(st->stx_dev_major, st->stx_dev_minor), st->stx_ino);
	return true;
}

int fs_lookup(struct fs_call *fc, const struct fh_obj *dir, const char *name, struct statx *st,
	      struct fh *fh)
{
	if (fs_as_caller(fc) < 0)
		return -FS_ESERVERFAULT;
	int fd;
	int rc = stat_name(fc, dir, name, st, &fd);
	if (rc == 0 && fs_off_export(dir->exp, st))
		rc = -EACCES;   /* a mount point inside the export: not crossed */
	if (rc == 0 && fd >= 0 && adopt_found(fc, dir, fd, st, fh))
		return 0;
	if (fd >= 0)
		close(fd);
	if (rc == 0 && fh_compose(fc->ch, dir->exp, dir->fd, name, fh) < 0)
		fh->len = 0;
	return rc;
}

int fs_open_at(struct fs_call *fc, const struct fh_obj *dir, const char *name, struct fh_obj *out)
{
	struct fh fh;
	if (fs_as_caller(fc) < 0)
		return -FS_ESERVERFAULT;
	int rc = fh_compose(fc->ch, dir->exp, dir->fd, name, &fh);
	return rc < 0 ? rc : fs_fh_get(fc, fh.data, fh.len, out);
}

void fs_verifier(struct fs_call *fc, char out[8])
{
	fs_write_verf(fc->ch->fs, out);
}

int fs_as_server(struct fs_call *fc)
{
	return cred_root(fc->ch) < 0 ? -FS_ESERVERFAULT : 0;
}

long fs_blocking(struct fs_call *fc, long (*fn)(void *arg), void *arg)
{
	return cred_offload_root(fc->ch, fn, arg);
}

/* ---- MNT ---- */

const struct export_rt *fs_export_of(struct fs_call *fc, const char *path)
{
	const char *rest;
	return exptable_for_path(fc->tbl, path, &rest);
}

struct open_beneath {
	int root_fd;
	const char *rest;
};

static long do_open_beneath(void *arg)
{
	struct open_beneath *a = arg;
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV};
	long fd = syscall(SYS_openat2, a->root_fd, a->rest, &how, sizeof how);
	return fd >= 0 ? fd : -errno;
}

/* As the server, like rpc.mountd: whatever identity the ring thread had from its last request
 * plays no part. Access to what the handle reaches is checked per NFS request, as the caller. */
int fs_mount(struct fs_call *fc, const char *path, struct fh *fh, const struct export_rt **expp)
{
	if (cred_root(fc->ch) < 0)
		return -FS_ESERVERFAULT;
	const char *rest;
	const struct export_rt *exp = exptable_for_path(fc->tbl, path, &rest);
	if (!exp)
		return -ENOENT;
	*expp = exp;
	if (!(fc->rule = client_rule(fc, exp)))
		return -EACCES;
	if (!*rest)
		return fh_compose(fc->ch, exp, exp->root_fd, "", fh) == 0 ? 0 : -FS_ESERVERFAULT;
	struct open_beneath a = {exp->root_fd, rest};
	long rc = cred_offload(fc->ch, do_open_beneath, &a);
	if (rc < 0)
		return rc == -ENOTDIR || rc == -ENOENT ? (int)rc : -EACCES;
	int fd = (int)rc;
	rc = fh_compose(fc->ch, exp, fd, "", fh);
	close(fd);
	return rc == 0 ? 0 : -FS_ESERVERFAULT;
}
