/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "rpc/uaddr.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sockaddr.h"

bool uaddr_parse(const char *uaddr, struct sockaddr_storage *ss)
{
	if (!uaddr)
		return false;
	size_t n = strlen(uaddr);
	const char *d2 = memrchr(uaddr, '.', n);
	const char *d1 = d2 ? memrchr(uaddr, '.', (size_t)(d2 - uaddr)) : NULL;
	if (!d1 || d1 == uaddr || (size_t)(d1 - uaddr) >= INET6_ADDRSTRLEN)
		return false;
	unsigned p[2];
	const char *parts[2] = {d1 + 1, d2 + 1}, *ends[2] = {d2, uaddr + n};
	for (int i = 0; i < 2; i++) {
		const char *s = parts[i];
		size_t len = strspn(s, "0123456789");
		if (len == 0 || len > 3 || s + len != ends[i])
			return false;
		p[i] = (unsigned)atoi(s);
		if (p[i] > 255)
			return false;
	}
	char host[INET6_ADDRSTRLEN];
	memcpy(host, uaddr, (size_t)(d1 - uaddr));
	host[d1 - uaddr] = '\0';
	return sa_parse(host, (uint16_t)(p[0] << 8 | p[1]), ss) != 0;
}

bool uaddr_format(const struct sockaddr *sa, char *out, size_t len)
{
	char host[INET6_ADDRSTRLEN];
	uint16_t port;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof host);
		port = ntohs(s4->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof host);
		port = ntohs(s6->sin6_port);
	} else {
		return false;
	}
	int n = snprintf(out, len, "%s.%u.%u", host, port >> 8, port & 0xff);
	return n > 0 && (size_t)n < len;
}
