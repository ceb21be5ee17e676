/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NLM versions 1, 3 and 4: the procedure tables and their handlers, as knfsd's fs/lockd
 * svc4proc.c / svcproc.c. Each handler resolves the NFS handle the call names, turns the call
 * into a 64-bit nlm_lockreq (versions 1 and 3 have 32-bit ranges) and asks the lock manager
 * (nlm.h). The _MSG variants do the same and send the result back as a _RES call of their own
 * (from the callback thread); their own reply is empty. We are no lock client: a GRANTED sent
 * to us is answered DENIED, and results (_RES) of calls we never make are ignored. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "fs/fs.h"
#include "svc/dispatch.h"
#include "base/sockaddr.h"
#include "lock/lk_table.h"
#include "lock/nlm.h"
#include "base/log.h"
#include "xdr/nlm_prot.h"

/* The parts of a lock every version's arguments have. */
struct lockin {
	const char *caller;
	const netobj *fh, *oh;
	int32_t svid;
	uint64_t start, end;
	bool excl;
};

static struct lockin in4(const nlm4_lock *l, bool excl)
{
	struct lockin in = {.caller = l->caller_name, .fh = &l->fh, .oh = &l->oh, .svid = l->svid,
			    .excl = excl};
	lk_range(l->l_offset, l->l_len, &in.start, &in.end);
	return in;
}

static struct lockin in1(const nlm_lock *l, bool excl)
{
	struct lockin in = {.caller = l->caller_name, .fh = &l->fh, .oh = &l->oh, .svid = l->svid,
			    .excl = excl};
	lk_range(l->l_offset, l->l_len, &in.start, &in.end);
	return in;
}

/* The lock manager this program was registered with. */
static struct nlm *mgr(struct svc_call *rq)
{
	return rq->prog;
}

static struct nlm_client client_of(struct svc_call *rq, const char *caller)
{
	return (struct nlm_client){.addr = rq->peer, .local = rq->local, .name = caller,
				   .vers = rq->call->vers, .proto = rq->proto};
}

/* Whether the caller may take a lock on the file, as knfsd's nlm_fopen asks (NFSD_MAY_NLM:
 * read access or ownership, whatever the lock's kind), under the call's credentials (the
 * export's squashing included). Without it uid 1001 could lock root's 0600 file and hold off
 * root's own fcntl locks on it. */
static bool may_lock(struct svc_call *rq, const struct fh_obj *o, const struct statx *sx)
{
	return fs_permission(&rq->fs, o, sx, R_OK) == 0;
}

/* The file a call names, checked as an NFS call is (handle, client rule, export), and for a
 * call that takes a lock or a share (takes) the caller's right to it; then the thread back to
 * root: the lock manager reopens the file for its lock. Releasing what one holds needs no
 * right: a caller who lost it (a chmod since) can still let go. */
static enum nlm4_stats resolve(struct svc_call *rq, const struct lockin *in, bool takes,
			       struct nlm_lockreq *r, struct fh_obj *o)
{
	if (!mgr(rq))
		return NLM4_DENIED_NOLOCKS;
	/* Linux's lockd calls with AUTH_SYS whatever sec= the mount has (knfsd: NFSD_MAY_LOCK). */
	rq->fs.sec_exempt = true;
	int rc = fs_fh_get(&rq->fs, in->fh->n_bytes, in->fh->n_len, o);
	if (rc == -ESTALE || rc == -FS_EBADHANDLE)
		return NLM4_STALE_FH;
	if (rc < 0)
		return NLM4_FAILED;
	struct statx sx;
	if (fs_stat_plain(&rq->fs, o, &sx) < 0)
		return NLM4_STALE_FH;
	if (!S_ISREG(sx.stx_mode))
		return NLM4_FAILED;
	/* knfsd's nlm_fopen answers nlm_failed: FAILED, DENIED_NOLOCKS to versions 1 and 3 */
	if (takes && !may_lock(rq, o, &sx))
		return NLM4_FAILED;
	if (fs_as_server(&rq->fs) < 0)
		return NLM4_FAILED;
	*r = (struct nlm_lockreq){.cl = client_of(rq, in->caller), .fh = in->fh->n_bytes,
				  .fh_len = in->fh->n_len, .dev = makedev(sx.stx_dev_major, sx.stx_dev_minor),
				  .ino = (ino_t)sx.stx_ino, .path_fd = o->fd, .svid = in->svid,
				  .oh = in->oh->n_bytes, .oh_len = in->oh->n_len, .start = in->start,
				  .end = in->end, .excl = in->excl};
	return NLM4_GRANTED;
}

