# SPDX-License-Identifier: GPL-2.0-or-later
# krb5.sh - the checks of the linux-client-krb5 test, run inside the guest (busybox sh) as
# /host/main.sh (copied into every job: editing it needs no image rebuild).
#
# /host/env sets SERVER_IP and SERVER_NAME (the name the guest mounts, whose nfs/ principal the
# server's keytab holds), GUEST_IP and GUEST_NAME (the guest's host/ principal, in
# /host/krb5.keytab), NETBITS, REALM, EXPORT (sec=krb5:krb5i:krb5p), EXPORTP (sec=krb5p only),
# KUSER, KUID and KPASS (the user with a ticket: the same name and uid on the server's side),
# NOUID (a user with no ticket), MIB (MiB per file) and OPTMO (seconds any mount or file
# command may take). /host/krb5.conf names the KDC on the host side of the namespace.
# Before the checks a krb5p mount of EXPORTP is made and kept on /mnt/pin (see below).
#
# Checks (each prints "CHECK n NAME: PASS|FAIL ..." and appends "n NAME PASS|FAIL ..." to
# /host/results; 6 is the host's):
#   1 kinit       KUSER's kinit with the password gets a ticket (klist)
#   2 krb5        mount EXPORT with -o sec=krb5; then, on that mount:
#   3 krb5i         /proc/mounts says sec=FLAVOR and mountstats the pseudoflavor; KUSER writes
#   4 krb5p         a file with cp and one with dd oflag=direct (new random bytes each), and
#                   after drop_caches reads back every file written so far (through earlier
#                   flavors' mounts too), buffered and with dd iflag=direct: SHA-256 equal;
#                   the files are KUSER's (uid KUID: the server mapped the principal to its
#                   user); the user without a ticket is refused (EACCES) reading a file whose
#                   mode lets everyone read, listing a mode-1777 directory and creating a file
#                   there (listing the export's root fails too); the client's READ and WRITE
#                   statistics are printed
#   5 krb5p-only  mount -o sec=sys and -o sec=krb5 of EXPORTP are refused, and sec=sys of
#                 EXPORT; a mount of EXPORTP with no sec= gets sec=krb5p (MNT's list); sec=krb5p
#                 of EXPORTP mounts and passes the checks of 2-4
# The expected SHA-256 of every file goes to /host/sums for the host to check on the export.
# Exit status: the number of failures.
. /host/env
export PATH
NFAIL=0
OPTMO=${OPTMO:-120}
MIB=${MIB:-4}
MOPTS=vers=3,proto=tcp,mountproto=tcp,nolock
AS_K="nfst asuser $KUID $KUID"
AS_N="nfst asuser $NOUID $NOUID"

say() { echo "[krb5] $*"; }
result() {  # N NAME PASS|FAIL TEXT
	echo "$1 $2 $3 $4" >>/host/results
	say "CHECK $1 $2: $3 $4"
	[ "$3" = PASS ] || NFAIL=$((NFAIL + 1))
}
tmo() { timeout -s KILL "$OPTMO" "$@"; }
diag() {
	say "--- diagnostics: dmesg (last 25 lines)"
	dmesg | tail -n 25 | sed 's/^/[krb5]   /'
	say "--- rpc.gssd (last 30 lines)"
	tail -n 30 /tmp/gssd.log 2>/dev/null | sed 's/^/[krb5]   /'
}
pseudo() {  # the RPCSEC_GSS pseudoflavor of a flavor name (RFC 2623)
	case $1 in krb5) echo 390003 ;; krb5i) echo 390004 ;; krb5p) echo 390005 ;; sys) echo 1 ;; esac
}
# the "sec:" line of MNT's entry in /proc/self/mountstats
mountsec() {
	awk -v m="$1" '$1 == "device" {on = ($5 == m)} on && $1 == "sec:" {print $2; exit}' /proc/self/mountstats
}
# READ and WRITE of MNT's entry in /proc/self/mountstats: calls, MiB, mean round trip and
# mean execution time in ms (the client's view of the server's speed with this flavor)
opstats() {
	awk -v m="$1" '$1 == "device" {on = ($5 == m)}
		on && ($1 == "READ:" || $1 == "WRITE:") && $2 > 0 {
			mib = ($1 == "READ:" ? $6 : $5) / 1048576
			printf "%s %d calls %.0f MiB rtt %.1f ms exec %.1f ms; ", $1, $2, mib, $8 / $2, $9 / $2
		}' /proc/self/mountstats
}
sum() { sha256sum "$1" 2>/dev/null | cut -d' ' -f1; }
# the file's bytes read with O_DIRECT, as KUSER
dsum() { tmo $AS_K gdd if="$1" bs=1M iflag=direct status=none 2>/dev/null | sha256sum | cut -d' ' -f1; }

