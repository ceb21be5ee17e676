/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fs/cred.h"

#include "base/log.h"
#include "fs/fs_int.h"
#include "io/pool.h"
#include "io/ring.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

static bool same(const struct rpc_cred *a, const struct rpc_cred *b)
{
	return a->uid == b->uid && a->gid == b->gid && a->ngids == b->ngids &&
	       memcmp(a->gids, b->gids, a->ngids * sizeof a->gids[0]) == 0;
}

/* As knfsd (nfsd_setuser): a caller other than root loses, with the file-system capabilities that
 * setfsuid() already drops, CAP_SYS_RESOURCE, so quotas and the file system's reserved blocks
 * hold for NFS users; root gets it back. Per thread (capset of pid 0), as the fs ids are; an
 * io_uring personality registered afterwards carries it. A daemon that never had the capability
 * (not in its permitted set) has nothing to do. */
static int resource_cap(bool on)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	unsigned i = CAP_TO_INDEX(CAP_SYS_RESOURCE);
	uint32_t bit = CAP_TO_MASK(CAP_SYS_RESOURCE);
	if (syscall(SYS_capget, &h, d) < 0)
		return -errno;
	if (!(d[i].permitted & bit) || !!(d[i].effective & bit) == on)
		return 0;
	d[i].effective = on ? d[i].effective | bit : d[i].effective & ~bit;
	return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

static int switch_to(uid_t uid, gid_t gid, size_t ngids, const gid_t *gids)
{
	/* Raw syscall: glibc's setgroups() is process-wide (it signals every thread). */
	if (syscall(SYS_setgroups, ngids, gids) < 0)
		return -errno;
	setfsgid(gid);
	setfsuid(uid);
	/* setfsuid/setfsgid report no error; read back to be sure the switch happened. */
	if ((uid_t)setfsuid((uid_t)-1) != uid || (gid_t)setfsgid((gid_t)-1) != gid)
		return -EPERM;
	return resource_cap(uid == 0);
}

static int state_root(struct cred_state *s)
{
	if (s->is_root)
		return 0;
	int rc = switch_to(0, 0, 0, NULL);
	memset(&s->cur, 0, sizeof s->cur);
	s->is_root = rc == 0;
	return rc;
}

static int state_apply(struct cred_state *s, const struct rpc_cred *cred)
{
	if (cred->uid == 0 && cred->gid == 0 && cred->ngids == 0)
		return state_root(s);
	if (!s->is_root && same(&s->cur, cred))
		return 0;
	int rc = switch_to(cred->uid, cred->gid, cred->ngids, cred->gids);
	if (rc < 0) {
		state_root(s);
		return rc;
	}
	s->cur = *cred;
	s->is_root = false;
	return 0;
}

int cred_apply(struct fs_chan *ch, const struct rpc_cred *cred)
{
	return state_apply(&ch->creds, cred);
}

int cred_root(struct fs_chan *ch)
{
	return state_root(&ch->creds);
}

int cred_access(int fd, int mode)
{
	/* AT_EACCESS: check with the fs ids we switched to, not the real uid. */
	if (syscall(SYS_faccessat2, fd, "", mode, AT_EMPTY_PATH | AT_EACCESS) < 0)
		return -errno;
	return 0;
}

void cred_save(void *arg)
{
	struct cred_saved *s = arg;
	s->cred = s->ch->creds.cur;
	s->root = s->ch->creds.is_root;
	s->set = true;
}

void cred_restore(void *arg)
{
	struct cred_saved *s = arg;
	if (!s->set)
		return;
	int rc = s->root ? cred_root(s->ch) : cred_apply(s->ch, &s->cred);
	if (rc < 0 && !s->root) {
		/* Never go on as root for a user: as nobody, its calls fail rather than overreach. */
		const struct rpc_cred nobody = {.uid = 65534, .gid = 65534};
		log_err("cannot restore a request's credentials: %s", strerror(-rc));
		cred_apply(s->ch, &nobody);
	}
}

/* ---- calls made on a pool thread, as the fiber that asked ---- */

/* Each pool thread's own identity, switched per call like a ring's. */
static _Thread_local struct cred_state pool_creds = {.is_root = true};

struct offload {
	long (*fn)(void *);
	void *arg;
	struct cred_state as;
};

