# `tally symbolize` against llvm-symbolizer (issue 2 section 6): every instruction address in
# .text of each corpus binary, one batch per tool and binary, compared address by address.
# A binary passes when at least 99.9% of its addresses agree byte for byte (addresses where
# llvm-symbolizer prints "??" for a function that tally names are counted apart, as
# improvements). Also: GNU style against addr2line -f -i, --json well-formed, addresses on
# the command line equal addresses on stdin.
#
# SYMBOLIZE_UNDER_TEST=llvm-symbolizer runs the harness with llvm-symbolizer standing in for
# tally (a self-check of the harness: everything must agree).
. tests/lib.sh
. tests/symbolize/addrs.sh
. tests/symbolize/tool.sh

OUT="$CORPUS/symbolize"
if ! notes=$(tests/symbolize/build-corpus.sh "$OUT" 2>&1); then
	fail corpus_builds "$(tail -3 <<<"$notes")"
	exit 0
fi
grep '^NOTE: ' <<<"$notes"
if ! tool_ready; then
	skip symbolize_oracle "tally has no symbolize command"
	exit 0
fi

# Every binary of the manifest, all of .text, both tools once each.
while IFS=$'\t' read -r file oracle dis every desc; do
	name=$(basename "$file")
	text_addrs "$file" "$dis" "$every" >"$TMP/$name.addrs"
	if [ ! -s "$TMP/$name.addrs" ]; then
		fail "oracle_$name" "no instructions in .text"
		continue
	fi
	llvm-symbolizer --inlining --obj="$oracle" <"$TMP/$name.addrs" >"$TMP/$name.want" 2>"$TMP/$name.want.err"
	if ! tool_symbolize "$file" <"$TMP/$name.addrs" >"$TMP/$name.got" 2>"$TMP/$name.err"; then
		fail "oracle_$name" "exit $?: $(head -3 "$TMP/$name.err" | tr '\n' ' ')"
		continue
	fi
	if report=$(python3 tests/symbolize/compare.py llvm "$TMP/$name.addrs" "$TMP/$name.want" \
		"$TMP/$name.got" --name "$name" --examples 3); then
		head -1 <<<"$report"
		pass "oracle_$name"
	else
		printf '%s\n' "$report" | head -60
		fail "oracle_$name" "$(head -1 <<<"$report") [$desc]"
	fi
done <"$OUT/manifest.tsv"