/* Versions 1 and 3 know statuses 0..4 only: the rest become what knfsd sends them. */
static nlm_stats v1_stat(enum nlm4_stats st)
{
	switch (st) {
	case NLM4_GRANTED: case NLM4_DENIED: case NLM4_DENIED_NOLOCKS: case NLM4_BLOCKED:
	case NLM4_DENIED_GRACE_PERIOD:
		return (nlm_stats)st;
	case NLM4_DEADLCK:
		return nlm_denied;
	default:
		return nlm_denied_nolocks;
	}
}

/* ---- the work of each call, any version ---- */

static enum nlm4_stats do_test(struct svc_call *rq, const struct lockin *in, struct nlm_holder4 *h)
{
	struct nlm_lockreq r;
	struct fh_obj o;
	enum nlm4_stats st = resolve(rq, in, true, &r, &o);
	if (st != NLM4_GRANTED)
		return st;
	uint8_t *oh = arena_alloc(&rq->arena, LK_OH_MAX);
	return oh ? nlm_req_test(mgr(rq), &r, h, oh) : NLM4_DENIED_NOLOCKS;
}

static long record_host(void *arg)
{
	void **a = arg;
	return nlm_record(a[0], a[1]);
}

static enum nlm4_stats do_lock(struct svc_call *rq, const struct lockin *in, bool block,
			       bool reclaim, bool monitor)
{
	struct nlm_lockreq r;
	struct fh_obj o;
	enum nlm4_stats st = resolve(rq, in, true, &r, &o);
	if (st != NLM4_GRANTED)
		return st;
	struct nlm *m = mgr(rq);
	if (!monitor)
		return nlm_req_lock(m, &r, false, reclaim);
	/* The host's record is on disk before it holds anything a restart must give back. */
	if (nlm_needs_record(m, &r.cl)) {
		void *a[2] = {m, &r.cl};
		long rc = fs_blocking(&rq->fs, record_host, a);
		if (rc < 0) {
			char q[LOG_QUOTE_SIZE];
			log_ratelimited(nlm_log_limit(m, NLM_LOG_RECORD), LOG_ERR, "lock: cannot record "
					"client %s for restarts: %s", log_quote(q, in->caller),
					strerror((int)-rc));
			nlm_call_done(m, &r.cl);
			return NLM4_DENIED_NOLOCKS;
		}
	}
	st = nlm_req_lock(m, &r, block, reclaim);
	nlm_call_done(m, &r.cl);
	return st;
}

static enum nlm4_stats do_cancel(struct svc_call *rq, const struct lockin *in)
{
	struct nlm_lockreq r;
	struct fh_obj o;
	enum nlm4_stats st = resolve(rq, in, false, &r, &o);
	return st == NLM4_GRANTED ? nlm_req_cancel(mgr(rq), &r) : st;
}

static enum nlm4_stats do_unlock(struct svc_call *rq, const struct lockin *in)
{
	struct nlm_lockreq r;
	struct fh_obj o;
	enum nlm4_stats st = resolve(rq, in, false, &r, &o);
	return st == NLM4_GRANTED ? nlm_req_unlock(mgr(rq), &r) : st;
}

