# Shares of Ruby methods in the stacks tally's reader reads (the thread stopped every 5 ms
# by tests/ruby/src/rb_check.c) against a deterministic count of their work: Ruby's
# TracePoint's :line events (rb/shares.rb, shares_check.py), within sampling error.
. tests/lib.sh
. tests/ruby/driver.sh

[ -x "$RUBY" ] || { skip ruby_shares "needs $RUBY (scripts/install-deps.sh test)"; exit 0; }
rb_check_build ruby_shares
"$RUBY" "$ROOT/tests/ruby/rb/shares.rb" "$TMP/counts" - 0 count 2>"$TMP/count.err" ||
	{ fail ruby_shares "the TracePoint count: $(head -3 "$TMP/count.err")"; exit 0; }
if rb_sampled ruby_shares shares.rb 300 -- unused started 2.5 run; then
	python3 "$ROOT/tests/ruby/shares_check.py" "$TMP/counts" "$TMP/ruby_shares/samples" \
		"$(cat "$TMP/ruby_shares/pid")" ruby_shares | grep -E '^(PASS|FAIL):' ||
		fail ruby_shares "shares_check printed no verdict"
fi
