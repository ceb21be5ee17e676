/* The write verifier (RFC 1813 3.3.7): clients compare it across WRITE and COMMIT replies and
 * resend their UNSTABLE data when it changes. It changes at every start (cached data did not survive)
 * and after a write or fsync error (cached data may not have reached the disk). */
#include <sodium.h>
#include <string.h>

#include "nfsd.h"

void server_write_verf(struct server *srv, char out[8])
{
	uint64_t v = atomic_load(&srv->write_verf);
	memcpy(out, &v, 8);
}

void server_rotate_verf(struct server *srv)
{
	uint64_t v;
	randombytes_buf(&v, sizeof v);
	atomic_store(&srv->write_verf, v);
}