static enum nlm4_stats do_share(struct svc_call *rq, const char *caller, const netobj *fh,
				const netobj *oh, fsh_mode mode, fsh_access access, bool reclaim,
				bool unshare)
{
	struct lockin in = {.caller = caller, .fh = fh, .oh = oh, .end = UINT64_MAX};
	struct nlm_lockreq r;
	struct fh_obj o;
	enum nlm4_stats st = resolve(rq, &in, !unshare, &r, &o);
	if (st != NLM4_GRANTED)
		return st;
	return unshare ? nlm_req_unshare(mgr(rq), &r) : nlm_req_share(mgr(rq), &r, mode, access, reclaim);
}

static void do_free_all(struct svc_call *rq, const char *name)
{
	if (!mgr(rq) || !name || !*name)
		return;
	char q[LOG_QUOTE_SIZE], who[INET6_ADDRSTRLEN];
	size_t n = nlm_host_rebooted(mgr(rq), name, &rq->peer, false);
	log_ratelimited(nlm_log_limit(mgr(rq), NLM_LOG_FREE_ALL), LOG_INFO, "lock: FREE_ALL %s from "
			"%s: %zu lock(s) freed", log_quote(q, name), sa_str(&rq->peer, who), n);
}

static void holder4(struct nlm_holder4 *h, nlm4_holder *out)
{
	out->exclusive = h->excl;
	out->svid = h->svid;
	out->oh = (netobj){.n_len = h->oh_len, .n_bytes = (char *)h->oh};
	lk_span(h->start, h->end, &out->l_offset, &out->l_len);
}

static void holder1(struct nlm_holder4 *h, nlm_holder *out)
{
	uint64_t off, len;
	lk_span(h->start, h->end, &off, &len);
	out->exclusive = h->excl;
	out->svid = h->svid;
	out->oh = (netobj){.n_len = h->oh_len, .n_bytes = (char *)h->oh};
	out->l_offset = off > UINT32_MAX ? UINT32_MAX : (u_int)off;
	out->l_len = len > UINT32_MAX ? 0 : (u_int)len;
}

/* ---- version 4 ---- */

static void nlm_null(struct svc_call *rq, void *argp, void *resp) { (void)rq; (void)argp; (void)resp; }

static void v4_test(struct svc_call *rq, void *argp, void *resp)
{
	nlm4_testargs *a = argp;
	nlm4_testres *res = resp;
	struct lockin in = in4(&a->alock, a->exclusive);
	struct nlm_holder4 h;
	res->cookie = a->cookie;
	res->stat.stat = do_test(rq, &in, &h);
	if (res->stat.stat == NLM4_DENIED)
		holder4(&h, &res->stat.nlm4_testrply_u.holder);
}

static void v4_lock(struct svc_call *rq, void *argp, void *resp)
{
	nlm4_lockargs *a = argp;
	nlm4_res *res = resp;
	struct lockin in = in4(&a->alock, a->exclusive);
	res->cookie = a->cookie;
	res->stat.stat = do_lock(rq, &in, a->block, a->reclaim, true);
}

static void v4_nm_lock(struct svc_call *rq, void *argp, void *resp)
{
	nlm4_lockargs *a = argp;
	nlm4_res *res = resp;
	struct lockin in = in4(&a->alock, a->exclusive);
	res->cookie = a->cookie;
	res->stat.stat = do_lock(rq, &in, false, a->reclaim, false);
}

static void v4_cancel(struct svc_call *rq, void *argp, void *resp)
{
	nlm4_cancargs *a = argp;
	nlm4_res *res = resp;
	struct lockin in = in4(&a->alock, a->exclusive);
	res->cookie = a->cookie;
	res->stat.stat = do_cancel(rq, &in);
}

static void v4_unlock(struct svc_call *rq, void *argp, void *resp)
{
	nlm4_unlockargs *a = argp;
	nlm4_res *res = resp;
	struct lockin in = in4(&a->alock, false);
	res->cookie = a->cookie;
	res->stat.stat = do_unlock(rq, &in);
}

