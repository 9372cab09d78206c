# The symbolizer under test (sourced). Normally `$TALLY symbolize`; with
# SYMBOLIZE_UNDER_TEST=llvm-symbolizer, llvm-symbolizer stands in for it, so the harness can
# be checked before tally's symbolizer exists (every comparison must then agree).

# tool_symbolize FILE [--output-style=GNU | --json] [--debug-dir DIR] [ADDR...]: addresses
# from stdin when none.
tool_symbolize() {
	local file=$1
	shift
	if [ "${SYMBOLIZE_UNDER_TEST:-tally}" = llvm-symbolizer ]; then
		local args=()
		while [ $# -gt 0 ]; do
			case "$1" in
			--json) args+=(--output-style=JSON) ;;
			--debug-dir) args+=("--debug-file-directory=$2") && shift ;;
			*) args+=("$1") ;;
			esac
			shift
		done
		# llvm-symbolizer 14 cannot decompress zstd: use the corpus's decompressed twin.
		[ -f "$file.plain" ] && file=$file.plain
		llvm-symbolizer --inlining --obj="$file" "${args[@]}"
	else
		"$TALLY" symbolize -e "$file" "$@"
	fi
}

# tool_ready: true when the tool under test exists.
tool_ready() {
	[ "${SYMBOLIZE_UNDER_TEST:-tally}" = llvm-symbolizer ] || "$TALLY" help symbolize >/dev/null 2>&1
}
