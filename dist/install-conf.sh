#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# meson install: put SYSCONFDIR/nfsd-uc.conf in place from the example, never over an existing
# one (an administrator's edits survive upgrades). The example's relative state and export
# directories become /var/lib/nfsd-uc and a commented-out export, so the daemon starts with
# nothing exported until the administrator adds an [export] and reloads.
# usage: install-conf.sh SYSCONFDIR EXAMPLE   (both relative to the prefix, or absolute)
set -eu
under_prefix() { case $1 in /*) echo "$1" ;; *) echo "$MESON_INSTALL_PREFIX/$1" ;; esac; }
etc="${DESTDIR:-}$(under_prefix "$1")"
example="${DESTDIR:-}$(under_prefix "$2")"
conf="$etc/nfsd-uc.conf"
if [ -e "$conf" ]; then
	echo "install-conf: $conf exists, left as it is"
	exit 0
fi
mkdir -p "$etc"
sed -e 's|^state_dir = state$|state_dir = /var/lib/nfsd-uc|' \
    -e '/^\[export export\]$/,$ s/^\([^#]\)/#\1/' \
    -e 's|^#\[export export\]$|#[export /srv/nfs]|' \
    "$example" > "$conf"
chmod 644 "$conf"
echo "install-conf: wrote $conf"