/* We hold no client locks: a GRANTED for us is for no request of ours. */
static void v4_granted(struct svc_call *rq, void *argp, void *resp)
{
	nlm4_testargs *a = argp;
	nlm4_res *res = resp;
	(void)rq;
	res->cookie = a->cookie;
	res->stat.stat = NLM4_DENIED;
}

static void v4_granted_res(struct svc_call *rq, void *argp, void *resp)
{
	nlm4_res *a = argp;
	(void)resp;
	if (mgr(rq))
		nlm_granted_res(mgr(rq), &rq->peer, a->cookie.n_bytes, a->cookie.n_len,
				a->stat.stat);
}

static void ignore_res(struct svc_call *rq, void *argp, void *resp) { (void)rq; (void)argp; (void)resp; }

static void v4_share(struct svc_call *rq, void *argp, void *resp)
{
	nlm4_shareargs *a = argp;
	nlm4_shareres *res = resp;
	res->cookie = a->cookie;
	res->stat = do_share(rq, a->share.caller_name, &a->share.fh, &a->share.oh, a->share.mode,
			     a->share.access, a->reclaim, false);
}

static void v4_unshare(struct svc_call *rq, void *argp, void *resp)
{
	nlm4_shareargs *a = argp;
	nlm4_shareres *res = resp;
	res->cookie = a->cookie;
	res->stat = do_share(rq, a->share.caller_name, &a->share.fh, &a->share.oh, a->share.mode,
			     a->share.access, false, true);
}

static void v4_free_all(struct svc_call *rq, void *argp, void *resp)
{
	nlm4_notify *a = argp;
	(void)resp;
	do_free_all(rq, a->name);
}

/* A _MSG call: the synchronous handler's result, sent as the _RES call. */
#define MSG(name, sync, restype, resproc, rescodec, caller)                                \
	static void name(struct svc_call *rq, void *argp, void *resp)                       \
	{                                                                                   \
		restype r = {0};                                                            \
		(void)resp;                                                                 \
		sync(rq, argp, &r);                                                         \
		if (mgr(rq)) {                                                              \
			struct nlm_client cl = client_of(rq, caller);                       \
			nlm_send_res(mgr(rq), &cl, resproc, (xdrproc_t)rescodec, &r);        \
		}                                                                           \
	}

MSG(v4_test_msg, v4_test, nlm4_testres, NLMPROC_TEST_RES, xdr_nlm4_testres,
    ((nlm4_testargs *)argp)->alock.caller_name)
MSG(v4_lock_msg, v4_lock, nlm4_res, NLMPROC_LOCK_RES, xdr_nlm4_res,
    ((nlm4_lockargs *)argp)->alock.caller_name)
MSG(v4_cancel_msg, v4_cancel, nlm4_res, NLMPROC_CANCEL_RES, xdr_nlm4_res,
    ((nlm4_cancargs *)argp)->alock.caller_name)
MSG(v4_unlock_msg, v4_unlock, nlm4_res, NLMPROC_UNLOCK_RES, xdr_nlm4_res,
    ((nlm4_unlockargs *)argp)->alock.caller_name)

/* ---- versions 1 and 3 ---- */

static void v1_test(struct svc_call *rq, void *argp, void *resp)
{
	nlm_testargs *a = argp;
	nlm_testres *res = resp;
	struct lockin in = in1(&a->alock, a->exclusive);
	struct nlm_holder4 h;
	res->cookie = a->cookie;
	enum nlm4_stats st = do_test(rq, &in, &h);
	res->stat.stat = v1_stat(st);
	if (st == NLM4_DENIED)
		holder1(&h, &res->stat.nlm_testrply_u.holder);
}

static void v1_lock(struct svc_call *rq, void *argp, void *resp)
{
	nlm_lockargs *a = argp;
	nlm_res *res = resp;
	struct lockin in = in1(&a->alock, a->exclusive);
	res->cookie = a->cookie;
	res->stat.stat = v1_stat(do_lock(rq, &in, a->block, a->reclaim, true));
}

