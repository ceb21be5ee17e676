/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The server the dispatch and connection harnesses fuzz: the daemon's own code (every source
 * but main(), see meson.build), started as main.c's prepare() does, with one ring thread, a small
 * cache and exports on a temporary tree (fz_marks.h), the lock manager (NLM, NSM, callbacks) and
 * our own portmapper's registry. Nothing is faked below dispatch_record(): handlers do their file
 * calls through the ring's io_uring, fibers, the blocking pool and the handle cache, on real
 * files, and the lock manager takes real OFD locks and calls the client back over the network.
 * What the harness replaces is the socket layer: a record is handed to dispatch_record() in a
 * fiber of the ring, as server.c's request_main does, and the reply is checked (fz_check.h)
 * instead of sent; and the client host the callbacks go to (in a network namespace of the
 * harness's own, see README.md). */
#ifndef NFSD_UC_FZ_SERVER_H
#define NFSD_UC_FZ_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Start the server once per process (LLVMFuzzerInitialize). Environment: FZ_TRACE=1 prints every
 * call and its outcome, FZ_LOG=1 lets the server log at debug level, FZ_RESET_EVERY (below). argv names the directories libFuzzer
 * writes to, which stay writable when the sandbox makes the rest of / read-only. */
void fz_server_init(int *argc, char ***argv);

/* Around each fuzzer input: begin forgets the last handle of the previous input and, every
 * FZ_RESET_EVERY inputs (environment, default 64; the first input always), remakes the export
 * trees, drops what the fuzzed clients hold in the lock manager and makes the portmapper's
 * registry anew; end waits until the ring runs no fiber (write-behind included), so that nothing
 * of one input runs during the next and LeakSanitizer sees no pointer parked on a fiber's stack,
 * and until the lock manager's callbacks are answered (fz_dispatch). */
void fz_input_begin(void);
void fz_input_end(void);

/* Copy in to out with every placeholder (fz_marks.h) replaced; returns the length written.
 * out must hold fz_subst_cap(len) bytes. */
size_t fz_subst_cap(size_t len);
size_t fz_subst(const uint8_t *in, size_t len, uint8_t *out);

/* Run one record (no record mark) through dispatch_record() on the ring, from 127.0.0.1:700 to
 * 127.0.0.1 (the ring's port), come over UDP or TCP (which programs answer, and the transport
 * the lock manager calls the client back over), and check the reply against the call (fz_check.h);
 * a reply that hands out a new handle makes it the input's last one. Waits until the reply has
 * been checked and freed, and the callbacks the call caused have been answered (but those the
 * client host leaves unanswered: fz_marks.h, FZ_GRANTED_SILENT). */
void fz_dispatch(const uint8_t *rec, size_t len, bool udp);

/* The TCP port ring 0 accepts NFS and MOUNT connections on (127.0.0.1), and the largest record
 * it takes. Connections come from unprivileged ports: only the insecure export (direct) lets
 * them in. */
uint16_t fz_server_port(void);
size_t fz_server_max_record(void);
/* The server itself (its configuration may be completed before what reads it starts: the metrics
 * endpoint). */
struct daemon;
struct daemon *fz_daemon(void);
/* The server's connection and record-memory counts, to stderr: what a stuck connection waits for. */
void fz_server_dump(void);
/* Print what could not be set up, with errno's message, and exit: the harness cannot run without
 * it (fz_server.c and fz_client.c). */
_Noreturn void fz_die(const char *what);

#endif
