/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mkcorpus's seeds of the lock manager: every procedure of NLM 1, 3 and 4 and of NSM, and
 * locking in steps as clients do it (contention, blocked locks granted and answered each way
 * the fuzzed client host can, cancels, ranges, shares, _MSG calls, a client's restart). */
#include "mkcorpus.h"

#include <stdio.h>
#include <string.h>

/* ---- the lock manager ---- */

static netobj nobj(const char *s)
{
	return (netobj){(u_int)strlen(s), (char *)s};
}

/* An NFS handle placeholder as NLM's fh. */
static netobj nfh(unsigned exp, unsigned obj)
{
	nfs_fh3 f = fh(exp, obj);
	return (netobj){f.data.data_len, f.data.data_val};
}

static uint8_t cookie_mark[FZ_MARK_COOKIE_LEN] = {FZ_MARK0, 'F', 'Z', FZ_MARK_COOKIE, 0, 0, 0, 0};

/* Owners: A takes locks the others wait for; svid modulo 4 says how the fuzzed client host
 * answers the GRANTED callback of a blocked lock of theirs (fz_marks.h). */
#define SVID_A (0x100 + FZ_GRANTED_TAKE)
#define SVID_TAKE (0x200 + FZ_GRANTED_TAKE)
#define SVID_REFUSE (0x200 + FZ_GRANTED_REFUSE)
#define SVID_GARBAGE (0x200 + FZ_GRANTED_GARBAGE)
#define SVID_SILENT (0x200 + FZ_GRANTED_SILENT)

static nlm4_lock lk4(unsigned exp, unsigned obj, int32_t svid, uint64_t off, uint64_t len)
{
	return (nlm4_lock){"fuzzhost", nfh(exp, obj), nobj(svid == SVID_A ? "owner-a" : "owner-b"),
			   svid, off, len};
}

static nlm_lock lk1(unsigned exp, unsigned obj, int32_t svid, u_int off, u_int len)
{
	return (nlm_lock){"fuzzhost", nfh(exp, obj), nobj(svid == SVID_A ? "owner-a" : "owner-b"),
			  svid, off, len};
}

#define C_NLM(V, PROC, TYPE, ...) \
	{#PROC, NLM_PROG, V, PROC, AUTH_ROOT, (xdrproc_t)xdr_##TYPE, &(TYPE){__VA_ARGS__}}
#define NLM4(NAME, PROC, TYPE, ...) \
	emit(&(struct call){NAME, NLM_PROG, NLM4_VERS, PROC, AUTH_ROOT, (xdrproc_t)xdr_##TYPE, \
			    &(TYPE){__VA_ARGS__}})
#define NLMV(NAME, V, PROC, TYPE, ...) \
	emit(&(struct call){NAME, NLM_PROG, V, PROC, AUTH_ROOT, (xdrproc_t)xdr_##TYPE, \
			    &(TYPE){__VA_ARGS__}})

/* NLM 4: every procedure, the _MSG and _RES ones included. */
static void nlm4_calls(void)
{
	unsigned e = FZ_EXP_CACHED, f = FZ_OBJ_FILE;
	netobj ck = nobj("ck"), cm = {sizeof cookie_mark, (char *)cookie_mark};
	emit(&(struct call){"nlm4_null", NLM_PROG, NLM4_VERS, NLMPROC_NULL, AUTH_NOBODY_NONE, NULL, NULL});
	NLM4("nlm4_test", NLMPROC_TEST, nlm4_testargs, ck, TRUE, lk4(e, f, SVID_A, 0, 100));
	NLM4("nlm4_lock", NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, TRUE, lk4(e, f, SVID_A, 0, 100),
	     FALSE, 3);
	NLM4("nlm4_lock_block", NLMPROC_LOCK, nlm4_lockargs, ck, TRUE, TRUE,
	     lk4(e, f, SVID_SILENT, 0, 0), FALSE, 3);
	NLM4("nlm4_lock_reclaim", NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, FALSE,
	     lk4(FZ_EXP_DIRECT, f, SVID_A, 4096, 4096), TRUE, 3);
	NLM4("nlm4_lock_ro", NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, TRUE,
	     lk4(FZ_EXP_RO, FZ_OBJ_RDONLY, SVID_A, 0, 10), FALSE, 3);
	NLM4("nlm4_lock_dir", NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, TRUE,
	     lk4(e, FZ_OBJ_DIR, SVID_A, 0, 10), FALSE, 3);
	NLM4("nlm4_lock_foreign", NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, TRUE,
	     lk4(FZ_EXP_FOREIGN, f, SVID_A, 0, 10), FALSE, 3);
	NLM4("nlm4_lock_high", NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, FALSE,
	     lk4(e, FZ_OBJ_DIR_A, SVID_A, (1ull << 63) - 10, 0), FALSE, 3);
	NLM4("nlm4_lock_wrap", NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, TRUE,
	     lk4(e, f, SVID_A, UINT64_MAX - 5, 100), FALSE, 3);
	nlm4_lock stale = lk4(e, f, SVID_A, 0, 1);
	stale.fh = nobj("not a handle of ours");
	NLM4("nlm4_lock_stale", NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, TRUE, stale, FALSE, 3);
	NLM4("nlm4_cancel", NLMPROC_CANCEL, nlm4_cancargs, ck, TRUE, TRUE, lk4(e, f, SVID_SILENT, 0, 0));
	NLM4("nlm4_unlock", NLMPROC_UNLOCK, nlm4_unlockargs, ck, lk4(e, f, SVID_A, 0, 0));
	NLM4("nlm4_granted", NLMPROC_GRANTED, nlm4_testargs, ck, TRUE, lk4(e, f, SVID_A, 0, 100));
	NLM4("nlm4_test_msg", NLMPROC_TEST_MSG, nlm4_testargs, ck, FALSE, lk4(e, f, SVID_TAKE, 0, 100));
	NLM4("nlm4_lock_msg", NLMPROC_LOCK_MSG, nlm4_lockargs, ck, TRUE, TRUE,
	     lk4(e, f, SVID_TAKE, 50, 10), FALSE, 3);
	NLM4("nlm4_cancel_msg", NLMPROC_CANCEL_MSG, nlm4_cancargs, ck, TRUE, TRUE,
	     lk4(e, f, SVID_TAKE, 50, 10));
	NLM4("nlm4_unlock_msg", NLMPROC_UNLOCK_MSG, nlm4_unlockargs, ck, lk4(e, f, SVID_TAKE, 50, 10));
	NLM4("nlm4_granted_msg", NLMPROC_GRANTED_MSG, nlm4_testargs, ck, TRUE, lk4(e, f, SVID_A, 0, 1));
	NLM4("nlm4_test_res", NLMPROC_TEST_RES, nlm4_testres, ck,
	     {NLM4_DENIED, .nlm4_testrply_u.holder = {TRUE, 1, nobj("oh"), 0, 10}});
	NLM4("nlm4_lock_res", NLMPROC_LOCK_RES, nlm4_res, ck, {NLM4_GRANTED});
	NLM4("nlm4_cancel_res", NLMPROC_CANCEL_RES, nlm4_res, ck, {NLM4_DENIED});
	NLM4("nlm4_unlock_res", NLMPROC_UNLOCK_RES, nlm4_res, ck, {NLM4_GRANTED});
	NLM4("nlm4_granted_res", NLMPROC_GRANTED_RES, nlm4_res, cm, {NLM4_GRANTED});
	NLM4("nlm4_share", NLMPROC_SHARE, nlm4_shareargs, ck,
	     {"fuzzhost", nfh(e, f), nobj("owner-a"), fsm_DW, fsa_RW}, FALSE);
	NLM4("nlm4_share_reclaim", NLMPROC_SHARE, nlm4_shareargs, ck,
	     {"fuzzhost", nfh(FZ_EXP_RO, FZ_OBJ_DIR_A), {0, NULL}, fsm_DN, fsa_R}, TRUE);
	NLM4("nlm4_share_no_owner", NLMPROC_SHARE, nlm4_shareargs, ck,
	     {"fuzzhost", nfh(e, FZ_OBJ_EMPTY), {0, NULL}, fsm_DR, fsa_R}, FALSE);
	NLM4("nlm4_unshare", NLMPROC_UNSHARE, nlm4_shareargs, ck,
	     {"fuzzhost", nfh(e, f), nobj("owner-a"), fsm_DW, fsa_RW}, FALSE);
	NLM4("nlm4_nm_lock", NLMPROC_NM_LOCK, nlm4_lockargs, ck, FALSE, FALSE,
	     lk4(e, FZ_OBJ_EMPTY, SVID_A, 0, 0), FALSE, 0);
	NLM4("nlm4_free_all", NLMPROC_FREE_ALL, nlm4_notify, "fuzzhost", 5);
}

/* NLM 1 and 3, and versions and procedures that are not served. */
static void nlm_v1_v3_calls(void)
{
	unsigned e = FZ_EXP_CACHED, f = FZ_OBJ_FILE;
	netobj ck = nobj("ck"), cm = {sizeof cookie_mark, (char *)cookie_mark};
	NLMV("nlm1_test", NLM_VERS, NLMPROC_TEST, nlm_testargs, ck, TRUE, lk1(e, f, SVID_A, 0, 100));
	NLMV("nlm1_lock", NLM_VERS, NLMPROC_LOCK, nlm_lockargs, ck, TRUE, TRUE,
	     lk1(e, f, SVID_TAKE, 10, 0), FALSE, 1);
	NLMV("nlm1_cancel", NLM_VERS, NLMPROC_CANCEL, nlm_cancargs, ck, TRUE, TRUE,
	     lk1(e, f, SVID_TAKE, 10, 0));
	NLMV("nlm1_unlock", NLM_VERS, NLMPROC_UNLOCK, nlm_unlockargs, ck, lk1(e, f, SVID_A, 0, 0));
	NLMV("nlm1_lock_msg", NLM_VERS, NLMPROC_LOCK_MSG, nlm_lockargs, ck, FALSE, FALSE,
	     lk1(e, f, SVID_TAKE, 0xfffffff0u, 0x20), FALSE, 1);
	NLMV("nlm1_granted_res", NLM_VERS, NLMPROC_GRANTED_RES, nlm_res, cm, {nlm_granted});
	NLMV("nlm3_share", NLM_VERSX, NLMPROC_SHARE, nlm_shareargs, ck,
	     {"fuzzhost", nfh(e, f), nobj("owner-b"), fsm_DR, fsa_W}, FALSE);
	NLMV("nlm3_nm_lock", NLM_VERSX, NLMPROC_NM_LOCK, nlm_lockargs, ck, FALSE, TRUE,
	     lk1(e, f, SVID_A, 0, 1), FALSE, 0);
	NLMV("nlm3_free_all", NLM_VERSX, NLMPROC_FREE_ALL, nlm_notify, "fuzzhost", 7);
	emit(&(struct call){"nlm_v2", NLM_PROG, 2, NLMPROC_NULL, AUTH_ROOT, NULL, NULL});
	emit(&(struct call){"nlm1_share", NLM_PROG, NLM_VERS, NLMPROC_SHARE, AUTH_ROOT, NULL, NULL});
	emit(&(struct call){"nlm4_proc16", NLM_PROG, NLM4_VERS, 16, AUTH_ROOT, NULL, NULL});
}

/* NSM: the status monitor. */
static void nsm_calls(void)
{
	emit(&(struct call){"sm_null", SM_PROG, SM_VERS, SM_NULL, AUTH_ROOT, NULL, NULL});
	emit(&(struct call){"sm_stat", SM_PROG, SM_VERS, SM_STAT, AUTH_ROOT, (xdrproc_t)xdr_sm_name,
			    &(sm_name){"fuzzhost"}});
	mon m = {{"fuzzhost", {"127.0.0.1", 100021, 4, 16}}, "private data 16b"};
	emit(&(struct call){"sm_mon", SM_PROG, SM_VERS, SM_MON, AUTH_ROOT, (xdrproc_t)xdr_mon, &m});
	emit(&(struct call){"sm_unmon", SM_PROG, SM_VERS, SM_UNMON, AUTH_ROOT, (xdrproc_t)xdr_mon_id,
			    &m.mon_id});
	emit(&(struct call){"sm_unmon_all", SM_PROG, SM_VERS, SM_UNMON_ALL, AUTH_ROOT,
			    (xdrproc_t)xdr_my_id, &m.mon_id.my_id});
	emit(&(struct call){"sm_simu_crash", SM_PROG, SM_VERS, SM_SIMU_CRASH, AUTH_ROOT, NULL, NULL});
	emit(&(struct call){"sm_notify", SM_PROG, SM_VERS, SM_NOTIFY, AUTH_ROOT,
			    (xdrproc_t)xdr_stat_chge, &(stat_chge){"fuzzhost", 5}});
}

void lock_calls(void)
{
	nlm4_calls();
	nlm_v1_v3_calls();
	nsm_calls();
}

/* ---- locking in steps, as clients do it: each sequence one dispatch input (one conn stream) */

/* A lock held, a blocked LOCK of each owner whose GRANTED the client host answers its own way. */
static void blocked_sequences(void)
{
	unsigned e = FZ_EXP_CACHED, f = FZ_OBJ_FILE;
	netobj ck = nobj("ck"), cm = {sizeof cookie_mark, (char *)cookie_mark};
	const unsigned waiters[] = {SVID_TAKE, SVID_REFUSE, SVID_GARBAGE, SVID_SILENT};
	const char *const how[] = {"take", "refuse", "garbage", "silent"};
	for (size_t i = 0; i < 4; i++) {
		int32_t w = (int32_t)waiters[i];
		struct call s[] = {
			C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, TRUE,
			      lk4(e, f, SVID_A, 0, 1000), FALSE, 3),
			C_NLM(NLM4_VERS, NLMPROC_TEST, nlm4_testargs, ck, FALSE, lk4(e, f, w, 500, 1)),
			C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, TRUE, TRUE,
			      lk4(e, f, w, 100, 100), FALSE, 3),
			C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, TRUE, TRUE,
			      lk4(e, f, w, 100, 100), FALSE, 3),
			C_NLM(NLM4_VERS, NLMPROC_UNLOCK, nlm4_unlockargs, ck, lk4(e, f, SVID_A, 0, 0)),
			C_NLM(NLM4_VERS, NLMPROC_GRANTED_RES, nlm4_res, cm, {NLM4_GRANTED}),
			C_NLM(NLM4_VERS, NLMPROC_TEST, nlm4_testargs, ck, TRUE, lk4(e, f, SVID_A, 0, 0)),
			C_NLM(NLM4_VERS, NLMPROC_UNLOCK, nlm4_unlockargs, ck, lk4(e, f, w, 0, 0)),
		};
		char name[64];
		snprintf(name, sizeof name, "seq_nlm_block_%s", how[i]);
		/* the blocked LOCKs of two of them over UDP: so are their GRANTED callbacks */
		emit_seq(name, s, sizeof s / sizeof s[0], i == 1, i % 2 ? 0x0c : 0);
	}
}

