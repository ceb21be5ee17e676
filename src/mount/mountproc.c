/* SPDX-License-Identifier: GPL-2.0-or-later */
/* MOUNT v3 (RFC 1813 appendix I). MNT resolves a path to the root handle of an export (or of a
 * directory below it), after checking the client against the export's rules (fs_mount), and
 * lists the flavors (sec=) of the client's rule. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "fs/fs.h"
#include "mount/mount.h"
#include "mount/mountlist.h"
#include "svc/dispatch.h"
#include <rpc/rpc.h>
#include "xdr/mount3_prot.h"

/* DUMP's result at most: with the reply header it fits one UDP datagram (dgram.c). */
#define DUMP_REPLY_MAX (60u * 1024u)

static void peer_name(const struct sockaddr_storage *ss, char out[INET6_ADDRSTRLEN])
{
	strcpy(out, "?");
	if (ss->ss_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, out, INET6_ADDRSTRLEN);
	else if (ss->ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, out, INET6_ADDRSTRLEN);
}

static void mnt_null(struct svc_call *rq, void *argp, void *resp)
{
	(void)rq, (void)argp, (void)resp;
}

/* fs_mount's answer as MOUNT's. */
static mountstat3 mnt_status(int rc)
{
	switch (rc) {
	case 0: return MNT3_OK;
	case -ENOENT: return MNT3ERR_NOENT;
	case -ENOTDIR: return MNT3ERR_NOTDIR;
	case -EACCES: return MNT3ERR_ACCES;
	default: return MNT3ERR_SERVERFAULT;
	}
}

/* A refused MNT's status as the log line names it, with what an administrator checks. */
static const char *mnt_refusal(mountstat3 st)
{
	switch (st) {
	case MNT3ERR_NOENT: return "MNT3ERR_NOENT: no such export or directory";
	case MNT3ERR_NOTDIR: return "MNT3ERR_NOTDIR: not a directory";
	case MNT3ERR_ACCES: return "MNT3ERR_ACCES: not in the export's clients, or a client rule's "
				   "secure option and a source port of 1024 or above";
	case MNT3ERR_SERVERFAULT: return "MNT3ERR_SERVERFAULT: the server failed";
	default: return "refused";
	}
}

static void mnt_mnt(struct svc_call *rq, void *argp, void *resp)
{
	dirpath *path = argp;
	mountres3 *r = resp;
	struct mount_state *m = rq->prog;
	struct fh fh;
	const struct export_rt *exp = NULL;
	char host[INET6_ADDRSTRLEN], q[LOG_QUOTE_SIZE];
	peer_name(&rq->peer, host);
	r->fhs_status = mnt_status(fs_mount(&rq->fs, *path, &fh, &exp));
	if (r->fhs_status != MNT3_OK) {
		log_ratelimited(&m->refused_log, LOG_INFO, "MNT %s from %s refused (%s)",
				log_quote(q, *path), host, mnt_refusal(r->fhs_status));
		return;
	}
	mountres3_ok *ok = &r->mountres3_u.mountinfo;
	/* The client's rule's sec=, in its order: the client mounts with the first it supports
	 * (or checks that its sec= mount option is listed). */
	const struct client_rule *rule = rq->fs.rule;
	ok->fhandle.fhandle3_val = arena_alloc(&rq->arena, fh.len);
	int *flavors = arena_alloc(&rq->arena, rule->nsec * sizeof(int));
	if (!ok->fhandle.fhandle3_val || !flavors) {
		r->fhs_status = MNT3ERR_SERVERFAULT;
		return;
	}
	memcpy(ok->fhandle.fhandle3_val, fh.data, fh.len);
	ok->fhandle.fhandle3_len = fh.len;
	for (unsigned i = 0; i < rule->nsec; i++)
		flavors[i] = (int)rule->sec[i];
	ok->auth_flavors.auth_flavors_val = flavors;
	ok->auth_flavors.auth_flavors_len = rule->nsec;
	/* Listed under the export's own name: one entry however the client spelled the path. */
	if (mount_list_add(m->list, host, exp->cfg->path) > 0)
		log_ratelimited(&m->drop_log, LOG_WARNING, "MOUNT list full (%u entries, "
				"[server] mount_list_entries): the least recently mounted entry dropped",
				m->max_entries);
	log_ratelimited(&m->mount_log, LOG_INFO, "MNT %s from %s", log_quote(q, *path), host);
}

struct dump_ctx {
	struct svc_call *rq;
	mountlist *tail;          /* where the next entry goes: DUMP lists the newest first */
	size_t room;              /* bytes of the result left */
};

static size_t xdr_str_size(const char *s)
{
	return 4 + RNDUP(strlen(s));
}

/* As many entries as the reply has room for: a list longer than a datagram still answers. */
static bool dump_one(void *arg, const char *host, const char *dir)
{
	struct dump_ctx *c = arg;
	size_t need = 4 + xdr_str_size(host) + xdr_str_size(dir);
	if (strlen(dir) > MNTPATHLEN)
		return true;   /* not a dirpath: an export path that long cannot be listed */
	if (need > c->room)
		return false;
	struct mountbody *b = arena_alloc(&c->rq->arena, sizeof *b);
	if (!b || !(b->ml_hostname = arena_strdup(&c->rq->arena, host)) ||
	    !(b->ml_directory = arena_strdup(&c->rq->arena, dir)))
		return false;
	c->room -= need;
	*c->tail = b;
	c->tail = &b->ml_next;
	return true;
}

