/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The server->client call engine against a fake portmapper and a fake RPC server, each a thread
 * with a UDP socket on a loopback ephemeral port. The fakes decode what they get by hand (not
 * with the engine's xdr_callmsg), so a wrong header fails here: a call via GETPORT arrives with
 * its program, version, procedure, arguments and an AUTH_SYS root credential, from the source
 * address asked for, and done gets the result bytes exactly; dropped datagrams are retransmitted
 * with the same xid and done still runs once; no server ends in -ECONNREFUSED or -ETIMEDOUT,
 * port 0 from the portmapper and each RPC-level error in its documented errno; 200 calls from
 * four threads at once all complete; stop cancels what is pending, once each; a timer fires
 * once, not early.
 *
 * Over TCP, against a fake server with a listening socket and a thread per connection: GETPORT
 * asks for the TCP port, the call arrives as one record with its header and arguments, and a
 * reply written as two fragments in small pieces with pauses between (so the engine reads it in
 * parts) reaches done exactly; a server that reads the call and closes is connected to again
 * after the backoff, then -ECONNRESET; no listener is -ECONNREFUSED; a reply record over the
 * cap is -EBADMSG; 50 calls at once all complete; stop cancels a call waiting for its reply and
 * one waiting to reconnect, once each.
 *
 * The fakes and the calls' bookkeeping are in rpccb_fakes.c, the UDP (and IPv6) cases in
 * test_rpccb_udp.c, the TCP ones in test_rpccb_tcp.c; this file lists them all, in one group. */
#include "rpccb_fakes.h"

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_getport_then_call),
		cmocka_unit_test(test_ipv6_getaddr),
		cmocka_unit_test(test_retransmit_same_xid),
		cmocka_unit_test(test_no_server_refused),
		cmocka_unit_test(test_black_hole_timeout),
		cmocka_unit_test(test_getport_zero),
		cmocka_unit_test(test_rpc_errors),
		cmocka_unit_test(test_many_concurrent),
		cmocka_unit_test(test_stop_cancels),
		cmocka_unit_test(test_after),
		cmocka_unit_test(test_reentrant_done),
		cmocka_unit_test(test_bad_calls),
		cmocka_unit_test(test_tcp_getport_then_call),
		cmocka_unit_test(test_tcp_closed_retried),
		cmocka_unit_test(test_tcp_refused),
		cmocka_unit_test(test_tcp_reply_too_long),
		cmocka_unit_test(test_tcp_many_concurrent),
		cmocka_unit_test(test_tcp_stop_cancels),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