/* A granted lock on its way (the client host holds its GRANTED): cancelled, or asked for
 * again, then refused. */
static void granting_sequences(void)
{
	unsigned e = FZ_EXP_CACHED, f = FZ_OBJ_FILE;
	netobj ck = nobj("ck"), cm = {sizeof cookie_mark, (char *)cookie_mark};
	struct call c[] = {
		C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, TRUE, lk4(e, f, SVID_A, 0, 0),
		      FALSE, 3),
		C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, TRUE, FALSE,
		      lk4(e, f, SVID_SILENT, 10, 10), FALSE, 3),
		C_NLM(NLM4_VERS, NLMPROC_UNLOCK, nlm4_unlockargs, ck, lk4(e, f, SVID_A, 0, 0)),
		C_NLM(NLM4_VERS, NLMPROC_CANCEL, nlm4_cancargs, ck, TRUE, FALSE,
		      lk4(e, f, SVID_SILENT, 10, 10)),
		C_NLM(NLM4_VERS, NLMPROC_TEST, nlm4_testargs, ck, TRUE, lk4(e, f, SVID_A, 0, 0)),
	};
	emit_seq("seq_nlm_cancel_granting", c, sizeof c / sizeof c[0], false, 0x02);
	struct call r[] = {
		C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, TRUE,
		      lk4(FZ_EXP_DIRECT, f, SVID_A, 0, 0), FALSE, 3),
		C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, TRUE, TRUE,
		      lk4(FZ_EXP_DIRECT, f, SVID_SILENT, 0, 4096), FALSE, 3),
		C_NLM(NLM4_VERS, NLMPROC_UNLOCK, nlm4_unlockargs, ck, lk4(FZ_EXP_DIRECT, f, SVID_A, 0, 0)),
		C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, TRUE, TRUE,
		      lk4(FZ_EXP_DIRECT, f, SVID_SILENT, 0, 4096), FALSE, 3),
		C_NLM(NLM4_VERS, NLMPROC_GRANTED_RES, nlm4_res, cm, {NLM4_DENIED}),
		C_NLM(NLM4_VERS, NLMPROC_TEST, nlm4_testargs, ck, TRUE,
		      lk4(FZ_EXP_DIRECT, f, SVID_A, 0, 0)),
	};
	emit_seq("seq_nlm_reassert", r, sizeof r / sizeof r[0], false, 0);
}

