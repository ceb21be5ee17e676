/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NSM version 1 (program 100024), the status monitor's procedures, built in so that the host's
 * rpc.statd is not needed. Only the server's half is served: SM_NOTIFY from a client that
 * restarted frees its locks. We monitor no one on behalf of local programs (there is no local
 * lock client to serve), so SM_MON answers stat_fail and SM_STAT, SM_UNMON and SM_UNMON_ALL
 * just give our state number, as the protocol asks of them. */
#include "svc/dispatch.h"
#include "base/sockaddr.h"
#include "lock/nlm.h"
#include "base/log.h"
#include "xdr/nsm_prot.h"

/* The lock manager this program was registered with. */
static struct nlm *mgr(struct svc_call *rq)
{
	return rq->prog;
}

static int32_t state(struct svc_call *rq)
{
	return mgr(rq) ? nlm_nsm_state(mgr(rq)) : 0;
}

static void sm_null(struct svc_call *rq, void *argp, void *resp) { (void)rq; (void)argp; (void)resp; }

static void sm_stat_h(struct svc_call *rq, void *argp, void *resp)
{
	sm_stat_res *res = resp;
	(void)argp;
	*res = (sm_stat_res){.res_stat = stat_fail, .state = state(rq)};
}

static void sm_unmon(struct svc_call *rq, void *argp, void *resp)
{
	sm_stat *res = resp;
	(void)argp;
	res->state = state(rq);
}

static void sm_simu_crash(struct svc_call *rq, void *argp, void *resp) { (void)rq; (void)argp; (void)resp; }

static void sm_notify(struct svc_call *rq, void *argp, void *resp)
{
	stat_chge *a = argp;
	(void)resp;
	if (!mgr(rq))
		return;
	char who[INET6_ADDRSTRLEN], q[LOG_QUOTE_SIZE];
	sa_str(&rq->peer, who);
	size_t n = nlm_host_rebooted(mgr(rq), NULL, &rq->peer, true);
	log_ratelimited(nlm_log_limit(mgr(rq), NLM_LOG_NOTIFY), LOG_INFO, "lock: SM_NOTIFY from %s "
			"(%s, state %d): it restarted; %zu lock(s) freed", who,
			log_quote(q, a->mon_name), a->state, n);
}

#define P(n, fn, A, dec, R, enc) \
	[n] = {#n, XDRPROC(dec), NULL, XDRPROC(enc), sizeof(A), sizeof(R), fn, false}

static const struct proc_desc nsm1_procs[] = {
	[SM_NULL] = {"SM_NULL", XDRPROC(xdr_void), NULL, XDRPROC(xdr_void), 0, 0, sm_null, false},
	P(SM_STAT, sm_stat_h, sm_name, xdr_sm_name, sm_stat_res, xdr_sm_stat_res),
	P(SM_MON, sm_stat_h, mon, xdr_mon, sm_stat_res, xdr_sm_stat_res),
	P(SM_UNMON, sm_unmon, mon_id, xdr_mon_id, sm_stat, xdr_sm_stat),
	P(SM_UNMON_ALL, sm_unmon, my_id, xdr_my_id, sm_stat, xdr_sm_stat),
	[SM_SIMU_CRASH] = {"SM_SIMU_CRASH", XDRPROC(xdr_void), NULL, XDRPROC(xdr_void), 0, 0,
			   sm_simu_crash, false},
	P(SM_NOTIFY, sm_notify, stat_chge, xdr_stat_chge, char, xdr_void),
};

const struct prog_desc nsm1_program = {SM_PROG, SM_VERS, nsm1_procs,
				       sizeof nsm1_procs / sizeof nsm1_procs[0], false, NULL};
