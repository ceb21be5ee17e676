/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "base/sockaddr.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

/* A dual-stack socket shows an IPv4 client as ::ffff:a.b.c.d; it is the same client the IPv4
 * rules were written for. The config parser turns ::ffff:0:0/96-style rules into IPv4 the same
 * way. */
int sa_addr(const struct sockaddr *sa, uint8_t out[16])
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		memcpy(out, &in->sin_addr, 4);
		return AF_INET;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			memcpy(out, in6->sin6_addr.s6_addr + 12, 4);
			return AF_INET;
		}
		memcpy(out, &in6->sin6_addr, 16);
		return AF_INET6;
	}
	return AF_UNSPEC;
}

bool sa_same_host(const struct sockaddr *a, const struct sockaddr *b)
{
	uint8_t x[16], y[16];
	int fa = sa_addr(a, x);
	/* An IPv4 client is the same client as its ::ffff: form on a dual-stack socket. */
	return fa != AF_UNSPEC && fa == sa_addr(b, y) && memcmp(x, y, fa == AF_INET ? 4 : 16) == 0;
}

socklen_t sa_parse(const char *s, uint16_t port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	memset(ss, 0, sizeof *ss);
	if (inet_pton(AF_INET, s, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		return sizeof *s4;
	}
	if (inet_pton(AF_INET6, s, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		return sizeof *s6;
	}
	return 0;
}

const char *sa_str(const struct sockaddr_storage *ss, char out[INET6_ADDRSTRLEN])
{
	uint8_t a[16];
	int f = sa_addr((const struct sockaddr *)ss, a);
	if (f == AF_UNSPEC || !inet_ntop(f, a, out, INET6_ADDRSTRLEN))
		snprintf(out, INET6_ADDRSTRLEN, "?");
	return out;
}

uint16_t sa_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return 0;
}