/* One owner's ranges; shares, then the client's restart. */
static void owner_sequences(void)
{
	unsigned e = FZ_EXP_CACHED, f = FZ_OBJ_FILE;
	netobj ck = nobj("ck");
	/* One owner's ranges: split, up- and downgraded, merged, partly unlocked. */
	struct call g[] = {
		C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, TRUE, lk4(e, f, SVID_A, 0, 1000),
		      FALSE, 3),
		C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, FALSE,
		      lk4(e, f, SVID_A, 100, 100), FALSE, 3),
		C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, FALSE,
		      lk4(e, f, SVID_A, 1000, 500), FALSE, 3),
		C_NLM(NLM4_VERS, NLMPROC_UNLOCK, nlm4_unlockargs, ck, lk4(e, f, SVID_A, 500, 100)),
		C_NLM(NLM4_VERS, NLMPROC_TEST, nlm4_testargs, ck, FALSE, lk4(e, f, SVID_TAKE, 0, 0)),
		C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, FALSE,
		      lk4(e, f, SVID_TAKE, 150, 10), FALSE, 3),
		C_NLM(NLM4_VERS, NLMPROC_TEST, nlm4_testargs, ck, TRUE, lk4(e, f, SVID_TAKE, 540, 10)),
		C_NLM(NLM4_VERS, NLMPROC_UNLOCK, nlm4_unlockargs, ck, lk4(e, f, SVID_A, 0, 0)),
		C_NLM(NLM4_VERS, NLMPROC_FREE_ALL, nlm4_notify, "fuzzhost", 0),
	};
	emit_seq("seq_nlm_ranges", g, sizeof g / sizeof g[0], false, 0x55);
	/* Shares, then the client restarts with a lock and a waiter. */
	struct call sh[] = {
		C_NLM(NLM4_VERS, NLMPROC_SHARE, nlm4_shareargs, ck,
		      {"fuzzhost", nfh(e, f), nobj("owner-a"), fsm_DW, fsa_RW}, FALSE),
		C_NLM(NLM4_VERS, NLMPROC_SHARE, nlm4_shareargs, ck,
		      {"fuzzhost", nfh(e, f), nobj("owner-b"), fsm_DN, fsa_W}, FALSE),
		C_NLM(NLM4_VERS, NLMPROC_UNSHARE, nlm4_shareargs, ck,
		      {"fuzzhost", nfh(e, f), nobj("owner-a"), fsm_DW, fsa_RW}, FALSE),
		C_NLM(NLM4_VERS, NLMPROC_SHARE, nlm4_shareargs, ck,
		      {"fuzzhost", nfh(e, f), nobj("owner-b"), fsm_DN, fsa_W}, FALSE),
		C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, FALSE, TRUE, lk4(e, f, SVID_A, 0, 0),
		      FALSE, 3),
		C_NLM(NLM4_VERS, NLMPROC_LOCK, nlm4_lockargs, ck, TRUE, TRUE, lk4(e, f, SVID_TAKE, 0, 0),
		      FALSE, 3),
		{"SM_NOTIFY", SM_PROG, SM_VERS, SM_NOTIFY, AUTH_ROOT, (xdrproc_t)xdr_stat_chge,
		 &(stat_chge){"fuzzhost", 7}},
		C_NLM(NLM4_VERS, NLMPROC_TEST, nlm4_testargs, ck, TRUE, lk4(e, f, SVID_TAKE, 0, 0)),
	};
	emit_seq("seq_nlm_share_notify", sh, sizeof sh / sizeof sh[0], false, 0xc0);
}

