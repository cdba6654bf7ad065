#!/usr/bin/env bash
# service_creds.sh - gpurecd records as the service runs it: an unprivileged
# uid and gid with exactly the capabilities of
# packaging/systemd/gpurecd.service (root, eBPF; docs/service.md).
#
# The user has no passwd entry (numeric ids, as setpriv gives them).  The
# traced program and its mock CUDA libraries (tests/cuda/driver.sh's) are
# copied into a directory only root can enter, like a 0700 home, and run as
# root: one started before gpurecd ("old": its /proc is read with
# CAP_SYS_PTRACE) and one after ("new").  Checks: the exact rows of
# driver.sh; the sd_notify protocol (READY=1, WATCHDOG=1, STOPPING=1) that
# Type=notify and WatchdogSec rely on; owners and modes of the data
# directory and its files (0750, 0640, sealed 0440 and immutable); a
# member of the group reads the recording, live and sealed, and anyone
# else gets a one-line error; rotation and retention delete immutable
# segments; libraries hidden from gpurecd's mount namespace (what
# ProtectHome= and PrivateTmp= do) are still attached, through
# /proc/PID/map_files; every system call it makes is one the unit's
# SystemCallFilter allows.  Then each capability is taken away in turn,
# and what it is for stops working.
#
# Not root or no BPF: skipped with a reason, except under CI=true, where
# that is a failure.
# shellcheck disable=SC2034,SC2016 # SUITE is lib.sh's; sh -c '...'
set -uo pipefail
SUITE=service
. "$(dirname "$0")/../cuda/lib.sh"

UNIT=packaging/systemd/gpurecd.service
[ -x build/cuda-tests/drv_calls ] || { bad "drv_calls" "not built: run make bpf-test"; finish; exit 1; }
for t in setpriv unshare nsenter lsattr capsh python3 strace systemd-analyze; do
	command -v $t >/dev/null || { bad "$t" "not installed (packaging/deps.sh)"; finish; exit 1; }
done

# The unit's capabilities, as setpriv spells them (+bpf,+perfmon,...).
unit_caps() { sed -n "s/^$1=//p" "$UNIT" | tr ' ' '\n' | sed 's/^CAP_//' | tr '[:upper:]' '[:lower:]' | LC_ALL=C sort | paste -sd,; }
CAPS=$(unit_caps AmbientCapabilities)
eq "the unit's bounding set is its ambient set" "$(unit_caps CapabilityBoundingSet)" "$CAPS"
eq "the unit's capability set" "$CAPS" "bpf,dac_read_search,linux_immutable,perfmon,sys_admin,sys_ptrace,syslog"
plus() { echo "-all${1:+,+}${1//,/,+}"; }
without() { echo "$CAPS" | tr , '\n' | grep -vxE "$1" | paste -sd,; }

U=61100 M=61101 O=61102 # gpurecd; a member of its group; anyone else
chmod 0755 "$T"
W="$T/priv" # where only root (and CAP_DAC_READ_SEARCH) can look
mkdir -m 0700 "$W" && mkdir "$W/mock"
cp build/cuda-tests/drv_calls "$W/"
cp build/cuda-tests/mock/libcuda.so.1 build/cuda-tests/mock/libcudart.so.13 "$W/mock/"
LIBS=(--cuda-lib "$W/mock/libcuda.so.1" --cuda-lib "$W/mock/libcudart.so.13")

# datadir DIR: an empty data directory as tmpfiles.d/gpurec.conf makes it.
datadir() { mkdir -m 0750 "$1" && chown "$U:$U" "$1"; }

