/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RPC's universal addresses (RFC 1833 section 2.2; RFC 5665 section 5.2.3.3 for IPv6), and the
 * portmapper's well-known port: what the portmapper answers and what the callback client asks. */
#ifndef NFSD_UC_RPC_UADDR_H
#define NFSD_UC_RPC_UADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define PMAP_PORT 111

/* "h1.h2.h3.h4.p1.p2" or "x:...:y.p1.p2" -> *ss (sin_port/sin6_port set). false on junk. */
bool uaddr_parse(const char *uaddr, struct sockaddr_storage *ss);
/* A sockaddr_in or sockaddr_in6 (its port included) as a universal address; false when the
 * family is neither or out has no room. */
bool uaddr_format(const struct sockaddr *sa, char *out, size_t len);

#endif
