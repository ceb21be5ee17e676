/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Socket addresses as the daemon compares, parses and shows them. A dual-stack socket shows an
 * IPv4 client as ::ffff:a.b.c.d: it is the same client as its IPv4 form everywhere here. */
#ifndef NFSD_UC_BASE_SOCKADDR_H
#define NFSD_UC_BASE_SOCKADDR_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/* The address's family (AF_INET for an IPv4-mapped IPv6 one) and its bytes (4 or 16);
 * AF_UNSPEC when it is neither family. */
int sa_addr(const struct sockaddr *sa, uint8_t out[16]);
/* The same address (the port aside): one client host, IPv4 or its IPv4-mapped form. */
bool sa_same_host(const struct sockaddr *a, const struct sockaddr *b);
/* An IPv4 or IPv6 literal and a port as *ss: its length, 0 when s is neither. */
socklen_t sa_parse(const char *s, uint16_t port, struct sockaddr_storage *ss);
/* The address of ss as text, an IPv4-mapped one as IPv4 ("?" when it is neither family). */
const char *sa_str(const struct sockaddr_storage *ss, char out[INET6_ADDRSTRLEN]);
/* The port of an IPv4 or IPv6 address (host order); 0 for other families. */
uint16_t sa_port(const struct sockaddr_storage *ss);

#endif