: >/host/results
: >/host/sums
: >/tmp/sums

# ---- network: the guest's own address on the namespace's /24, names by /etc/hosts
ip addr flush dev eth0
ip addr add "$GUEST_IP/$NETBITS" dev eth0 && ip link set eth0 up
hostname "$GUEST_NAME"
printf '127.0.0.1 localhost\n%s %s %s\n%s %s %s\n' "$GUEST_IP" "$GUEST_NAME" "${GUEST_NAME%%.*}" \
	"$SERVER_IP" "$SERVER_NAME" "${SERVER_NAME%%.*}" >/etc/hosts
i=0
while [ $i -lt 50 ] && ! ping -c 1 -W 1 "$SERVER_IP" >/dev/null 2>&1; do i=$((i + 1)); sleep 0.2; done
say "guest $GUEST_NAME $GUEST_IP, server $SERVER_NAME $SERVER_IP $(ping -c 1 -W 2 "$SERVER_IP" 2>&1 | grep -o 'time=[0-9.]* ms' || echo unreachable)"

# ---- Kerberos: krb5.conf, the machine keytab (host/GUEST_NAME), the user, rpc.gssd
cp /host/krb5.conf /etc/krb5.conf
cp /host/krb5.keytab /etc/krb5.keytab && chmod 600 /etc/krb5.keytab
echo "$KUSER:x:$KUID:$KUID:$KUSER:/tmp:/bin/sh" >>/etc/passwd
echo "$KUSER:x:$KUID:" >>/etc/group
mkdir -p /run/rpc_pipefs
mount -t rpc_pipefs rpc_pipefs /run/rpc_pipefs || say "cannot mount rpc_pipefs"
rpc.gssd -f -v -v -v -p /run/rpc_pipefs >/tmp/gssd.log 2>&1 &
GPID=$!
# gssd is running for the kernel once it has opened the dummy pipe of rpc_pipefs/gssd
gssd_ready() {
	for fd in /proc/$GPID/fd/*; do
		case $(readlink "$fd") in */rpc_pipefs/gssd/*) return 0 ;; esac
	done
	return 1
}
i=0
while [ $i -lt 100 ] && ! gssd_ready; do i=$((i + 1)); sleep 0.1; done
if kill -0 $GPID 2>/dev/null; then
	say "rpc.gssd pid $GPID up after $((i * 100)) ms; keytab: $(klist -k /etc/krb5.keytab 2>&1 | awk 'NR > 3 {print $2}' | sort -u | tr '\n' ' ')"
else
	say "rpc.gssd exited: $(tail -n 5 /tmp/gssd.log | tr '\n' ' ')"
fi

# ---- the kernel's upcall version, pinned before the checks. The kernel asks rpc.gssd through
# the text pipe "gssd" (v1) or the legacy pipe "krb5" (v0), whichever gssd opens first while
# none is open (per network namespace): gssd opens "krb5" only when it finds no "gssd" in a new
# client's directory, but now and then it does so for the first mount (seen with nfs-utils
# 2.6.2 and Linux 6.12: "handle_krb5_upcall" in its log), and its v0 upcalls fail here (it
# limits them to the single-DES enctypes MIT 1.20 no longer has: "gss_set_allowable_enctypes
# ... Program lacks support for encryption type"), so that mount fails or its users do. A
# first mount kept until the end, made again until gssd served it through "gssd", holds the
# version at 1 for every later mount (gssd's later opens of a "krb5" pipe get EBUSY).
mkdir -p /mnt/pin
pin=""
for try in 1 2 3 4 5; do
	v0=$(grep -c 'handle_krb5_upcall' /tmp/gssd.log)
	o=$(tmo mount.nfs "$SERVER_NAME:$EXPORTP" /mnt/pin -o "$MOPTS,sec=krb5p,nosharecache" 2>&1)
	r=$?
	if [ "$(grep -c 'handle_krb5_upcall' /tmp/gssd.log)" = "$v0" ]; then
		if [ $r = 0 ]; then pin="try $try"; else pin="try $try failed (rc=$r $o)"; fi
		break
	fi
	say "pin mount, try $try: rpc.gssd served the legacy krb5 pipe (mount rc=$r): again"
	[ $r = 0 ] && tmo umount /mnt/pin
	sleep 1
done
say "upcall version pinned by a krb5p mount of exportp kept on /mnt/pin: ${pin:-no: every try took the legacy pipe}"

# ---- check 1: KUSER's ticket, from its password (the ccache FILE:/tmp/krb5cc_KUID, where
# rpc.gssd looks for it)
echo "$KPASS" | tmo $AS_K kinit "$KUSER@$REALM" >/tmp/kinit.out 2>&1
rc=$?
tmo $AS_K klist >/tmp/klist.out 2>&1
sed 's/^/[krb5]   klist| /' /tmp/klist.out
if [ $rc = 0 ] && grep -q "krbtgt/$REALM@$REALM" /tmp/klist.out; then
	result 1 kinit PASS "$KUSER@$REALM has a ticket in $(grep -o 'FILE:[^ ]*' /tmp/klist.out)"
else
	result 1 kinit FAIL "kinit rc=$rc: $(tr '\n' ' ' </tmp/kinit.out)"
fi
$AS_N klist >/dev/null 2>&1 && say "warning: uid $NOUID has a ticket too"

# data: one file written with cp and one with dd oflag=direct per mount, new random bytes each
# (the cp'd one MIB MiB + 4097 bytes, not a multiple of a page)
mkdata() {  # NAME -> /tmp/NAME.buf.src, /tmp/NAME.dio.src
	head -c $((MIB * 1048576 + 4097)) /dev/urandom >"/tmp/$1.buf.src"
	head -c $((MIB * 1048576)) /dev/urandom >"/tmp/$1.dio.src"
	chmod 644 "/tmp/$1.buf.src" "/tmp/$1.dio.src"
}

# io_checks MNT REL NAME FLAVOR: the checks of 2-4 on a mounted export; sets BAD and NUMS
io_checks() {
	m=$1 rel=$2 name=$3 f=$4
	d=$m/$KUSER
	BAD="" NUMS=""
	opts=$(awk -v m="$m" '$2 == m {print $4}' /proc/mounts)
	case ",$opts," in *",sec=$f,"*) ;; *) BAD="$BAD; /proc/mounts has no sec=$f: $opts" ;; esac
	ms=$(mountsec "$m")
	case $ms in *"pseudoflavor=$(pseudo "$f")"*) ;; *) BAD="$BAD; mountstats sec: '$ms' (want pseudoflavor=$(pseudo "$f"))" ;; esac
	say "$name: /proc/mounts: $(awk -v m="$m" '$2 == m' /proc/mounts)"
	say "$name: mountstats sec: $ms"
	# the user without a ticket, before KUSER's calls fill the client's caches: pub, and the
	# export's root (whose refusal the client itself reports as ESTALE, against any server:
	# the GETATTR of the root's weak revalidation, nfs_weak_revalidate, fails with EACCES and
	# the VFS makes a failed weak revalidation ESTALE; only its failure is required)
	o=$(tmo $AS_N ls "$m/pub" 2>&1)
	r=$?
	case $r:$o in 0:*) BAD="$BAD; uid $NOUID (no ticket) listed pub: $o" ;; *"ermission denied"*) ;; *) BAD="$BAD; uid $NOUID ls pub: rc=$r $o (want EACCES)" ;; esac
	nt_ls="rc=$r ${o##*: }"
	o=$(tmo $AS_N ls "$m" 2>&1)
	r=$?
	[ $r = 0 ] && BAD="$BAD; uid $NOUID (no ticket) listed the export's root: $o"
	nt_root="rc=$r ${o##*: }"
	# KUSER writes
	mkdata "$name"
	t0=$(date +%s)
	o=$(tmo $AS_K cp "/tmp/$name.buf.src" "$d/$name.buf" 2>&1) || BAD="$BAD; cp as $KUSER failed: $o"
	o=$(tmo $AS_K gdd if="/tmp/$name.dio.src" of="$d/$name.dio" bs=1M oflag=direct conv=fsync status=none 2>&1) ||
		BAD="$BAD; dd oflag=direct as $KUSER failed: $o"
	tmo $AS_K sync
	t1=$(date +%s)
	for k in buf dio; do
		echo "$rel/$KUSER/$name.$k $(sum "/tmp/$name.$k.src")" >>/tmp/sums
		rm -f "/tmp/$name.$k.src"
	done
	# every file so far, read back from the server: buffered after drop_caches, and O_DIRECT
	sync
	echo 3 >/proc/sys/vm/drop_caches
	nread=0
	while read -r p want; do
		case $p in "$rel"/*) ;; *) continue ;; esac
		f2=$m/${p#"$rel"/}
		got=$(tmo $AS_K sha256sum "$f2" 2>/tmp/rd.err | cut -d' ' -f1)
		[ "$got" = "$want" ] || BAD="$BAD; ${p##*/} read back (buffered) ${got:-failed: $(cat /tmp/rd.err)} != written $want"
		got=$(dsum "$f2")
		[ "$got" = "$want" ] || BAD="$BAD; ${p##*/} read back (O_DIRECT) ${got:-failed} != written $want"
		nread=$((nread + 1))
	done </tmp/sums
	t2=$(date +%s)
	own=$(stat -c %u:%g "$d/$name.buf" "$d/$name.dio" 2>&1 | sort -u | xargs)
	[ "$own" = "$KUID:$KUID" ] || BAD="$BAD; owner of $KUSER's new files: $own (want $KUID:$KUID: the principal mapped to the server's user $KUSER)"
	# the user without a ticket: a file any user may read, a directory any user may write
	o=$(tmo $AS_N cat "$d/$name.buf" 2>&1 >/dev/null)
	r=$?
	case $r:$o in 0:*) BAD="$BAD; uid $NOUID (no ticket) read $name.buf" ;; *"ermission denied"*) ;; *) BAD="$BAD; uid $NOUID cat: rc=$r $o (want EACCES)" ;; esac
	nt_cat="rc=$r ${o##*: }"
	o=$(tmo $AS_N touch "$m/pub/$name.noticket" 2>&1)
	r=$?
	case $r:$o in 0:*) BAD="$BAD; uid $NOUID (no ticket) created pub/$name.noticket" ;; *"ermission denied"*) ;; *) BAD="$BAD; uid $NOUID touch: rc=$r $o (want EACCES)" ;; esac
	nt_touch="rc=$r ${o##*: }"
	ops=$(opstats "$m")
	mb=$(((2 * MIB * 1048576 + 4097) / 1048576))
	NUMS="$ms; wrote $mb MiB in $((t1 - t0)) s (cp + dd oflag=direct), read back $nread file(s) twice (buffered, O_DIRECT) equal in $((t2 - t1)) s; owner $own; client's ${ops%; }; no ticket: ls pub $nt_ls, cat $nt_cat, touch $nt_touch, ls / $nt_root"
}