# as_gpurecd CAPS LOG DIR ARGS...: starts gpurecd as U:U with CAPS
# (ambient, inheritable, bounding) and the unit's umask, on DIR, and waits
# until it is ready (wait_ready's status: 0 ready, 1 it exited, 2 not
# ready after 60 s scaled to the load); dpid is its pid.  HIDE="DIR...":
# in a mount namespace of its own where each DIR is an empty tmpfs (the
# runs that need not attach the toolkit's libraries hide /usr/local: the
# kernel takes some 30 s to remove their 300 uprobes).  STRACE=FILE:
# under strace -f -c, its summary in FILE.
as_gpurecd() {
	local caps log=$1 dir=$2; caps=$(plus "$3"); shift 3
	local cmd=(setpriv --reuid="$U" --regid="$U" --clear-groups --inh-caps="$caps"
		--ambient-caps="$caps" --bounding-set="$caps"
		${STRACE:+strace -f -qq -c -o "$STRACE"}
		"$GPURECD" --data "$dir" --flush-interval 100 --config /dev/null "$@")
	if [ -n "${HIDE:-}" ]; then
		cmd=(unshare -m --propagation private sh -c 'for d in $0; do
			[ ! -d "$d" ] || mount -t tmpfs -o mode=0700 none "$d" || exit 1; done
			exec "$@"' "$HIDE" "${cmd[@]}")
	fi
	(umask 0027; exec "${cmd[@]}") >"$log" 2>&1 &
	dpid=$!
	wait_ready "$log" "$dpid" 60
}
stop() { kill -TERM "$dpid" 2>/dev/null; wait "$dpid"; local rc=$?; dpid=; return $rc; }
# as UID [GROUPS] -- gpurec ARGS: runs the query program as UID.
as() {
	local u=$1 g=--clear-groups; shift
	[ "$1" != -- ] && { g=--groups=$1; shift; }
	shift; setpriv --reuid="$u" --regid="$u" "$g" "$GPUREC" "$@"
}
qa() { as "$@" --format csv sql "$Q" 2>&1 | tr -d '\r' | tail -n +2 | tr '\n' ' '; }

# sd_notify: what systemd would receive on NOTIFY_SOCKET, one per line.
NS_PATH="$T/notify"
python3 - "$NS_PATH" "$T/notify.out" <<'EOF' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o666)
s.settimeout(60)
with open(sys.argv[2], "w") as f:
    while True:
        m = s.recv(4096).decode()
        f.write(m + "\n"); f.flush()
        if m == "STOPPING=1":
            break
EOF
npid=$!
for _ in $(seq 50); do [ -S "$NS_PATH" ] && break; sleep 0.1; done

# ---- the service's run: driver.sh's processes, rows, files, readers ------
datadir "$D"
L="$T/gpurecd.log"
"$W/drv_calls" "$T/go.old" >"$T/old.out" & po=$!
sleep 0.2 # its early calls are made before gpurecd starts
NOTIFY_SOCKET=$NS_PATH WATCHDOG_USEC=1000000 \
	as_gpurecd "$L" "$D" "$CAPS" "${LIBS[@]}"
case $? in
1) cat "$L"; skip "gpurecd did not start as uid $U (BPF unavailable?)" ;;
2) cat "$L"; bad "gpurecd ready as uid $U" "still starting after $WAITED"
   finish; exit 1 ;;
esac
# procst FIELD: gpurecd's /proc status line (capabilities by name).
procst() {
	local v; v=$(awk -v f="$1:" '$1 == f { print $2 }' /proc/$dpid/status)
	case $1 in Cap*) capsh --decode="$v" | sed 's/.*=//; s/cap_//g' | tr , '\n' | LC_ALL=C sort | paste -sd,;; *) echo "$v";; esac
}
eq "gpurecd runs as uid and gid $U" "$(procst Uid) $(procst Gid) $(procst Groups)" "$U $U "
# Once attached, gpurecd's sandbox (recorder/sandbox.c) keeps the unit's
# set less cap_syslog (kallsyms is read at start) and empties the ambient
# set; without cap_setpcap the bounding set stays the unit's.
KEPT=$(echo "$CAPS" | tr , '\n' | grep -vx syslog | paste -sd,)
eq "with the unit's capabilities, less cap_syslog once sandboxed" \
	"$(procst CapPrm) $(procst CapEff) $(procst CapBnd) $(procst CapAmb)" "$KEPT $KEPT $CAPS "
