# Stacks that change fast (rb/churn.rb: recursion of random depth into blocks, a Fiber that
# recurses and yields, exceptions raised through a recursion and rescued, in three threads
# besides the main one) read by tally's reader through tests/ruby/src/rb_check.c, each
# thread stopped as the sampler stops it: every stack read is one the program can have at
# some instant (churn_check.py: a prefix of its call chains with Ruby's labels and lines,
# then C frames), none marked read-failed, every thread read, the fiber's frames apart.
. tests/lib.sh
. tests/ruby/driver.sh

[ -x "$RUBY" ] || { skip ruby_churn "needs $RUBY (scripts/install-deps.sh test)"; exit 0; }
rb_check_build ruby_churn
if rb_sampled ruby_churn churn.rb 150 -- unused started 1.5; then
	python3 "$ROOT/tests/ruby/churn_check.py" "$TMP/ruby_churn/samples" \
		"$(cat "$TMP/ruby_churn/pid")" ruby_churn | grep -E '^(PASS|FAIL):' ||
		fail ruby_churn "churn_check printed no verdict"
fi