# flavor N FLAVOR EXPORT_PATH REL MNT: check N on EXPORT_PATH mounted with -o sec=FLAVOR
flavor() {
	n=$1 f=$2 e=$3 rel=$4 m=$5
	mkdir -p "$m"
	t0=$(date +%s)
	o=$(tmo mount.nfs "$SERVER_NAME:$e" "$m" -o "$MOPTS,sec=$f" 2>&1)
	r=$?
	if [ $r != 0 ]; then
		result "$n" "$f" FAIL "mount -o sec=$f of $SERVER_NAME:$e: rc=$r $o"
		diag
		return
	fi
	say "mounted $SERVER_NAME:$e on $m with sec=$f in $(($(date +%s) - t0)) s"
	io_checks "$m" "$rel" "$f" "$f"
	[ -z "$BAD" ] || diag
	tmo umount "$m" || BAD="$BAD; umount failed"
	if [ -z "$BAD" ]; then result "$n" "$2" PASS "$NUMS"; else result "$n" "$2" FAIL "${BAD#; } | $NUMS"; fi
}

flavor 2 krb5 "$EXPORT" export /mnt/krb5
flavor 3 krb5i "$EXPORT" export /mnt/krb5i
flavor 4 krb5p "$EXPORT" export /mnt/krb5p

