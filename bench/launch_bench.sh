#!/usr/bin/env bash
# launch_bench.sh - `make bench`'s daemon.cpu_pct_at_500k_launches: the CPU
# gpurecd would take, in percent of one core, to record 500,000 kernel
# launches a second (8 PyTorch processes on an H100 make ~475,000),
# projected from what it takes here (issue 17).
#
#   bash bench/launch_bench.sh GPURECD GPUREC LAUNCH_LOOP MOCK_DIR    (root)
#
# NPROC launch-loop processes (bench/launch_loop.c: cudaLaunchKernel
# through the mock libcudart and libcuda in MOCK_DIR, one probe hit at the
# driver per launch) launch for LOAD_S seconds while gpurecd records them.
# A uprobe hit costs the launching thread microseconds here, so they reach
# a fraction of 500,000 a second: the figure is a projection, made from
# gpurecd's own CPU time (utime + stime of /proc/PID/stat, all its
# threads), which the probes are not part of: a uprobe's handler and its
# BPF program run in the task that hit it and are charged to it (the
# launchers' CPU per launch, printed beside, is where that went).  Per
# round:
#
#   idle  gpurecd's CPU over IDLE seconds with nothing launching: its
#         timers (the 5 ms drain, the flush), in % of a core;
#   load  its CPU from the launchers' start until their launches are
#         drained, encoded and flushed (SETTLE seconds after they exit),
#         less the idle rate over that time: the CPU per launch.
#
#   projected % = idle % + CPU per launch x 500,000 x 100
#
# which is conservative for the per-launch part: at 500,000 a second each
# 5 ms drain takes a larger batch, and what a drain costs whatever its
# size is spread over more launches.  The store is then checked: every
# launch recorded once and named, or counted in a `drops` row (the
# launchers run at nice 19, so that gpurecd gets a core when it wants one,
# as on a GPU host, but a busy 2-core VM can still hold it off long
# enough to fill the ring buffer); the CPU per launch is per launch
# recorded.  ROUNDS rounds; the medians are printed.
#
# BASELINE=/path/to/another/gpurecd runs that one beside GPURECD in each
# round, recording the same launches at the same time (each launch then
# hits both's probes), and prints its figures too (`_baseline`): a before
# and after that no change in the machine's load between runs can skew.
#
# Exits non-zero with a one-line reason if not root, a gpurecd does not
# start or stop cleanly, or a launch is neither recorded and named nor
# counted as dropped.
set -uo pipefail
usage="usage: launch_bench.sh GPURECD GPUREC LAUNCH_LOOP MOCK_DIR"
GPURECD=${1:?$usage}
GPUREC=${2:?$usage}
LOOP=${3:?$usage}
MOCK=${4:?$usage}
NPROC=${NPROC:-8}
LOAD_S=${LOAD_S:-10}
IDLE=${IDLE:-3}
SETTLE=${SETTLE:-2.5}
ROUNDS=${ROUNDS:-3}
RATE=500000
[ "$(id -u)" = 0 ] || { echo "launch_bench: needs root (BPF)" >&2; exit 1; }
tmp=$(mktemp -d -t gpurec-launch-bench.XXXXXX)
bins=("$GPURECD") tags=("")
[ -n "${BASELINE:-}" ] && bins+=("$BASELINE") tags+=("_baseline")
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; chattr -R -i "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
die() { echo "launch_bench: $*" >&2; exit 1; }
tck=$(getconf CLK_TCK)
# cpu_s: each gpurecd's user + system CPU seconds so far
cpu_s() { for p in "${pids[@]}"; do awk -v t="$tck" '{printf "%.2f ", ($14 + $15) / t}' "/proc/$p/stat"; done; }
now_s() { date +%s.%N; }