static void mnt_dump(struct svc_call *rq, void *argp, void *resp)
{
	(void)argp;
	struct dump_ctx c = {.rq = rq, .tail = resp, .room = DUMP_REPLY_MAX - 4};
	rq->reply_hint = DUMP_REPLY_MAX;
	mount_list_walk(((struct mount_state *)rq->prog)->list, dump_one, &c);
}

/* The entry MNT made for path: its export's, or (an export a reload removed) path itself. */
static void mnt_umnt(struct svc_call *rq, void *argp, void *resp)
{
	(void)resp;
	const char *path = *(dirpath *)argp;
	char host[INET6_ADDRSTRLEN];
	peer_name(&rq->peer, host);
	const struct export_rt *exp = fs_export_of(&rq->fs, path);
	mount_list_remove(((struct mount_state *)rq->prog)->list, host, exp ? exp->cfg->path : path);
}

static void mnt_umntall(struct svc_call *rq, void *argp, void *resp)
{
	(void)argp, (void)resp;
	char host[INET6_ADDRSTRLEN];
	peer_name(&rq->peer, host);
	mount_list_remove(((struct mount_state *)rq->prog)->list, host, NULL);
}

/* exports(5)-style text of a client rule: "*", "10.0.0.0/8", "::1", "*.example.com". */
static char *rule_name(struct svc_call *rq, const struct client_rule *c)
{
	char a[INET6_ADDRSTRLEN + 5] = "*";
	if (c->pattern[0])
		return arena_strdup(&rq->arena, c->pattern);
	if (c->family == AF_INET || c->family == AF_INET6) {
		inet_ntop(c->family, c->addr, a, INET6_ADDRSTRLEN);
		unsigned full = c->family == AF_INET ? 32 : 128;
		if (c->prefix != full)
			snprintf(a + strlen(a), 5, "/%u", c->prefix);
	}
	return arena_strdup(&rq->arena, a);
}

static void mnt_export(struct svc_call *rq, void *argp, void *resp)
{
	(void)argp;
	exports *out = resp;
	const struct config *cfg = rq->fs.tbl ? rq->fs.tbl->cfg : NULL;
	for (size_t i = cfg ? cfg->nexports : 0; i-- > 0;) {
		const struct export_cfg *e = &cfg->exports[i];
		struct exportnode *n = arena_alloc(&rq->arena, sizeof *n);
		if (!n)
			return;
		n->ex_dir = arena_strdup(&rq->arena, e->path);
		for (size_t k = e->nclients; k-- > 0;) {
			struct groupnode *g = arena_alloc(&rq->arena, sizeof *g);
			if (!g)
				return;
			g->gr_name = rule_name(rq, &e->clients[k]);
			g->gr_next = n->ex_groups;
			n->ex_groups = g;
		}
		n->ex_next = *out;
		*out = n;
	}
}

static const struct proc_desc mount3_procs[] = {
	[MOUNTPROC3_NULL] = {"MNT_NULL", XDRPROC(xdr_void), NULL, XDRPROC(xdr_void), 0, 0, mnt_null, false},
	[MOUNTPROC3_MNT] = {"MNT", XDRPROC(xdr_dirpath), NULL, XDRPROC(xdr_mountres3), sizeof(dirpath),
			    sizeof(mountres3), mnt_mnt, false},
	[MOUNTPROC3_DUMP] = {"DUMP", XDRPROC(xdr_void), NULL, XDRPROC(xdr_mountlist), 0, sizeof(mountlist),
			     mnt_dump, false},
	[MOUNTPROC3_UMNT] = {"UMNT", XDRPROC(xdr_dirpath), NULL, XDRPROC(xdr_void), sizeof(dirpath), 0,
			     mnt_umnt, false},
	[MOUNTPROC3_UMNTALL] = {"UMNTALL", XDRPROC(xdr_void), NULL, XDRPROC(xdr_void), 0, 0, mnt_umntall, false},
	[MOUNTPROC3_EXPORT] = {"EXPORT", XDRPROC(xdr_void), NULL, XDRPROC(xdr_exports), 0, sizeof(exports),
			       mnt_export, false},
};

/* MNT's mountres3 begins with its mountstat3; the other results have none. */
static int64_t mount3_status(uint32_t proc, const void *res)
{
	int32_t st;
	if (proc != MOUNTPROC3_MNT)
		return -1;
	memcpy(&st, res, sizeof st);
	return st;
}

const struct prog_desc mount3_program = {MOUNT_PROGRAM, MOUNT_V3, mount3_procs,
					 sizeof mount3_procs / sizeof mount3_procs[0], false,
					 mount3_status};

struct mount_state *mount_state_new(unsigned max_entries)
{
	struct mount_state *m = calloc(1, sizeof *m);
	if (m && !(m->list = mount_list_new(max_entries))) {
		free(m);
		m = NULL;
	}
	if (!m)
		log_err("cannot create the MOUNT list");
	else
		m->max_entries = max_entries;
	return m;
}

void mount_state_free(struct mount_state *m)
{
	if (!m)
		return;
	mount_list_free(m->list);
	free(m);
}