# ---- check 5: the export for krb5p alone
bad="" refused=""
refuse() {  # EXPORT_PATH FLAVOR: the mount must fail
	mkdir -p /mnt/no
	o=$(tmo mount.nfs "$SERVER_NAME:$1" /mnt/no -o "$MOPTS,sec=$2" 2>&1)
	r=$?
	if [ $r = 0 ]; then
		bad="$bad; mount -o sec=$2 of $1 succeeded: $(awk '$2 == "/mnt/no" {print $4}' /proc/mounts)"
		tmo umount /mnt/no
	else
		refused="$refused; sec=$2 of ${1##*/}: rc=$r $(echo "$o" | tail -n 1)"
	fi
}
refuse "$EXPORTP" sys
refuse "$EXPORTP" krb5
refuse "$EXPORT" sys
say "refused mounts: ${refused#; }"
# no sec= at all: the client takes the first flavor of MNT's list it can use (RFC 2623 2.7)
mkdir -p /mnt/nosec
o=$(tmo mount.nfs "$SERVER_NAME:$EXPORTP" /mnt/nosec -o "$MOPTS" 2>&1)
r=$?
if [ $r = 0 ]; then
	nosec=$(awk '$2 == "/mnt/nosec" {print $4}' /proc/mounts | tr ',' '\n' | grep '^sec=')
	[ "$nosec" = sec=krb5p ] || bad="$bad; mount with no sec= of exportp got ${nosec:-no sec=} (want sec=krb5p, MNT's only flavor)"
	tmo umount /mnt/nosec
