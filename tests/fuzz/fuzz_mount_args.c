/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Every MOUNT v3 procedure's argument decoder, as the server's table mount3_procs[] (through
 * mount3_program) gives it, and each procedure's result codec (mountres3, mountlist, exports: the
 * server encodes DUMP's and EXPORT's lists with them).
 *
 * Input: byte 0 picks the codec (modulo 2 * nprocs: the arguments of procedure b, else the result
 * of procedure b - nprocs), the rest is what it decodes. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "fz_xdr.h"
#include "mount3_prot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t np = mount3_program.nprocs;
	size_t sel = data[0] % (2 * np);
	uint8_t *buf = fz_copy(data + 1, size - 1);
	const struct proc_desc *pd = &mount3_program.procs[sel % np];
	struct fz_codec c = {pd->name, pd->decode, pd->release, pd->args_size};
	if (sel >= np)
		c = (struct fz_codec){pd->name, pd->encode, NULL, pd->res_size};
	bool path = sel < np && (sel == MOUNTPROC3_MNT || sel == MOUNTPROC3_UMNT);
	if (sel == np + MOUNTPROC3_MNT && !mountres3_fits(buf, size - 1)) {
		free(buf);
		return 0;
	}
	fz_xdr_check(&c, buf, size - 1, path ? inspect_dirpath : NULL);
	free(buf);
	return 0;
}
