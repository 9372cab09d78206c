# The target's memory is input (docs/ruby.md, "Bad input"): Ruby structures made to lie in
# place by the process itself with Fiddle (rb/lying.rb), read by tally's reader through
# tests/ruby/src/rb_check.c: an iseq whose label is an Array and path a Hash, shown as
# "[read failed]" with its callers named; a caller's control frame naming a String as its
# iseq: the stack marked read-failed and cut there, nothing of the lie or beyond shown
# (lying_check.py). The driver ends (a timeout would fail it), ruby runs to its end.
. tests/lib.sh
. tests/ruby/driver.sh

[ -x "$RUBY" ] || { skip ruby_lying "needs $RUBY (scripts/install-deps.sh test)"; exit 0; }
rb_check_build ruby_lying
if rb_sampled ruby_lying lying.rb 300 -- phases started 0.6; then
	python3 "$ROOT/tests/ruby/lying_check.py" "$TMP/ruby_lying/samples" \
		"$(cat "$TMP/ruby_lying/pid")" ruby_lying | grep -E '^(PASS|FAIL):' ||
		fail ruby_lying "lying_check printed no verdict"
fi