# Addresses outside .text: the first, last and one-past-last byte of every allocated section
# (PLT, read-only data, .data, .bss holding `sink`...), and addresses mapped nowhere. Each
# tool's answer there comes from symbol tables alone, or is "??".
for name in gcc-O2-dw5-bfd-pie clang-O2-dw5-lld-pie gcc-O0-dw5-lld-nopie libcorpus-gcc-O2-dw5-bfd.so; do
	{
		printf '0x0\n0x1\n0x7fffffffffffffff\n0xffffffffffffffff\n'
		readelf -S -W "$OUT/$name" | sed -n 's/^ *\[ *[0-9]*\] *//p' |
			while read -r _ _ addr _ size _ flags _; do
				[[ "$flags" == *A* ]] || continue
				printf '0x%x\n' $((16#$addr))
				[ $((16#$size)) -gt 0 ] && printf '0x%x\n0x%x\n' $((16#$addr + 16#$size - 1)) $((16#$addr + 16#$size))
			done
	} >"$TMP/$name.edge"
	llvm-symbolizer --inlining --obj="$OUT/$name" <"$TMP/$name.edge" >"$TMP/$name.edge.want" 2>/dev/null
	if ! tool_symbolize "$OUT/$name" <"$TMP/$name.edge" >"$TMP/$name.edge.got" 2>"$TMP/$name.edge.err"; then
		fail "edges_$name" "exit $?: $(head -3 "$TMP/$name.edge.err" | tr '\n' ' ')"
	elif report=$(python3 tests/symbolize/compare.py llvm "$TMP/$name.edge" "$TMP/$name.edge.want" \
		"$TMP/$name.edge.got" --name "$name (section edges)" --min 100 --examples 3); then
		head -1 <<<"$report"
		pass "edges_$name"
	else
		printf '%s\n' "$report" | head -40
		fail "edges_$name" "$(head -1 <<<"$report")"
	fi
done

# Addresses given as arguments print the same as addresses read from stdin.
bin="$OUT/gcc-O2-dw5-bfd-pie"
head -40 "$TMP/gcc-O2-dw5-bfd-pie.addrs" >"$TMP/argv.addrs"
# shellcheck disable=SC2046
tool_symbolize "$bin" $(cat "$TMP/argv.addrs") >"$TMP/argv.got" 2>&1
tool_symbolize "$bin" <"$TMP/argv.addrs" >"$TMP/stdin.got" 2>&1
cmp -s "$TMP/argv.got" "$TMP/stdin.got" && pass argv_equals_stdin ||
	fail argv_equals_stdin "$(diff "$TMP/argv.got" "$TMP/stdin.got" | head -5 | tr '\n' ' ')"

# GNU style against addr2line -f -i. GNU style has no separator between addresses:
# addr2line -a marks them in the oracle's output, and the tool's default-style output (same
# frames, other layout) says how many frames each address has in the tool's. addr2line has
# known defects (KNOWN_DIFFERENCES.md; compare.py's addr2line_defect): addresses where only
# those explain the difference are counted apart, and llvm-symbolizer's output confirms the
# file tally names where addr2line names another.
# C++ is compared twice: demangled (tally's default) with addr2line -C, and as stored with
# --no-demangle against plain addr2line.
for spec in gcc-O0-dw4-bfd-pie gcc-O2-dw4-bfd-nopie gcc-O2-dw5-bfd-pie gcc-O3-dw5-bfd-nopie \
	clang-O2-dw5-lld-pie libcorpus-gcc-O2-dw5-bfd.so gcc-O2-dw5-bfd-static \
	cxx-g++-O2-dw5-bfd-pie:-C cxx-clang++-O2-dw4-lld-pie:-C cxx-g++-O2-dw5-bfd-pie:--no-demangle; do
	name=${spec%%:*} a2l=() opts=()
	case "$spec" in
	*:-C) a2l=(-C) ;;
	*:--no-demangle) opts=(--no-demangle) ;;
	esac
	test=gnu_$name${a2l[*]:+_demangled}${opts[*]:+_mangled}
	addr2line -a -f -i "${a2l[@]}" -e "$OUT/$name" <"$TMP/$name.addrs" >"$TMP/$test.want" 2>/dev/null
	if ! tool_symbolize "$OUT/$name" --output-style=GNU "${opts[@]}" <"$TMP/$name.addrs" \
		>"$TMP/$test.got" 2>"$TMP/$test.err"; then
		fail "$test" "$(head -3 "$TMP/$test.err" | tr '\n' ' ')"
		continue
	fi
	if report=$(python3 tests/symbolize/compare.py gnu "$TMP/$name.addrs" "$TMP/$test.want" \
		"$TMP/$test.got" --frames "$TMP/$name.got" --alt "$TMP/$name.want" --examples 3 \
		--name "$name (GNU style${opts[*]:+ ${opts[*]}} vs addr2line${a2l[*]:+ ${a2l[*]}})"); then
		grep -v '^    ' <<<"$report"
		pass "$test"
	else
		printf '%s\n' "$report" | head -60
		fail "$test" "$(head -1 <<<"$report")"
	fi
done

# --json: well-formed (jq), and, for tally, the same frames as llvm-symbolizer once turned
# back into its text layout (json2llvm.py also checks addresses and inlined flags).
for name in gcc-O2-dw5-bfd-pie clang-O2-dw5-lld-pie libcorpus-clang-O2-dw5-lld.so bpf_prog-O2.o; do
	if ! tool_symbolize "$OUT/$name" --json <"$TMP/$name.addrs" >"$TMP/$name.json" 2>"$TMP/$name.json.err"; then
		fail "json_$name" "$(head -3 "$TMP/$name.json.err" | tr '\n' ' ')"
		continue
	fi
	if [ -s "$TMP/$name.json" ] && jq -e . "$TMP/$name.json" >/dev/null 2>"$TMP/$name.jq.err"; then
		pass "json_wellformed_$name"
	else
		fail "json_wellformed_$name" "jq: $(head -2 "$TMP/$name.jq.err" | tr '\n' ' ')"
	fi
	[ "${SYMBOLIZE_UNDER_TEST:-tally}" = llvm-symbolizer ] && continue
	if ! python3 tests/symbolize/json2llvm.py "$TMP/$name.addrs" "$TMP/$name.json" \
		>"$TMP/$name.json.txt" 2>"$TMP/$name.json.err"; then
		fail "json_matches_llvm_symbolizer_$name" "$(head -2 "$TMP/$name.json.err" | tr '\n' ' ')"
	elif report=$(python3 tests/symbolize/compare.py llvm "$TMP/$name.addrs" "$TMP/$name.want" \
		"$TMP/$name.json.txt" --name "$name (--json)" --examples 3); then
		head -1 <<<"$report"
		pass "json_matches_llvm_symbolizer_$name"
	else
		printf '%s\n' "$report" | head -30
		fail "json_matches_llvm_symbolizer_$name" "$(head -1 <<<"$report")"
	fi
done
