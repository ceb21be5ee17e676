#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Run an integration program in a private network namespace with only the loopback up:
# in_netns.sh PROGRAM ARGS...   Port 111 is free there (the daemon may serve it with
# rpcbind = own, fake client hosts bind 127.0.0.x:111), and nothing the program sends leaves
# it or meets the host's own rpcbind and statd. Exit 77 (skipped) when no namespace can be made.
set -u
if [ -z "${NFSDUC_IN_NETNS:-}" ]; then
	if ! unshare -n true 2>/dev/null; then
		echo "SKIP: cannot make a network namespace (unshare -n: not permitted; needs root or" \
		     "CAP_SYS_ADMIN)" >&2
		exit 77
	fi
	NFSDUC_IN_NETNS=1 exec unshare -n -- "$0" "$@"
fi
if ! command -v ip >/dev/null 2>&1; then
	echo "SKIP: no ip(8) to bring the namespace's loopback up" >&2
	exit 77
fi
if ! ip link set lo up; then
	echo "SKIP: cannot bring up lo in the network namespace" >&2
	exit 77
fi
exec "$@"