for r in $(seq "$ROUNDS"); do
	# With BASELINE, who starts (and attaches) first alternates: of two
	# copies of one gpurecd, the first measured 8 % cheaper over 5 rounds.
	pids=()
	order=("${!bins[@]}")
	[ $((r % 2)) = 0 ] && order=($(printf '%s\n' "${order[@]}" | tac))
	for k in "${order[@]}"; do
		: >"$tmp/log.$r.$k" # there before the wait below reads it
		"${bins[$k]}" --data "$tmp/d$r.$k" --config /dev/null \
			--cuda-lib "$MOCK/libcuda.so.1" \
			--cuda-lib "$MOCK/libcudart.so.13" >"$tmp/log.$r.$k" 2>&1 &
		pids[$k]=$!
	done
	for k in "${!bins[@]}"; do
		log=$tmp/log.$r.$k
		for _ in $(seq 1200); do
			grep -q "gpurecd: ready" "$log" && break
			kill -0 "${pids[$k]}" 2>/dev/null || break
			sleep 0.1
		done
		grep -q "gpurecd: ready" "$log" ||
			die "${bins[$k]} did not start: $(tail -2 "$log")"
	done
	sleep 1 # their start-up work done
	read -ra c0 < <(cpu_s); t0=$(now_s)
	sleep "$IDLE"
	read -ra c1 < <(cpu_s); t1=$(now_s)
	loops=()
	for i in $(seq "$NPROC"); do
		nice -n 19 "$LOOP" "$LOAD_S" >"$tmp/loop.$r.$i" &
		loops+=($!)
	done
	for p in "${loops[@]}"; do
		wait "$p" || die "round $r: a launch-loop failed"
	done
	sleep "$SETTLE"
	read -ra c2 < <(cpu_s); t2=$(now_s)
	read -r n lcpu < <(cat "$tmp"/loop.$r.* | awk '{n += $2; c += $4} END {print n, c}')
	for k in "${!bins[@]}"; do
		kill -TERM "${pids[$k]}"; wait "${pids[$k]}"; rc=$?
		[ "$rc" = 0 ] || die "${bins[$k]} exited $rc on SIGTERM: $(tail -2 "$tmp/log.$r.$k")"
		# Its rows of the launchers alone: it records whatever else on
		# the host launches through a libcuda too.
		IFS=, read -r rows named lost < <("$GPUREC" --data "$tmp/d$r.$k" \
			--format csv sql "SELECT
			    (SELECT count(*) FROM cuda_kernel WHERE comm = 'launch-loop'),
			    (SELECT count(kernel) FROM cuda_kernel WHERE comm = 'launch-loop'),
			    (SELECT coalesce(sum(count), 0) FROM drops
			     WHERE source LIKE 'cuda:%')" | tail -1 | tr -d '\r')
		[ "$rows" -le "$n" ] && [ "$((rows + lost))" -ge "$n" ] &&
			[ "$named" = "$rows" ] ||
			die "round $r: $n launches, but ${bins[$k]} has $rows rows, $named named, $lost dropped"
		awk -v c0="${c0[$k]}" -v c1="${c1[$k]}" -v c2="${c2[$k]}" \
		    -v t0="$t0" -v t1="$t1" -v t2="$t2" -v n="$rows" \
		    -v lost="$((n - rows))" -v lcpu="$lcpu" -v s="$LOAD_S" -v rate=$RATE '
		BEGIN {
			idle = (c1 - c0) / (t1 - t0)
			per = (c2 - c1 - idle * (t2 - t1)) / n
			printf "%.3f %.4f %.3f %d %.0f %.2f %.2f %d\n",
				idle * 100 + per * rate * 100, per * 1e6,
				idle * 100, n, n / s, c2 - c1,
				lcpu / (n + lost) * 1e6, lost
		}' >>"$tmp/rounds.$k"
	done
	pids=()
done
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for k in "${!bins[@]}"; do
	f=$tmp/rounds.$k t=${tags[$k]}
	col() { awk -v k="$1" '{print $k}' "$f" | median; }
	printf "daemon.cpu_pct_at_500k_launches%s %.1f %% (projected: %.2f %% idle + %.3f us x 500,000/s; %d rounds)\n" \
		"$t" "$(col 1)" "$(col 3)" "$(col 2)" "$ROUNDS"
	printf "daemon.cpu_us_per_launch%s %.3f us (gpurecd's CPU per launch recorded, idle rate taken off)\n" \
		"$t" "$(col 2)"
	printf "daemon.launch_bench_load%s %d launches recorded in %s s from %d processes (%.0f/s), gpurecd %.2f CPU s, launchers %.2f us CPU per launch (the probes); %d dropped in all rounds\n" \
		"$t" "$(col 4)" "$LOAD_S" "$NPROC" "$(col 5)" "$(col 6)" "$(col 7)" \
		"$(awk '{s += $8} END {print s}' "$f")"
done
if [ -n "${BASELINE:-}" ]; then
	paste -d' ' "$tmp/rounds.0" "$tmp/rounds.1" | awk '{print $2 / $10}' |
		sort -n >"$tmp/ratios"
	printf "daemon.cpu_us_per_launch_ratio %.2f (GPURECD / BASELINE, the median of the rounds' ratios; %.2f-%.2f)\n" \
		"$(median <"$tmp/ratios")" "$(head -1 "$tmp/ratios")" "$(tail -1 "$tmp/ratios")"
fi
