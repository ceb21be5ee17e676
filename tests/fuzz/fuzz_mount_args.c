/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Every argument decoder and result codec of the programs beside NFSv3, exactly as the server's
 * tables give them (decoder, argument size and release; the result codec the server encodes
 * with): MOUNT v3 (mount3_program), the lock manager's NLM 1, 3 and 4 and NSM 1 (rpcgen's
 * nlm_prot.x, nsm_prot.x), and the portmapper's PMAP 2 and RPCBIND 3 and 4 (libtirpc's
 * xdr_pmap, xdr_rpcb, xdr_netbuf, xdr_pmaplist, xdr_rpcblist_ptr, xdr_rpcb_entry_list_ptr,
 * xdr_rpcb_stat_byvers, ...). What the handlers then compute from a decoded argument without
 * the server's state is run too: NLM's ranges (lk_range, lk_span) and the portmapper's
 * universal addresses and netids.
 *
 * Input: byte 0 picks the program, byte 1 the procedure and whether its arguments or its result
 * (fz_xdr.h: FZ_ARGS_*), the rest is what it decodes. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>
#include <rpc/rpcb_prot.h>

#include "lock/nlm.h"
#include "mount/mount.h"
#include "nfs3/nfs3.h"
#include "ops/stats.h"
#include "svc/dispatch.h"
#include "fz_xdr.h"
#include "lock/lk_table.h"
#include "xdr/mount3_prot.h"
#include "xdr/nlm_prot.h"
#include "xdr/nsm_prot.h"
#include "pmap/pmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct prog_desc *const progs[FZ_ARGS_NPROG] = {
	[FZ_ARGS_MOUNT3] = &mount3_program, [FZ_ARGS_NLM1] = &nlm1_program,
	[FZ_ARGS_NLM3] = &nlm3_program,     [FZ_ARGS_NLM4] = &nlm4_program,
	[FZ_ARGS_NSM1] = &nsm1_program,     [FZ_ARGS_PMAP2] = &pmap2_program,
	[FZ_ARGS_RPCB3] = &rpcb3_program,   [FZ_ARGS_RPCB4] = &rpcb4_program,
};

/* ---- MOUNT ---- */

/* A path the server resolves is a C string of at most MNTPATHLEN bytes. */
static void inspect_dirpath(const void *obj, bool ok, size_t used, const uint8_t *buf, size_t len)
{
	(void)used, (void)buf, (void)len;
	const dirpath *p = obj;
	if (ok)
		FZ_XCHECK(*p && strlen(*p) <= MNTPATHLEN);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* mountres3's auth_flavors<> is unbounded (the RFC's): libtirpc's xdr_array allocates what the
 * count announces before it reads a flavor, so a 20-byte input could make the harness allocate
 * 16 GiB. Only clients decode a mountres3; the server only encodes its own. Decode the ones
 * whose count the input can hold. */
static bool mountres3_fits(const uint8_t *b, size_t len)
{
	if (len < 8 || be32(b) != MNT3_OK)
		return true;
	size_t fh = be32(b + 4);
	if (fh > FHSIZE3)
		return true;            /* the decoder refuses it before the array */
	size_t at = 8 + (fh + 3) / 4 * 4;
	return at + 4 > len || be32(b + at) <= (len - at - 4) / 4;
}

/* ---- NLM ---- */

static size_t cur_proc;         /* the procedure whose arguments are inspected */

/* What nlmproc.c takes from a lock: the caller's name, handles the table may keep (lk_add
 * refuses an owner handle past LK_OH_MAX, TEST copies one into LK_OH_MAX bytes), and the range:
 * lk_range gives start <= end, and lk_span (TEST's holder) gives it back. */
static void check_lock(const char *caller, const netobj *fh, const netobj *oh, uint64_t off,
		       uint64_t len)
{
	FZ_XCHECK(caller && strlen(caller) <= LM_MAXSTRLEN);
	FZ_XCHECK(fh->n_len <= MAX_NETOBJ_SZ && (!fh->n_len || fh->n_bytes));
	FZ_XCHECK(oh->n_len <= LK_OH_MAX && (!oh->n_len || oh->n_bytes));
	uint64_t start, end, o2, l2, s2, e2;
	bool exact = lk_range(off, len, &start, &end);
	FZ_XCHECK(start <= end && start == off);
	FZ_XCHECK(exact || end == UINT64_MAX);
	lk_span(start, end, &o2, &l2);
	FZ_XCHECK(lk_range(o2, l2, &s2, &e2) && s2 == start && e2 == end);
	if (exact)
		FZ_XCHECK(o2 == off && (l2 == len || (len && e2 == UINT64_MAX && l2 == 0)));
}

