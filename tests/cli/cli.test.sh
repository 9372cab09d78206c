# The command line itself: help, version, exit codes.
. tests/lib.sh

out=$("$TALLY" --version) && [[ "$out" =~ ^tally\ [0-9]+\.[0-9]+\.[0-9]+$ ]] \
	&& pass version_prints_name_and_number || fail version_prints_name_and_number "$out"

"$TALLY" --help | grep -q '^usage: tally' && pass help_prints_usage || fail help_prints_usage

out=$("$TALLY" 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && [[ "$out" == "usage: tally [--version] [--help] COMMAND [ARGS...]"* ]] &&
	pass no_command_is_usage_error || fail no_command_is_usage_error "exit $rc: $out"

err=$("$TALLY" frobnicate 2>&1); rc=$?
[ $rc -eq 2 ] && [[ "$err" == "tally: no such command: frobnicate"* ]] \
	&& pass unknown_command_is_usage_error || fail unknown_command_is_usage_error "exit $rc: $err"

# Every command listed in --help has help of its own.
for cmd in $("$TALLY" --help | awk '/^Commands:/{on=1;next} on && /^  [a-z]/{print $1}'); do
	[ "$cmd" = help ] && continue
	"$TALLY" help "$cmd" | grep -q "usage: tally $cmd" && pass "help_$cmd" || fail "help_$cmd"
done

# The commands that read profiles share their options and say the same about bad ones.
for cmd in report flamegraph annotate export diff; do
	err=$("$TALLY" $cmd --bogus a b 2>&1); rc=$?
	[ $rc -eq 2 ] && [ "$err" = "tally: unknown option: --bogus
Run 'tally help $cmd' for usage." ] && pass "${cmd}_unknown_option_is_usage_error" ||
		fail "${cmd}_unknown_option_is_usage_error" "exit $rc: $err"
	err=$("$TALLY" $cmd a b --metric 2>&1); rc=$?
	[ $rc -eq 2 ] && [[ "$err" == "tally: --metric needs a value"* ]] &&
		pass "${cmd}_option_without_value_is_usage_error" ||
		fail "${cmd}_option_without_value_is_usage_error" "exit $rc: $err"
	err=$("$TALLY" $cmd --unwind=dwarf a b 2>&1); rc=$?
	[ $rc -eq 2 ] && [[ "$err" == "tally: --unwind: expected auto, cfi or fp: dwarf"* ]] &&
		pass "${cmd}_bad_unwind_is_usage_error" || fail "${cmd}_bad_unwind_is_usage_error" "exit $rc: $err"
done
err=$("$TALLY" report -x 2>&1); rc=$?
[ $rc -eq 2 ] && [[ "$err" == "tally: unknown option: -x"* ]] &&
	pass unknown_short_option_is_named || fail unknown_short_option_is_named "exit $rc: $err"
err=$("$TALLY" report --tree=yes 2>&1); rc=$?
[ $rc -eq 2 ] && [[ "$err" == "tally: --tree takes no value"* ]] &&
	pass value_for_a_flag_is_usage_error || fail value_for_a_flag_is_usage_error "exit $rc: $err"

# Each command that reads one profile reads ./perf.data when given none, as perf does, and
# its help says so; more than one is a usage error.
mkdir "$TMP/cwd" && printf 'main;f 3\n' >"$TMP/cwd/perf.data"
for cmd in report flamegraph annotate "export -f folded"; do
	name=${cmd%% *}
	out=$(cd "$TMP/cwd" && "$TALLY" $cmd 2>&1); rc=$?
	if [ $name = annotate ]; then # a folded profile has no addresses to annotate
		[[ "$out" == "tally: perf.data: "* ]] && pass "${name}_reads_perf_data_by_default" ||
			fail "${name}_reads_perf_data_by_default" "exit $rc: $out"
	else
		[ $rc -eq 0 ] && [[ "$out" == *f* ]] && pass "${name}_reads_perf_data_by_default" ||
			fail "${name}_reads_perf_data_by_default" "exit $rc: $out"
	fi
	"$TALLY" help $name | grep -q "usage: tally $name .*\[FILE\]" &&
		"$TALLY" help $name | tr '\n' ' ' | grep -q 'default *perf.data' &&
		pass "${name}_help_names_the_default" || fail "${name}_help_names_the_default"
	err=$("$TALLY" $cmd a b 2>&1); rc=$?
	[ $rc -eq 2 ] && [[ "$err" == "tally: expected one profile FILE (default perf.data)"* ]] &&
		pass "${name}_two_files_is_usage_error" || fail "${name}_two_files_is_usage_error" "exit $rc: $err"
done
err=$("$TALLY" diff a 2>&1); rc=$?
[ $rc -eq 2 ] && [[ "$err" == "tally: expected two profiles: BEFORE AFTER"* ]] &&
	pass diff_wants_two_profiles || fail diff_wants_two_profiles "exit $rc: $err"
err=$("$TALLY" symbolize --bogus 2>&1); rc=$?
[ $rc -eq 2 ] && [ "$err" = "tally: unknown option: --bogus
Run 'tally help symbolize' for usage." ] && pass symbolize_unknown_option_is_usage_error ||
	fail symbolize_unknown_option_is_usage_error "exit $rc: $err"

# tally record's options as perf spells them: -F99 and -F 99, --call-graph=fp, options
# stopping at the command (its own options stay its own).
"$TALLY" record -q -F99 -o "$TMP/r1.data" -- true && "$TALLY" record -q -F 99 -o "$TMP/r2.data" true &&
	"$TALLY" record -q --call-graph=fp -o "$TMP/r3.data" ls -d / >/dev/null &&
	pass record_option_spellings || fail record_option_spellings
err=$("$TALLY" record -Z -- true 2>&1); rc=$?
[ $rc -eq 2 ] && [[ "$err" == "tally: unknown option: -Z"* ]] && pass record_unknown_option_is_usage_error ||
	fail record_unknown_option_is_usage_error "exit $rc: $err"
err=$("$TALLY" record -F 2>&1); rc=$?
[ $rc -eq 2 ] && [[ "$err" == "tally: -F needs a value"* ]] && pass record_option_without_value_is_usage_error ||
	fail record_option_without_value_is_usage_error "exit $rc: $err"
