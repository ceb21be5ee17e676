/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A principal's local identity (gss_ident.h), looked up once per context (a context lives as
 * long as its ticket at most: the lookup's bounded lifetime). The password and group files are
 * read with the reentrant calls: several pool threads may make contexts at once. */
#include "rpc/gss_ident.h"

#include <gssapi/gssapi_ext.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A host's key, not a user's: knfsd's svcgssd and gssproxy map these to root. */
static bool machine_principal(const char *p)
{
	static const char *const prefix[] = {"nfs/", "host/", "root/"};
	for (size_t i = 0; i < sizeof prefix / sizeof prefix[0]; i++)
		if (strncmp(p, prefix[i], strlen(prefix[i])) == 0)
			return true;
	return false;
}

/* The local user name of name per krb5's auth_to_local rules; false when there is none. */
static bool local_name(gss_name_t name, char *out, size_t cap)
{
	OM_uint32 minor;
	gss_buffer_desc b = GSS_C_EMPTY_BUFFER;
	if (GSS_ERROR(gss_localname(&minor, name, GSS_C_NO_OID, &b)))
		return false;
	bool ok = b.length > 0 && b.length < cap && !memchr(b.value, '\0', b.length);
	if (ok) {
		memcpy(out, b.value, b.length);
		out[b.length] = '\0';
	}
	gss_release_buffer(&minor, &b);
	return ok;
}

/* user's uid, gid and up to RPC_MAX_GIDS groups (the AUTH_SYS credential's bound, which the
 * file-system layer applies); false when there is no such user. */
static bool lookup_user(const char *user, struct rpc_cred *cred)
{
	long sz = sysconf(_SC_GETPW_R_SIZE_MAX);
	size_t len = sz > 0 ? (size_t)sz : 16384;
	char *buf = malloc(len);
	struct passwd pw, *found = NULL;
	if (!buf || getpwnam_r(user, &pw, buf, len, &found) != 0 || !found) {
		free(buf);
		return false;
	}
	cred->uid = pw.pw_uid;
	cred->gid = pw.pw_gid;
	gid_t groups[RPC_MAX_GIDS];
	int n = RPC_MAX_GIDS;
	/* More groups than fit: the first RPC_MAX_GIDS, as a client's AUTH_SYS would send. */
	if (getgrouplist(user, pw.pw_gid, groups, &n) < 0)
		n = RPC_MAX_GIDS;
	cred->ngids = (uint32_t)n;
	memcpy(cred->gids, groups, (size_t)n * sizeof groups[0]);
	free(buf);
	return true;
}

void gss_ident_map(gss_name_t name, const char *principal, struct rpc_cred *cred)
{
	char user[256];
	cred->uid = 0;
	cred->gid = 0;
	cred->ngids = 0;
	cred->gss_mapped = false;
	if (machine_principal(principal))
		cred->gss_mapped = true;   /* root, squashed or not by the export's rule */
	else if (local_name(name, user, sizeof user))
		cred->gss_mapped = lookup_user(user, cred);
}
