#!/bin/bash
# Checks that every #include "MODULE/..." under SRC (default src) goes down the dependency
# order of shared/DESIGN.md: a module includes its own headers, base/ and tally/ (the
# public API's declarations) and those of the modules listed for it below, never another
# module's internal header (*internal.h, *impl.h). A folder missing from the table fails
# too, so that a new module is placed in the order when it is made. Files in a module's
# subfolders (solana/crypto/) are the module's and follow its rules. Prints one line per
# violation, "FILE:LINE: MODULE includes HEADER", and exits 1 when there is any.
# Usage: scripts/check-layering.sh [SRC]
set -u
src=${1:-src}

# What each module may include besides itself, base and tally: a module name (its public
# headers) or one header. DESIGN: cli -> everything; sources -> the core and below;
# solana -> sbpf; replay -> unwind, perf, symbolize, profile; report -> profile, symbolize,
# elf, sbpf's disassembler; unwind, perf -> elf, dwarf; symbolize -> elf, dwarf;
# sbpf -> elf; cpython (CPython's layouts and code objects) -> dwarf, elf, and replay
# and the sources may use it; ruby (Ruby's layouts, libruby's facts, line tables) -> elf,
# likewise; lua (Lua 5.4's layouts) -> nothing, likewise; dwarf -> elf; profile and elf ->
# nothing of ours. Where A -> B and B -> C, A may include C. record writes what replay reads but never uses
# replay: what both need (the records of the BPF programs, what a recording keeps beside
# its perf.data) is in perf/, generic helpers in base/.
core="solana replay report profile unwind perf symbolize sbpf cpython ruby lua dwarf elf"
declare -A may=(
	[cli]="record probes agent cuprof $core"
	[record]="probes/probes.h ${core/replay /}"
	[probes]="$core"
	[agent]="$core"
	[cuprof]="$core"
	[solana]="sbpf elf"
	[replay]="unwind perf symbolize profile cpython ruby lua elf dwarf"
	[report]="profile symbolize elf dwarf sbpf/disasm.h"
	[profile]=""
	[unwind]="elf dwarf"
	[perf]="elf dwarf"
	[symbolize]="elf dwarf"
	[sbpf]="elf"
	[cpython]="dwarf elf"
	[ruby]="elf"
	[lua]=""
	[dwarf]="elf"
	[elf]=""
	[base]=""
)

allowed() { # allowed FROM HEADER
	local from=$1 header=$2 to=${2%%/*} entry
	[[ $to == "$from" ]] && return 0
	[[ $to == base || $to == tally ]] && return 0
	[[ $header == *internal.h || $header == *impl.h ]] && return 1
	for entry in ${may[$from]}; do
		[[ $entry == "$to" || $entry == "$header" ]] && return 0
	done
	return 1
}

bad=0
for dir in "$src"/*/; do
	mod=$(basename "$dir")
	if [[ -z ${may[$mod]+set} ]]; then
		echo "$dir: module $mod is not in the dependency order (scripts/check-layering.sh)"
		bad=1
		continue
	fi
	while IFS=: read -r file line text; do
		header=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' <<<"$text")
		[[ $header == */* ]] || continue
		if ! allowed "$mod" "$header"; then
			echo "$file:$line: $mod includes $header"
			bad=1
		fi
	done < <(grep -rHn --include='*.[ch]' '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$dir")
done
exit $bad
