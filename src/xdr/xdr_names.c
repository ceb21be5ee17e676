/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The XDR strings that become C strings in the handlers (file names, symlink targets, MOUNT
 * paths): decoded as xdr_string decodes them, but never cut at a NUL byte inside. See the
 * comments at their typedefs in nfs3_prot.x and mount3_prot.x. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>

#include "mount3_prot.h"
#include "nfs3_prot.h"

/* As xdr_string, and *nul says whether the decoded bytes hold a NUL byte. */
static bool_t string_nul(XDR *xdrs, char **sp, u_int maxsize, bool *nul)
{
	*nul = false;
	if (xdrs->x_op != XDR_DECODE)
		return xdr_string(xdrs, sp, maxsize);
	u_int size;
	if (!xdr_u_int(xdrs, &size) || size > maxsize)
		return FALSE;
	bool mine = !*sp;
	char *s = mine ? malloc((size_t)size + 1) : *sp;   /* xdr_free frees it: malloc's */
	if (!s)
		return FALSE;
	if (!xdr_opaque(xdrs, s, size)) {
		if (mine)
			free(s);
		return FALSE;
	}
	s[size] = '\0';
	*nul = memchr(s, '\0', size) != NULL;
	*sp = s;
	return TRUE;
}

/* A NUL byte makes the whole decode fail; nothing stays allocated. */
static bool_t string_no_nul(XDR *xdrs, char **sp, u_int maxsize)
{
	bool nul, mine = !*sp;
	if (!string_nul(xdrs, sp, maxsize, &nul))
		return FALSE;
	if (nul && mine) {
		free(*sp);
		*sp = NULL;
	}
	return !nul;
}

bool_t xdr_filename3(XDR *xdrs, filename3 *objp)
{
	return string_no_nul(xdrs, objp, NFS3_MAXNAMLEN_XDR);
}

bool_t xdr_dirpath(XDR *xdrs, dirpath *objp)
{
	return string_no_nul(xdrs, objp, MNTPATHLEN);
}

bool_t xdr_nfspath3(XDR *xdrs, nfspath3 *objp)
{
	bool nul;
	if (!string_nul(xdrs, objp, NFS3_MAXPATHLEN, &nul))
		return FALSE;
	if (nul)
		(*objp)[0] = '\0';
	return TRUE;
}
