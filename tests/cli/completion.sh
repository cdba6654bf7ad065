#!/usr/bin/env bash
# completion.sh - packaging/completion/gpurec: sources it and checks
# COMPREPLY for what a user types, against the programs under test (put
# first on PATH as gpurec and gpurecd).  No root.
# Env: GPUREC, GPURECD (binaries under test).
set -uo pipefail
GPUREC=$(realpath "${GPUREC:-build/gpurec}")
GPURECD=$(realpath "${GPURECD:-build/gpurecd}")
T=$(mktemp -d /tmp/gpurec-completion.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0 skipped=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }

mkdir "$T/bin"
ln -s "$GPUREC" "$T/bin/gpurec"
ln -s "$GPURECD" "$T/bin/gpurecd"
PATH=$T/bin:$PATH
# shellcheck source=packaging/completion/gpurec
source packaging/completion/gpurec

# comp WORD...: completes the last word (as bash splits the line: an
# "--opt=value" is "--opt" "=" "value"); prints COMPREPLY sorted, one line.
comp() {
	local spec
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	spec=$(complete -p "$1" 2>/dev/null) || { echo "(no completion for $1)"; return; }
	spec=${spec#*-F }
	"${spec%% *}" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}

# checks LABEL: every case, its name after LABEL.
checks() {
	local L=$1
	# --- gpurec ---------------------------------------------------
	eq "${L}gpurec rep<TAB>" "$(comp gpurec rep)" report
	eq "${L}gpurec <TAB>: the commands of gpurec --help" "$(comp gpurec '')" \
		"$(gpurec --help | sed -n '/^commands:/,/^$/s/^  \([a-z-]*\) .*/\1/p' | sort | tr '\n' ' ' | sed 's/ $//')"
	eq "${L}gpurec --data DIR --since 2h s<TAB>: options and their values skipped" \
		"$(comp gpurec --data /x --since 2h s)" "schema seal-setup shell sql status"
	eq "${L}gpurec --format=csv <TAB> (split at =)" "$(comp gpurec --format = csv '')" \
		"export help report schema seal-setup shell sql status tables verify"
	eq "${L}gpurec sh<TAB>" "$(comp gpurec sh)" "shell"
	eq "${L}gpurec shell -<TAB>: the query and row options; no --param, -o, pager" \
		"$(comp gpurec shell -)" \
		"--data --format --help --host --local --max-memory --no-header --pid --since --time-format --timeout --until --version --wide"
	eq "${L}gpurec shell <TAB>: no argument" "$(comp gpurec shell '')" ""
	eq "${L}gpurec help <TAB>: the commands" "$(comp gpurec help '')" \
		"export help report schema seal-setup shell sql status tables verify"
	eq "${L}gpurec help sql <TAB>: one command only" "$(comp gpurec help sql '')" ""

	reports=$(gpurec --format csv report list | tail -n +2 | cut -d, -f1 | sort | tr '\n' ' ')
	got=$(comp gpurec report '')
	case " $got " in
	*" top-kernels "*) ok "${L}gpurec report <TAB> includes top-kernels" ;;
	*) bad "${L}gpurec report <TAB>" "no top-kernels in [$got]" ;;
	esac
	eq "${L}gpurec report <TAB>: list and every report" "$got" \
		"$(echo list $reports | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')"
	eq "${L}gpurec report t<TAB>" "$(comp gpurec report t)" "timeline top-kernels"
	eq "${L}gpurec --pid 1 report nccl-s<TAB>" "$(comp gpurec --pid 1 report nccl-s)" \
		"nccl-skew nccl-sum"
	eq "${L}gpurec report top-kernels <TAB>: one report only" \
		"$(comp gpurec report top-kernels '')" ""
	eq "${L}gpurec report launch-gaps --param <TAB>: its parameters" \
		"$(comp gpurec report launch-gaps --param '')" "limit= lookup_every= min_ms="
	eq "${L}gpurec report timeline --param d<TAB>" \
		"$(comp gpurec report timeline --param d)" "delta_ms="
	eq "${L}gpurec report mem-churn --param <TAB>: none" \
		"$(comp gpurec report mem-churn --param '')" ""

	eq "${L}gpurec schema cuda_mem<TAB>: tables from gpurec tables" \
		"$(comp gpurec schema cuda_mem)" "cuda_mem cuda_memcpy cuda_memset"
	eq "${L}gpurec export --format csv -o out/ block_io o<TAB>" \
		"$(comp gpurec export --format csv -o out/ block_io o)" "offcpu"
	eq "${L}gpurec schema <TAB>: every table" "$(comp gpurec schema '' | wc -w)" \
		"$(gpurec --format csv tables | tail -n +2 | wc -l)"

	eq "${L}gpurec --format <TAB>" "$(comp gpurec --format '')" \
		"csv json jsonl line table tsv"
	eq "${L}gpurec sql --format j<TAB>" "$(comp gpurec sql --format j)" "json jsonl"
	eq "${L}gpurec --format=j<TAB> (split at =)" "$(comp gpurec --format = j)" \
		"json jsonl"
	eq "${L}gpurec export --format <TAB>: export's formats" \
		"$(comp gpurec export --format '')" "csv jsonl perfetto sqlite"
	eq "${L}gpurec --format <TAB> export (command after)" \
		"$(comp gpurec --format '' )" "csv json jsonl line table tsv"
	eq "${L}gpurec sql --time-format <TAB>" "$(comp gpurec sql --time-format '')" \
		"iso local ns s"
	eq "${L}gpurec --time-format iso s<TAB>: its value skipped" \
		"$(comp gpurec --time-format iso s)" "schema seal-setup shell sql status"
	eq "${L}gpurec sql --no-<TAB>" "$(comp gpurec sql --no-)" "--no-header --no-pager"
	eq "${L}gpurec report top-kernels -<TAB> has -o and --wide" \
		"$(comp gpurec report top-kernels - | tr ' ' '\n' | grep -x -e -o -e --wide -e --local | tr '\n' ' ')" \
		"--local --wide -o "

	eq "${L}gpurec report top-kernels --r<TAB>" "$(comp gpurec report top-kernels --r)" \
		"--raw"
	eq "${L}gpurec verify -<TAB>" "$(comp gpurec verify -)" \
		"--data --format --help --host --pid --since --until --verbose --verification-key --version -v"
	eq "${L}gpurec export --f<TAB>" "$(comp gpurec export --f)" "--force --format"
	eq "${L}gpurec se<TAB>" "$(comp gpurec se)" "seal-setup"
	eq "${L}gpurec seal-setup -<TAB>: its options only" "$(comp gpurec seal-setup -)" \
		"--data --force --help --interval --version"
	eq "${L}gpurec seal-setup --interval <TAB>: no guess" \
		"$(comp gpurec seal-setup --interval '')" ""
	eq "${L}gpurec seal-setup --interval 1h <TAB>: no argument" \
		"$(comp gpurec seal-setup --interval 1h '')" ""
	eq "${L}gpurec --interval 1h s<TAB>: its value skipped" \
		"$(comp gpurec --interval 1h s)" "schema seal-setup shell sql status"
	eq "${L}gpurec sql --t<TAB>" "$(comp gpurec sql --t)" "--time-format --timeout"
	eq "${L}gpurec report x --max<TAB>" "$(comp gpurec report x --max)" "--max-memory"
	eq "${L}gpurec export --timeout 5m <TAB>: its value skipped, tables" \
		"$(comp gpurec export --timeout 5m cuda_mem)" "cuda_mem cuda_memcpy cuda_memset"
	eq "${L}gpurec --timeout <TAB>: no guess" "$(comp gpurec --timeout '')" ""

	eq "${L}gpurec --data <TAB>: directories" "$(comp gpurec --data "$T/d/re")" \
		"$T/d/rec1 $T/d/rec2"
	eq "${L}gpurec export -o <TAB>: files" \
		"$(comp gpurec export --format perfetto -o "$T/d/rec.")" "$T/d/rec.json"
	eq "${L}gpurec export --output=<TAB> (split at =)" \
		"$(comp gpurec export --output = "$T/d/rec.")" "$T/d/rec.json"

	# --- gpurecd --------------------------------------------------
	eq "${L}gpurecd --no-<TAB>" "$(comp gpurecd --no-)" "--no-cuda --no-gpu --no-io --no-sched"
	eq "${L}gpurecd <TAB>: every option of gpurecd --help" "$(comp gpurecd '')" \
		"$(gpurecd --help | sed -n 's/^  \(--[a-z-]*\).*/\1/p' | sort | tr '\n' ' ' | sed 's/ $//')"
	eq "${L}gpurecd --segment-<TAB>" "$(comp gpurecd --segment-)" \
		"--segment-age --segment-size"
	eq "${L}gpurecd --no-io=<TAB> (split at =)" "$(comp gpurecd --no-io = '')" "no yes"
	eq "${L}gpurecd --help=<TAB>: takes no value" "$(comp gpurecd --help = '')" ""
	eq "${L}gpurecd --max-disk <TAB>" "$(comp gpurecd --max-disk '')" "auto"
	eq "${L}gpurecd --m<TAB>: the retention options too" "$(comp gpurecd --m)" \
		"--max-age --max-disk --memory-max --min-age"
	eq "${L}gpurecd --max-age <TAB>: a duration, no guess" "$(comp gpurecd --max-age '')" ""
	eq "${L}gpurecd --segment-size <TAB>: no guess" "$(comp gpurecd --segment-size '')" ""
	eq "${L}gpurecd --data <TAB>: directories" "$(comp gpurecd --data "$T/d/re")" \
		"$T/d/rec1 $T/d/rec2"
	eq "${L}gpurecd --config <TAB>: files" "$(comp gpurecd --config "$T/d/rec.")" \
		"$T/d/rec.json"
	# Where '=' does not split words: the reply keeps the --opt= prefix.
	eq "${L}gpurecd --data=<TAB> (no split at =)" "$(comp gpurecd "--data=$T/d/re")" \
		"--data=$T/d/rec1 --data=$T/d/rec2"
	eq "${L}gpurecd --verbose=<TAB> (no split at =)" "$(comp gpurecd --verbose=)" \
		"--verbose=no --verbose=yes"

}

mkdir -p "$T/d/rec1" "$T/d/rec2"
: >"$T/d/rec.json"
checks ""
# With the bash-completion package loaded (as in an interactive shell
# where it is installed), files come from its _filedir.
BC=/usr/share/bash-completion/bash_completion
if [ -r "$BC" ]; then
	# shellcheck source=/dev/null
	source "$BC"
	source packaging/completion/gpurec
	if declare -F _filedir >/dev/null; then checks "[bash-completion] "
	else bad "bash-completion" "$BC defines no _filedir"; fi
elif [ "${CI:-}" = true ]; then
	bad "bash-completion" "$BC is not installed (packaging/deps.sh)"
else
	echo "skip the checks under bash-completion: $BC is not installed"
	skipped=$((skipped + 1))
fi

echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