else
	nosec="mount failed: rc=$r $(echo "$o" | tail -n 1)"
	bad="$bad; mount with no sec= of exportp: $nosec"
fi
say "mount with no sec= of exportp: $nosec"
mkdir -p /mnt/ponly
o=$(tmo mount.nfs "$SERVER_NAME:$EXPORTP" /mnt/ponly -o "$MOPTS,sec=krb5p" 2>&1)
r=$?
if [ $r = 0 ]; then
	io_checks /mnt/ponly exportp ponly krb5p
	bad="$bad$BAD"
	tmo umount /mnt/ponly || bad="$bad; umount failed"
else
	bad="$bad; mount -o sec=krb5p of $EXPORTP: rc=$r $o"
	NUMS=""
fi
[ -z "$bad" ] || diag
if [ -z "$bad" ]; then
	result 5 krb5p-only PASS "refused:${refused#;}; no sec=: $nosec | krb5p: $NUMS"
else
	result 5 krb5p-only FAIL "${bad#; } | refused:${refused#;}; no sec=: $nosec | krb5p: $NUMS"
fi

tmo umount /mnt/pin 2>/dev/null
cp /tmp/sums /host/sums
cp /tmp/gssd.log /host/gssd.log 2>/dev/null
dmesg >/host/dmesg.txt
kill $GPID 2>/dev/null
say "done: $NFAIL failure(s)"
exit $NFAIL
