# Ruby 3.1's frames read from a live, unmodified ruby by tally's reader (record/ruby_walk.h),
# each thread stopped as the ptrace sampler stops it, through tests/ruby/src/rb_check.c (the
# reader and replay's record parser, without tally record): the chain workload
# (rb/chain.rb) against Ruby's own caller_locations at the same points (chain_check.py):
# the whole chain with Ruby's labels, paths and lines in >= 98% of the samples, and
# Array#sort's samples under the Ruby frame and line that called it. As root, and as an
# ordinary user reading their own process (scripts/as-nobody.sh).
. tests/lib.sh
. tests/ruby/driver.sh

[ -x "$RUBY" ] || { skip ruby_walk "needs $RUBY (scripts/install-deps.sh test)"; exit 0; }
rb_check_build ruby_walk

# chain NAME [AS...]: the workload and the driver run by AS (nothing: root), checked.
chain() {
	local name=$1
	shift
	rb_sampled "$name" chain.rb 300 "$@" -- oracle started 1.2 || return
	python3 "$ROOT/tests/ruby/chain_check.py" "$TMP/$name/oracle" "$TMP/$name/samples" \
		"$(cat "$TMP/$name/pid")" "$name" | grep -E '^(PASS|FAIL):' ||
		fail "$name" "chain_check printed no verdict"
}

chain ruby_walk_chain_root
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && command -v unshare >/dev/null; then
	chmod 711 "$TMP"
	chain ruby_walk_chain_nobody "$ROOT/scripts/as-nobody.sh" "$TMP"
else
	skip ruby_walk_chain_nobody "needs root to drop to nobody, setpriv and unshare"
fi