static void inspect_nlm4(const void *obj, bool ok, size_t used, const uint8_t *buf, size_t len)
{
	(void)used, (void)buf, (void)len;
	const nlm4_lock *l = NULL;
	if (!ok)
		return;
	switch (cur_proc) {
	case NLMPROC_TEST: case NLMPROC_GRANTED: case NLMPROC_TEST_MSG: case NLMPROC_GRANTED_MSG:
		l = &((const nlm4_testargs *)obj)->alock; break;
	case NLMPROC_LOCK: case NLMPROC_LOCK_MSG: case NLMPROC_NM_LOCK:
		l = &((const nlm4_lockargs *)obj)->alock; break;
	case NLMPROC_CANCEL: case NLMPROC_CANCEL_MSG:
		l = &((const nlm4_cancargs *)obj)->alock; break;
	case NLMPROC_UNLOCK: case NLMPROC_UNLOCK_MSG:
		l = &((const nlm4_unlockargs *)obj)->alock; break;
	default:
		return;
	}
	check_lock(l->caller_name, &l->fh, &l->oh, l->l_offset, l->l_len);
}

static void inspect_nlm1(const void *obj, bool ok, size_t used, const uint8_t *buf, size_t len)
{
	(void)used, (void)buf, (void)len;
	const nlm_lock *l = NULL;
	if (!ok)
		return;
	switch (cur_proc) {
	case NLMPROC_TEST: case NLMPROC_GRANTED: case NLMPROC_TEST_MSG: case NLMPROC_GRANTED_MSG:
		l = &((const nlm_testargs *)obj)->alock; break;
	case NLMPROC_LOCK: case NLMPROC_LOCK_MSG: case NLMPROC_NM_LOCK:
		l = &((const nlm_lockargs *)obj)->alock; break;
	case NLMPROC_CANCEL: case NLMPROC_CANCEL_MSG:
		l = &((const nlm_cancargs *)obj)->alock; break;
	case NLMPROC_UNLOCK: case NLMPROC_UNLOCK_MSG:
		l = &((const nlm_unlockargs *)obj)->alock; break;
	default:
		return;
	}
	check_lock(l->caller_name, &l->fh, &l->oh, l->l_offset, l->l_len);
}

/* ---- the portmapper ---- */

/* A universal address the server parses formats back to one that parses to the same. */
static void check_uaddr(const char *u)
{
	struct sockaddr_storage ss, again;
	char text[PMAP_UADDR_MAX];
	if (!uaddr_parse(u, &ss))
		return;
	FZ_XCHECK(ss.ss_family == AF_INET || ss.ss_family == AF_INET6);
	FZ_XCHECK(uaddr_format((const struct sockaddr *)&ss, text, sizeof text));
	FZ_XCHECK(uaddr_parse(text, &again));
	size_t n = ss.ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	FZ_XCHECK(memcmp(&ss, &again, n) == 0);
}

static void inspect_rpcb(const void *obj, bool ok, size_t used, const uint8_t *buf, size_t len)
{
	(void)used, (void)buf, (void)len;
	const RPCB *a = obj;
	int proto, family;
	if (!ok)
		return;
	FZ_XCHECK(a->r_netid && a->r_addr && a->r_owner);
	check_uaddr(a->r_addr);
	if (pmap_netid_parse(a->r_netid, &proto, &family))
		FZ_XCHECK((proto == IPPROTO_TCP || proto == IPPROTO_UDP) &&
			  (family == AF_INET || family == AF_INET6));
}

static void inspect_uaddr(const void *obj, bool ok, size_t used, const uint8_t *buf, size_t len)
{
	(void)used, (void)buf, (void)len;
	if (ok)
		check_uaddr(*(char *const *)obj);
}

typedef void inspect_fn(const void *obj, bool ok, size_t used, const uint8_t *buf, size_t len);

static inspect_fn *inspector(unsigned prog, const struct proc_desc *pd, size_t proc)
{
	switch (prog) {
	case FZ_ARGS_MOUNT3:
		return proc == MOUNTPROC3_MNT || proc == MOUNTPROC3_UMNT ? inspect_dirpath : NULL;
	case FZ_ARGS_NLM1: case FZ_ARGS_NLM3:
		return inspect_nlm1;
	case FZ_ARGS_NLM4:
		return inspect_nlm4;
	case FZ_ARGS_RPCB3: case FZ_ARGS_RPCB4:
		if (pd->decode == (xdrproc_t)xdr_rpcb)
			return inspect_rpcb;
		return pd->decode == (xdrproc_t)xdr_wrapstring ? inspect_uaddr : NULL;
	}
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	unsigned prog = data[0] % FZ_ARGS_NPROG;
	const struct prog_desc *p = progs[prog];
	bool result = data[1] & FZ_ARGS_RESULT;
	size_t proc = (data[1] & ~FZ_ARGS_RESULT) % p->nprocs;
	const struct proc_desc *pd = &p->procs[proc];
	if (!pd->decode)
		return 0;               /* a hole in the table (NLM 3 and 4: 16..19) */
	uint8_t *buf = fz_copy(data + 2, size - 2);
	size_t len = size - 2;
	cur_proc = proc;
	struct fz_codec c = {pd->name, pd->decode, pd->release, pd->args_size};
	if (result)
		c = (struct fz_codec){pd->name, pd->encode, NULL, pd->res_size};
	if (result && prog == FZ_ARGS_MOUNT3 && proc == MOUNTPROC3_MNT && !mountres3_fits(buf, len)) {
		free(buf);
		return 0;
	}
	fz_xdr_check(&c, buf, len, result ? NULL : inspector(prog, pd, proc));
	free(buf);
	return 0;
}
