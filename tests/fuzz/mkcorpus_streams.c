/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mkcorpus's seeds that are no RPC call: record-marking streams for the recmark harness (the
 * receive configuration, then fragments) and HTTP requests for the metrics endpoint. */
#include "mkcorpus.h"

#include <stdlib.h>
#include <string.h>

#include "rpc/recmark.h"

/* Record-marking streams: byte 0 picks max_record, bytes 1-2 the receive sizes. */
void recmark_streams(void)
{
	static const struct { const char *name; uint8_t cfg[3]; uint32_t frags[6]; } s[] = {
		{"one", {11, 255, 255}, {0x80000020}},
		{"two_frags", {11, 7, 3}, {0x10, 0x80000030}},
		{"three_records", {11, 0, 1}, {0x80000004, 0x80000000, 0x80000100}},
		{"large", {11, 100, 255}, {0x80012000}},
		{"over_max", {4, 10, 10}, {0x800, 0x80000100}},
		{"many_small_frags", {7, 3, 2}, {1, 2, 3, 4, 5, 0x80000006}},
		{"empty_frags", {7, 9, 1}, {0, 0, 3, 0, 0x80000001}},
	};
	for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
		struct buf *b = calloc(1, sizeof *b);
		put_bytes(b, s[i].cfg, 3);
		for (int k = 0; k < 6 && s[i].frags[k]; k++) {
			put32(b, s[i].frags[k]);
			for (uint32_t j = 0; j < recmark_len(s[i].frags[k]); j++)
				b->b[b->n++] = (uint8_t)(j * 7 + k);
		}
		save("recmark", s[i].name, b);
		free(b);
	}
}

/* A record of 600 bytes in fragments of one byte, received a few bytes at a time: the growth
 * recasm does must stay linear. */
void recmark_one_byte_frags(void)
{
	struct buf *b = calloc(1, sizeof *b);
	put_bytes(b, (const uint8_t[]){11, 4, 0}, 3);
	for (uint32_t j = 0; j < 600; j++) {
		put32(b, (j == 599 ? 0x80000000u : 0) | 1);
		b->b[b->n++] = (uint8_t)j;
	}
	save("recmark", "one_byte_frags", b);
	free(b);
}

/* HTTP requests for the metrics endpoint: the scrape as Prometheus sends it, its variants, and
 * what the handler refuses. */
void http_requests(void)
{
	static const struct { const char *name, *req; } r[] = {
		{"get", "GET /metrics HTTP/1.1\r\nHost: localhost:9101\r\nUser-Agent: Prometheus/2.45\r\n"
			"Accept: text/plain;version=0.0.4;q=1,*/*;q=0.1\r\nAccept-Encoding: gzip\r\n"
			"X-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n"},
		{"get_10", "GET /metrics HTTP/1.0\r\n\r\n"},
		{"head", "HEAD /metrics HTTP/1.1\r\nHost: h\r\n\r\n"},
		{"pipelined", "GET /metrics HTTP/1.1\r\nHost: h\r\n\r\nGET /other HTTP/1.1\r\nHost: h"
			      "\r\n\r\nHEAD /metrics HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"},
		{"post_body", "POST /metrics HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"},
		{"put_chunked", "PUT /metrics HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
				"5\r\nhello\r\n0\r\n\r\n"},
		{"expect", "GET /metrics HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n"
			   "Content-Length: 3\r\n\r\nabc"},
		{"not_found", "GET /metrics/../x?y=%00 HTTP/1.1\r\nHost: h\r\n\r\n"},
		{"bad_version", "GET /metrics HTTP/9.9\r\nHost: h\r\n\r\n"},
		{"no_host", "GET /metrics HTTP/1.1\r\n\r\n"},
		{"cut", "GET /metr"},
	};
	for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
		struct buf *b = calloc(1, sizeof *b);
		put_bytes(b, r[i].req, strlen(r[i].req));
		save("metrics", r[i].name, b);
		free(b);
	}
}
