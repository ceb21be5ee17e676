/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dispatch_record() and everything under it (the NFSv3 and MOUNT handlers, handles, credentials,
 * the cache, file I/O through io_uring) on the server of fz_server.c.
 *
 * Input: up to 16 records, each led by a 4-byte big-endian length (the top bit, the record
 * mark's last-fragment flag, is ignored; a length past the end takes what is left). They run one
 * after the other on the ring, so a sequence such as CREATE, WRITE, COMMIT, READ of the created
 * file (the FZ_OBJ_LAST placeholder) is one input. Each reply is checked against its call
 * (fz_check.h). */
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
		size_t len = recmark_len(recmark_get(data));
		data += 4;
		size -= 4;
		if (len > size)
			len = size;
		fz_dispatch(rec, fz_subst(data, len, rec));
		data += len;
		size -= len;
	}
	fz_input_end();
	free(rec);
	return 0;
}
