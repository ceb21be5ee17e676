/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dispatch_record() and everything under it (the NFSv3 and MOUNT handlers, handles, credentials,
 * the cache, file I/O through io_uring; the lock manager's NLM and NSM handlers, its lock table,
 * OFD locks, waiters and callbacks; the portmapper's handlers and registry) on the server of
 * fz_server.c.
 *
 * Input: up to 16 records, each led by a 4-byte big-endian length whose top bit (the record
 * mark's last-fragment flag) says the record came over UDP, clear TCP (a length past the end
 * takes what is left). They run one after the other on the ring, so a sequence such as CREATE,
 * WRITE, COMMIT, READ of the created file (the FZ_OBJ_LAST placeholder), or LOCK, a blocking
 * LOCK of another owner, UNLOCK, GRANTED_RES (the cookie placeholder), is one input. Each reply
 * is checked against its call (fz_check.h). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fz_server.h"
#include "rpc/recmark.h"

#define MAX_RECORDS 16

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_server_init(argc, argv);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *rec = malloc(fz_subst_cap(size));
	if (!rec)
		return 0;
	fz_input_begin();
	for (int n = 0; size >= 4 && n < MAX_RECORDS; n++) {
		uint32_t mark = recmark_get(data);
		size_t len = recmark_len(mark);
		data += 4;
		size -= 4;
		if (len > size)
			len = size;
		fz_dispatch(rec, fz_subst(data, len, rec), recmark_is_last(mark));
		data += len;
		size -= len;
	}
	fz_input_end();
	free(rec);
	return 0;
}