touch "$T/go.old"; wait $po; eq "(old) its calls succeed" "$?" 0
touch "$T/go.new"
"$W/drv_calls" "$T/go.new" >"$T/new.out" & pn=$!; wait $pn
eq "(new) its calls succeed" "$?" 0
sleep 0.5
grep -q "driver .*$W/mock/libcuda.so.1 records every launch" "$L" && ok "a library in a 0700 directory is attached (CAP_DAC_READ_SEARCH)" || bad "driver log" "$(cat "$L")"
grep -q "pid $po predates gpurecd: 2 runtime launch probes" "$L" && ok "another user's process is attached through /proc (CAP_SYS_PTRACE)" || bad "old pid log" "$(cat "$L")"

seg=$(ls "$D"/*.seg)
eq "the data directory: 0750, owned by the service user" "$(stat -c '%a %u:%g' "$D")" "750 $U:$U"
eq "the open segment: 0640" "$(stat -c '%a %u:%g' "$seg")" "640 $U:$U"
Q="SELECT count(*) FROM cuda_api WHERE pid = $pn"
eq "a member of the group queries the live recording" "$(qa $M $U -- --data "$D")" "45 "

K="SELECT api, count(*), grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_mem, stream, kernel, kernel_mangled, ret FROM cuda_kernel"
G="GROUP BY api, kernel_mangled, grid_x ORDER BY api, kernel_mangled, grid_x"
stop; eq "gpurecd exits 0 on SIGTERM" "$?" 0
wait $npid
eq "sd_notify: READY=1, then watchdog pings, then STOPPING=1" \
	"$(sed -n '1p;$p' "$T/notify.out" | tr '\n' ' ')$(grep -c '^WATCHDOG=1$' "$T/notify.out" | awk '{ print ($1 > 0) }')" \
	"READY=1 STOPPING=1 1"

eq "(new) one row per launch, all at the driver, all named" "$(q "$K WHERE pid = $pn $G")" \
	'cuLaunchKernel,1,1,1,1,1,1,1,0,0,"vadd(float*, float*, int)",_Z4vaddPfS_i,0 cuLaunchKernel,5,10,1,1,128,1,1,0,0,"vadd(float*, float*, int)",_Z4vaddPfS_i,0 cuLaunchKernel,4,3,2,1,64,2,1,256,119,"kernel(float*, int)",_Z6kernelPfi,0 cuLaunchKernel,2,1,1,1,32,1,1,0,0,oldker(),_Z6oldkerv,0 cuLaunchKernel,2,2,2,1,16,1,1,0,0,oldker(),_Z6oldkerv,0 cuLaunchKernelEx,3,16,8,1,256,1,1,49152,153,"void ns::gemm<128>(float const*, float*)",_ZN2ns4gemmILi128EEEvPKfPf,0 '
eq "(old) runtime launches named from the stub or the handle's memory" "$(q "$K WHERE pid = $po $G")" \
	'cuLaunchKernel,4,3,2,1,64,2,1,256,119,"kernel(float*, int)",_Z6kernelPfi,0 cuLaunchKernel,2,1,1,1,32,1,1,0,0,oldker(),_Z6oldkerv,0 cuLaunchKernelEx,3,16,8,1,256,1,1,49152,153,"void ns::gemm<128>(float const*, float*)",_ZN2ns4gemmILi128EEEvPKfPf,0 cudaLaunchKernel,5,10,1,1,128,1,1,0,0,"vadd(float*, float*, int)",_Z4vaddPfS_i,0 cudaLaunchKernel,2,2,2,1,16,1,1,0,0,oldker(),_Z6oldkerv,0 '
# pv CASE NAME: a pointer the program printed ("ptr NAME VALUE").
pv() { sed -n "s/^ptr $2 //p" "$T/$1.out"; }
memcpy_rows() {
	local h dev pin hal pg reg
	h=$(pv "$1" host) dev=$(pv "$1" dev) pin=$(pv "$1" pin) hal=$(pv "$1" hal) pg=$(pv "$1" pg) reg=$(pv "$1" reg)
	echo "cudaMemcpy,H2D,4096,0,$h,$dev,0 cudaMemcpyAsync,H2D,4096,1,$pin,$dev,0 cudaMemcpyAsync,D2H,4096,1,$dev,$((pin + 60000)),0 cudaMemcpyAsync,H2D,16384,1,$pg,$dev,0 cuMemcpyDtoHAsync_v2,D2H,2048,1,$dev,$((pg + 100)),0 cuMemcpyHtoDAsync_v2,H2D,32768,1,$hal,$dev,0 cuMemcpyHtoDAsync_v2,H2D,8192,1,$reg,$dev,0 cuMemcpyHtoDAsync_v2,H2D,8192,1,$reg,$dev,0 cuMemcpyHtoDAsync_v2,H2D,4096,1,$((reg + 4096)),$dev,0 cuMemcpy,default,1024,0,$pg,$dev,0 cuMemcpy,default,512,0,$hal,$dev,0 cuMemcpy2DAsync_v2,H2D,1024,1,$pg,$dev,0 cuMemcpy2D_v2,D2H,1024,0,$dev,$((hal + 1024)),0 cudaMemcpyAsync,H2D,4096,1,$pin,$dev,0 "
}
MC="SELECT api, kind, bytes, async, src, dst, ret FROM cuda_memcpy"
eq "(new) copies: direction, bytes, src and dst" "$(q "$MC WHERE pid = $pn ORDER BY ts")" "$(memcpy_rows new)"
eq "nothing was dropped" "$(q "SELECT count(*) FROM drops")" "0 "

eq "the sealed segment: 0440, owned by the service user" "$(stat -c '%a %u:%g' "$seg")" "440 $U:$U"
eq "the sealed segment is immutable (CAP_LINUX_IMMUTABLE)" "$(lsattr "$seg" | cut -c5)" "i"
eq "no file of the recording is readable by others" \
	"$(find "$D" -perm /o=rwx | wc -l) $(find "$D" ! -user $U | wc -l)" "0 0"
Q="SELECT count(*) FROM cuda_api WHERE pid = $pn"
eq "a member of the group queries the sealed recording" "$(qa $M $U -- --data "$D")" "45 "
as $M $U -- --data "$D" verify >/dev/null 2>&1; eq "a member of the group verifies it" "$?" 0
out=$(as $O -- --data "$D" sql "$Q" 2>&1); rc=$?
eq "anyone else: one line, exit 1" "$rc $out" "1 gpurec: cannot read data directory $D: Permission denied"
out=$(as $O -- --data "$D" status 2>&1); rc=$?
eq "anyone else: status too" "$rc $out" "1 gpurec: cannot read data directory $D: Permission denied"
setpriv --reuid=$O --regid=$O --clear-groups cat "$seg" >/dev/null 2>&1
eq "anyone else cannot read a segment by its path" "$?" 1
out=$(setpriv --reuid=$M --regid=$M --groups=$U sh -c "echo x >>'$D/MANIFEST'" 2>&1)
case $out in *"Permission denied"*) ok "a member of the group cannot write to the recording";;
	*) bad "a member of the group cannot write to the recording" "$out";; esac

# ---- rotation and retention: sealed, immutable segments are deleted ----
D2="$T/rot"; datadir "$D2"
as_gpurecd "$T/rot.log" "$D2" "$CAPS" --no-cuda --sched-all --segment-size 1K --max-disk 200K --keep-free 1M ||
	bad "gpurecd (rotation) starts" "$(cat "$T/rot.log")"
for _ in $(seq 100); do [ "$(grep -c '^delete ' "$D2/MANIFEST" 2>/dev/null)" -ge 3 ] && break; sleep 0.1; done
stop; eq "gpurecd (rotation) exits 0" "$?" 0
nd=$(grep -c '^delete ' "$D2/MANIFEST")
[ "$nd" -ge 3 ] && ok "retention deleted $nd segments" || bad "retention" "$nd deletions: $(cat "$T/rot.log")"
gone=0; for f in $(sed -n 's/^delete \([^ ]*\) .*/\1/p' "$D2/MANIFEST"); do [ -e "$D2/$f" ] || gone=$((gone + 1)); done
eq "every segment the manifest says was deleted is gone" "$gone" "$nd"
eq "gpurecd logged no failed deletion" "$(grep -c 'cannot delete' "$T/rot.log")" 0
nseg=$(ls "$D2"/*.seg | wc -l)
eq "every segment left is sealed: 0440 and immutable" \
	"$(for f in "$D2"/*.seg; do echo "$(stat -c %a "$f")$(lsattr "$f" | cut -c5)"; done | sort -u | tr '\n' ' ')" "440i "
[ "$nseg" -ge 1 ] && ok "$nseg segments left" || bad "segments left" "none"

# ---- libraries hidden from gpurecd's mounts (ProtectHome=, PrivateTmp=) --
D3="$T/ns"; datadir "$D3"
HIDE="$W /usr/local" as_gpurecd "$T/ns.log" "$D3" "$CAPS" --no-sched --no-io || bad "gpurecd (namespace) starts" "$(cat "$T/ns.log")"
nsenter -t "$dpid" -m test -e "$W/drv_calls"
eq "gpurecd's mount namespace does not show $W" "$?" 1
"$W/drv_calls" "$T/go.ns" >"$T/ns.out" & pns=$!
attached() { grep -q "attached .* to $W/mock/libcuda.so.1 " "$1" && grep -q "attached .* to $W/mock/libcudart.so.13 " "$1"; }
for _ in $(seq 100); do attached "$T/ns.log" && break; sleep 0.1; done
attached "$T/ns.log" && ok "its libraries are attached through /proc/PID/map_files" || bad "ns attach" "$(cat "$T/ns.log")"
touch "$T/go.ns"; wait $pns; eq "(ns) its calls succeed" "$?" 0
sleep 0.3
stop; eq "gpurecd (namespace) exits 0" "$?" 0
eq "(ns) copies recorded exactly" \
	"$("$GPUREC" --data "$D3" --format csv sql "$MC WHERE pid = $pns ORDER BY ts" | tr -d '\r' | tail -n +2 | tr '\n' ' ')" "$(memcpy_rows ns)"

# ---- the unit's SystemCallFilter allows every call gpurecd makes ---------
# strace counts the calls of a run that attaches, records the workload,
# rotates and deletes; the unit's filter is expanded by systemd-analyze.
expand() {
	local x
	for x in "$@"; do
		case $x in
		@*) systemd-analyze syscall-filter "$x" | sed 1,2d | grep -v '^ *#' |
			while read -r y; do expand "$y"; done ;;
		*) echo "$x" ;;
		esac
	done
}
# shellcheck disable=SC2046 # the filter's words
allowed=$(comm -23 <(expand $(sed -n 's/^SystemCallFilter=\([^~]\)/\1/p' "$UNIT") | sort -u) \
	<(expand $(sed -n 's/^SystemCallFilter=~//p' "$UNIT") | sort -u))
S="$T/strace"; mkdir "$S"; chown "$U:$U" "$S"
D4="$T/sys"; datadir "$D4"
# (LeakSanitizer cannot run under ptrace.)
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 STRACE="$S/summary" HIDE=/usr/local as_gpurecd "$T/sys.log" "$D4" "$CAPS" "${LIBS[@]}" --sched-all \
	--segment-size 1K --max-disk 100K --keep-free 1M --duration 4 || bad "gpurecd (strace) starts" "$(cat "$T/sys.log")"
"$W/drv_calls" "$T/go.sys" >/dev/null & psys=$!
sleep 0.5; touch "$T/go.sys"; wait $psys
wait "$dpid"; rc=$?; dpid=; [ $rc = 0 ] && ok "gpurecd (strace) exits 0" || bad "gpurecd (strace) exits 0" "$rc: $(cat "$T/sys.log")"
used=$(awk 'NR > 2 && $1 !~ /^-/ && $NF != "total" { print $NF }' "$S/summary" | sort -u)
# (Uprobes in bulk links are made with bpf() alone; perf_event_open is
# for a kernel without them: the SystemCallFilter keeps it.)
[ "$(echo "$used" | wc -l)" -ge 30 ] && grep -q '^delete ' "$D4/MANIFEST" &&
	grep -qx bpf <<<"$used" &&
	ok "strace saw $(echo "$used" | wc -l) system calls, bpf among them, and a deletion" ||
	bad "strace" "$(cat "$S/summary" "$T/sys.log")"
eq "every one of them is in the unit's SystemCallFilter" "$(comm -23 <(echo "$used") <(echo "$allowed") | tr '\n' ' ')" ""

# ---- each capability, taken away ------------------------------------------
# A gpurecd with less: LOG, DIR (fresh), its log after SIGTERM.
less_run() { local n=$1; shift; datadir "$T/$n"; HIDE=/usr/local as_gpurecd "$T/$n.log" "$T/$n" "$@"; }
# Since 6.16 the kernel wants CAP_SYS_ADMIN for a perf-event uprobe (a
# single link), not for multi-uprobe or session links: CAP_SYS_ADMIN is
# kept for kernels that have only single links (docs/service.md).
less_run no_admin "$(without sys_admin)" "${LIBS[@]}" --no-sched --no-io
grep -q "probes attach as one uprobe-session link per file" "$T/no_admin.log" &&
	grep -q "attached 48 probes (24 entry points) to .*libcuda.so.1 " "$T/no_admin.log" &&
	! grep -q "could not be attached" "$T/no_admin.log" &&
	ok "without CAP_SYS_ADMIN session links attach" || bad "without CAP_SYS_ADMIN (session)" "$(cat "$T/no_admin.log")"
stop
GPURECD_UPROBE_MULTI=0 less_run no_admin1 "$(without sys_admin)" "${LIBS[@]}" --no-sched --no-io
grep -q "libcuda.so.1: [0-9]* entry points could not be attached: Permission denied" "$T/no_admin1.log" &&
	ok "without CAP_SYS_ADMIN single uprobe links are refused" || bad "without CAP_SYS_ADMIN (single)" "$(cat "$T/no_admin1.log")"
stop
less_run no_bpf "$(without 'sys_admin|bpf|perfmon')" --no-cuda
grep -q "host: probe families disabled" "$T/no_bpf.log" &&
	ok "without CAP_SYS_ADMIN, CAP_BPF and CAP_PERFMON no BPF program loads" || bad "without CAP_BPF" "$(cat "$T/no_bpf.log")"
stop
less_run no_dac "$(without dac_read_search)" "${LIBS[@]}" --no-sched --no-io
grep -q -- "--cuda-lib $W/mock/libcuda.so.1: Permission denied" "$T/no_dac.log" &&
	ok "without CAP_DAC_READ_SEARCH a library in a 0700 directory is out of reach" || bad "without CAP_DAC_READ_SEARCH" "$(cat "$T/no_dac.log")"
stop
"$W/drv_calls" "$T/go.np" >/dev/null & pnp=$!
sleep 0.2
less_run no_ptrace "$(without sys_ptrace)" "${LIBS[@]}" --no-sched --no-io
grep -q "cuda: pid $pnp: runtime launch probes on $W/mock/libcudart.so.13: Permission denied" "$T/no_ptrace.log" &&
	ok "without CAP_SYS_PTRACE another user's process's libraries cannot be attached (map_files)" ||
	bad "without CAP_SYS_PTRACE" "$(cat "$T/no_ptrace.log")"
touch "$T/go.np"; wait $pnp
stop
less_run no_imm "$(without linux_immutable)" --no-cuda --no-io --sched-all
stop
eq "without CAP_LINUX_IMMUTABLE the sealed segment is not immutable" "$(lsattr "$T"/no_imm/*.seg | cut -c5)" "-"
# kallsyms hides its addresses without CAP_SYSLOG unless kptr_restrict=0
# and perf_event_paranoid <= 1.
if [ "$(cat /proc/sys/kernel/kptr_restrict)" != 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 1 ]; then
	less_run no_syslog "$(without syslog)" --no-cuda --no-io
	stop
	grep -q "cannot read /proc/kallsyms (Operation not permitted)" "$T/no_syslog.log" &&
		ok "without CAP_SYSLOG kernel frames go unnamed" || bad "without CAP_SYSLOG" "$(cat "$T/no_syslog.log")"
	grep -q "kallsyms" "$L" && bad "with CAP_SYSLOG" "$(grep kallsyms "$L")" || ok "with CAP_SYSLOG /proc/kallsyms is read"
fi
finish