/* The _MSG calls, and clients of NLM 1 and 3 beside one of NLM 4. */
static void version_sequences(void)
{
	unsigned e = FZ_EXP_CACHED, f = FZ_OBJ_FILE;
	netobj ck = nobj("ck");
	/* The _MSG calls: their results come back as _RES calls to the client host. */
	struct call m[] = {
		C_NLM(NLM4_VERS, NLMPROC_LOCK_MSG, nlm4_lockargs, ck, FALSE, TRUE,
		      lk4(e, FZ_OBJ_DIR_A, SVID_A, 0, 10), FALSE, 3),
		C_NLM(NLM4_VERS, NLMPROC_TEST_MSG, nlm4_testargs, ck, TRUE,
		      lk4(e, FZ_OBJ_DIR_A, SVID_TAKE, 5, 1)),
		C_NLM(NLM4_VERS, NLMPROC_LOCK_MSG, nlm4_lockargs, ck, TRUE, TRUE,
		      lk4(e, FZ_OBJ_DIR_A, SVID_TAKE, 5, 1), FALSE, 3),
		C_NLM(NLM4_VERS, NLMPROC_UNLOCK_MSG, nlm4_unlockargs, ck, lk4(e, FZ_OBJ_DIR_A, SVID_A, 0, 0)),
		C_NLM(NLM4_VERS, NLMPROC_CANCEL_MSG, nlm4_cancargs, ck, TRUE, TRUE,
		      lk4(e, FZ_OBJ_DIR_A, SVID_TAKE, 5, 1)),
		C_NLM(NLM4_VERS, NLMPROC_UNLOCK_MSG, nlm4_unlockargs, ck,
		      lk4(e, FZ_OBJ_DIR_A, SVID_TAKE, 0, 0)),
	};
	emit_seq("seq_nlm_msg", m, sizeof m / sizeof m[0], false, 0x3f);
	/* Version 1 and 3 clients, and a version 4 one, on the same file. */
	struct call v1[] = {
		C_NLM(NLM_VERS, NLMPROC_LOCK, nlm_lockargs, ck, FALSE, TRUE, lk1(e, f, SVID_A, 0, 0),
		      FALSE, 1),
		C_NLM(NLM4_VERS, NLMPROC_TEST, nlm4_testargs, ck, TRUE,
		      lk4(e, f, SVID_TAKE, 1ull << 33, 1)),
		C_NLM(NLM_VERS, NLMPROC_TEST, nlm_testargs, ck, FALSE, lk1(e, f, SVID_TAKE, 7, 1)),
		C_NLM(NLM_VERSX, NLMPROC_LOCK, nlm_lockargs, ck, TRUE, TRUE,
		      lk1(e, f, SVID_TAKE, 100, 1), FALSE, 1),
		C_NLM(NLM_VERS, NLMPROC_UNLOCK, nlm_unlockargs, ck, lk1(e, f, SVID_A, 0, 0)),
		C_NLM(NLM_VERSX, NLMPROC_SHARE, nlm_shareargs, ck,
		      {"fuzzhost", nfh(e, f), nobj("owner-b"), fsm_DR, fsa_RW}, FALSE),
		C_NLM(NLM_VERSX, NLMPROC_FREE_ALL, nlm_notify, "fuzzhost", 0),
	};
	emit_seq("seq_nlm_v1", v1, sizeof v1 / sizeof v1[0], false, 0x0b);
}

void lock_sequences(void)
{
	blocked_sequences();
	granting_sequences();
	owner_sequences();
	version_sequences();
}
