# The command line itself: help, version, exit codes.
. tests/lib.sh

out=$("$TALLY" --version) && [[ "$out" =~ ^tally\ [0-9]+\.[0-9]+\.[0-9]+$ ]] \
	&& pass version_prints_name_and_number || fail version_prints_name_and_number "$out"

"$TALLY" --help | grep -q '^usage: tally' && pass help_prints_usage || fail help_prints_usage

"$TALLY" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && pass no_command_is_usage_error || fail no_command_is_usage_error "exit $rc"

err=$("$TALLY" frobnicate 2>&1); rc=$?
[ $rc -eq 2 ] && [[ "$err" == "tally: no such command: frobnicate"* ]] \
	&& pass unknown_command_is_usage_error || fail unknown_command_is_usage_error "exit $rc: $err"

# Every command listed in --help has help of its own.
for cmd in $("$TALLY" --help | awk '/^Commands:/{on=1;next} on && /^  [a-z]/{print $1}'); do
	[ "$cmd" = help ] && continue
	"$TALLY" help "$cmd" | grep -q "usage: tally $cmd" && pass "help_$cmd" || fail "help_$cmd"
done