static void v1_nm_lock(struct svc_call *rq, void *argp, void *resp)
{
	nlm_lockargs *a = argp;
	nlm_res *res = resp;
	struct lockin in = in1(&a->alock, a->exclusive);
	res->cookie = a->cookie;
	res->stat.stat = v1_stat(do_lock(rq, &in, false, a->reclaim, false));
}

static void v1_cancel(struct svc_call *rq, void *argp, void *resp)
{
	nlm_cancargs *a = argp;
	nlm_res *res = resp;
	struct lockin in = in1(&a->alock, a->exclusive);
	res->cookie = a->cookie;
	res->stat.stat = v1_stat(do_cancel(rq, &in));
}

static void v1_unlock(struct svc_call *rq, void *argp, void *resp)
{
	nlm_unlockargs *a = argp;
	nlm_res *res = resp;
	struct lockin in = in1(&a->alock, false);
	res->cookie = a->cookie;
	res->stat.stat = v1_stat(do_unlock(rq, &in));
}

static void v1_granted(struct svc_call *rq, void *argp, void *resp)
{
	nlm_testargs *a = argp;
	nlm_res *res = resp;
	(void)rq;
	res->cookie = a->cookie;
	res->stat.stat = nlm_denied;
}

static void v1_granted_res(struct svc_call *rq, void *argp, void *resp)
{
	nlm_res *a = argp;
	(void)resp;
	if (mgr(rq))
		nlm_granted_res(mgr(rq), &rq->peer, a->cookie.n_bytes, a->cookie.n_len,
				(enum nlm4_stats)a->stat.stat);
}

static void v1_share(struct svc_call *rq, void *argp, void *resp)
{
	nlm_shareargs *a = argp;
	nlm_shareres *res = resp;
	res->cookie = a->cookie;
	res->stat = v1_stat(do_share(rq, a->share.caller_name, &a->share.fh, &a->share.oh,
				     a->share.mode, a->share.access, a->reclaim, false));
}

static void v1_unshare(struct svc_call *rq, void *argp, void *resp)
{
	nlm_shareargs *a = argp;
	nlm_shareres *res = resp;
	res->cookie = a->cookie;
	res->stat = v1_stat(do_share(rq, a->share.caller_name, &a->share.fh, &a->share.oh,
				     a->share.mode, a->share.access, false, true));
}

static void v1_free_all(struct svc_call *rq, void *argp, void *resp)
{
	nlm_notify *a = argp;
	(void)resp;
	do_free_all(rq, a->name);
}

MSG(v1_test_msg, v1_test, nlm_testres, NLMPROC_TEST_RES, xdr_nlm_testres,
    ((nlm_testargs *)argp)->alock.caller_name)
MSG(v1_lock_msg, v1_lock, nlm_res, NLMPROC_LOCK_RES, xdr_nlm_res,
    ((nlm_lockargs *)argp)->alock.caller_name)
MSG(v1_cancel_msg, v1_cancel, nlm_res, NLMPROC_CANCEL_RES, xdr_nlm_res,
    ((nlm_cancargs *)argp)->alock.caller_name)
MSG(v1_unlock_msg, v1_unlock, nlm_res, NLMPROC_UNLOCK_RES, xdr_nlm_res,
    ((nlm_unlockargs *)argp)->alock.caller_name)

/* ---- the tables ---- */