static long run_offloaded(void *arg)
{
	struct offload *o = arg;
	int rc = o->as.is_root ? state_root(&pool_creds) : state_apply(&pool_creds, &o->as.cur);
	if (rc < 0) {
		state_root(&pool_creds);
		return rc;      /* not run at all rather than run as someone else */
	}
	return o->fn(o->arg);
}

static long offload_as(struct fs_chan *ch, struct cred_state as, long (*fn)(void *), void *arg)
{
	if (!ch)
		return fn(arg);
	struct offload o = {.fn = fn, .arg = arg, .as = as};
	return pool_run(ch->fs->pool, run_offloaded, &o);
}

long cred_offload(struct fs_chan *ch, long (*fn)(void *), void *arg)
{
	return offload_as(ch, ch ? ch->creds : (struct cred_state){.is_root = true}, fn, arg);
}

long cred_offload_root(struct fs_chan *ch, long (*fn)(void *), void *arg)
{
	return offload_as(ch, (struct cred_state){.is_root = true}, fn, arg);
}

void cred_offload_all(struct fs_chan *ch, unsigned n, long (*fn)(void *), void *const *args,
		      long *results)
{
	if (!ch || n > POOL_RUN_MAX) {
		for (unsigned i = 0; i < n; i++)
			results[i] = cred_offload(ch, fn, args[i]);
		return;
	}
	struct offload o[POOL_RUN_MAX];
	void *oa[POOL_RUN_MAX];
	for (unsigned i = 0; i < n; i++) {
		o[i] = (struct offload){.fn = fn, .arg = args[i], .as = ch->creds};
		oa[i] = &o[i];
	}
	pool_run_all(ch->fs->pool, n, run_offloaded, oa, results);
}

unsigned cred_offload_width(const struct fs_chan *ch)
{
	return ch ? pool_width(ch->fs->pool) : 1;
}

/* ---- io_uring personalities: a ring's SQEs carry their caller's credentials ---- */

/* Credential sets of one ring's recent callers, each registered as a personality. Bounded: a
 * client can send any uid and groups in AUTH_SYS, so the least recently used goes (a submitted
 * request keeps its own reference to the credentials; queued SQEs are submitted first). */
#define CRED_PERSONALITIES 64

struct personality {
	struct cred_state cs;
	int id;
	uint64_t used;
};

struct cred_personalities {
	struct personality p[CRED_PERSONALITIES];
	unsigned n;
	uint64_t clock;
};

static bool same_state(const struct cred_state *a, const struct cred_state *b)
{
	return a->is_root ? b->is_root : !b->is_root && same(&a->cur, &b->cur);
}

int cred_personality(struct fs_chan *ch)
{
	struct cred_personalities *ps = ch->personalities;
	if (!ps)
		return 0;
	struct personality *lru = NULL;
	for (unsigned i = 0; i < ps->n; i++) {
		if (same_state(&ps->p[i].cs, &ch->creds)) {
			ps->p[i].used = ++ps->clock;
			return ps->p[i].id;
		}
		if (!lru || ps->p[i].used < lru->used)
			lru = &ps->p[i];
	}
	/* Registered from the thread's credentials as they are now: the calling fiber's. */
	int id = io_ring_register_personality(ch->io);
	if (id <= 0)
		return 0;    /* not supported: the SQE is submitted at once instead */
	struct personality *slot = ps->n < CRED_PERSONALITIES ? &ps->p[ps->n++] : lru;
	if (slot == lru) {
		/* SQEs prepared with it may still wait for the loop's submit: send them first (once
		 * submitted, a request holds its own reference to the credentials). */
		io_ring_submit(ch->io);
		io_ring_unregister_personality(ch->io, lru->id);
	}
	*slot = (struct personality){.cs = ch->creds, .id = id, .used = ++ps->clock};
	return id;
}

int cred_personalities_init(struct fs_chan *ch)
{
	ch->personalities = calloc(1, sizeof *ch->personalities);
	return ch->personalities ? 0 : -ENOMEM;
}

void cred_personalities_free(struct fs_chan *ch)
{
	free(ch->personalities);   /* the ring's teardown drops the registrations */
	ch->personalities = NULL;
}