#define P(n, fn, A, dec, R, enc) \
	[n] = {#n, XDRPROC(dec), NULL, XDRPROC(enc), sizeof(A), sizeof(R), fn, false}
#define VOIDRES(n, fn, A, dec) \
	[n] = {#n, XDRPROC(dec), NULL, XDRPROC(xdr_void), sizeof(A), 0, fn, false}

/* The procedures versions 1, 3 and 4 share, in a version's types. */
#define NLM_COMMON(v, T)                                                                     \
	[NLMPROC_NULL] = {"NULL", XDRPROC(xdr_void), NULL, XDRPROC(xdr_void), 0, 0, nlm_null, false}, \
	P(NLMPROC_TEST, v##_test, T##_testargs, xdr_##T##_testargs, T##_testres, xdr_##T##_testres), \
	P(NLMPROC_LOCK, v##_lock, T##_lockargs, xdr_##T##_lockargs, T##_res, xdr_##T##_res),  \
	P(NLMPROC_CANCEL, v##_cancel, T##_cancargs, xdr_##T##_cancargs, T##_res, xdr_##T##_res), \
	P(NLMPROC_UNLOCK, v##_unlock, T##_unlockargs, xdr_##T##_unlockargs, T##_res, xdr_##T##_res), \
	P(NLMPROC_GRANTED, v##_granted, T##_testargs, xdr_##T##_testargs, T##_res, xdr_##T##_res), \
	VOIDRES(NLMPROC_TEST_MSG, v##_test_msg, T##_testargs, xdr_##T##_testargs),          \
	VOIDRES(NLMPROC_LOCK_MSG, v##_lock_msg, T##_lockargs, xdr_##T##_lockargs),          \
	VOIDRES(NLMPROC_CANCEL_MSG, v##_cancel_msg, T##_cancargs, xdr_##T##_cancargs),      \
	VOIDRES(NLMPROC_UNLOCK_MSG, v##_unlock_msg, T##_unlockargs, xdr_##T##_unlockargs),  \
	VOIDRES(NLMPROC_GRANTED_MSG, ignore_res, T##_testargs, xdr_##T##_testargs),         \
	VOIDRES(NLMPROC_TEST_RES, ignore_res, T##_testres, xdr_##T##_testres),              \
	VOIDRES(NLMPROC_LOCK_RES, ignore_res, T##_res, xdr_##T##_res),                      \
	VOIDRES(NLMPROC_CANCEL_RES, ignore_res, T##_res, xdr_##T##_res),                    \
	VOIDRES(NLMPROC_UNLOCK_RES, ignore_res, T##_res, xdr_##T##_res),                    \
	VOIDRES(NLMPROC_GRANTED_RES, v##_granted_res, T##_res, xdr_##T##_res)

#define NLM_V3(v, T)                                                                         \
	P(NLMPROC_SHARE, v##_share, T##_shareargs, xdr_##T##_shareargs, T##_shareres,         \
	  xdr_##T##_shareres),                                                               \
	P(NLMPROC_UNSHARE, v##_unshare, T##_shareargs, xdr_##T##_shareargs, T##_shareres,     \
	  xdr_##T##_shareres),                                                               \
	P(NLMPROC_NM_LOCK, v##_nm_lock, T##_lockargs, xdr_##T##_lockargs, T##_res, xdr_##T##_res), \
	VOIDRES(NLMPROC_FREE_ALL, v##_free_all, T##_notify, xdr_##T##_notify)

static const struct proc_desc nlm1_procs[] = {NLM_COMMON(v1, nlm)};
static const struct proc_desc nlm3_procs[] = {NLM_COMMON(v1, nlm), NLM_V3(v1, nlm)};
static const struct proc_desc nlm4_procs[] = {NLM_COMMON(v4, nlm4), NLM_V3(v4, nlm4)};

const struct prog_desc nlm1_program = {NLM_PROG, NLM_VERS, nlm1_procs,
				       sizeof nlm1_procs / sizeof nlm1_procs[0], false, NULL};
const struct prog_desc nlm3_program = {NLM_PROG, NLM_VERSX, nlm3_procs,
				       sizeof nlm3_procs / sizeof nlm3_procs[0], false, NULL};
const struct prog_desc nlm4_program = {NLM_PROG, NLM4_VERS, nlm4_procs,
				       sizeof nlm4_procs / sizeof nlm4_procs[0], false, NULL};
