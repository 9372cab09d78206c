# Ruby 3.1's frames read from a live, unmodified ruby by tally's reader (record/ruby_walk.h),
# each thread stopped as the ptrace sampler stops it, through tests/ruby/src/rb_check.c (the
# reader and replay's record parser, without tally record): the chain workload
# (rb/chain.rb) against Ruby's own caller_locations at the same points (chain_check.py):
# the whole chain with Ruby's labels, paths and lines in >= 98% of the samples, and
# Array#sort's samples under the Ruby frame and line that called it. As root, and as an
# ordinary user reading their own process (scripts/as-nobody.sh).
. tests/lib.sh

RUBY=/usr/bin/ruby3.1
[ -x "$RUBY" ] || { skip ruby_walk "needs $RUBY (scripts/install-deps.sh test)"; exit 0; }
libs=$(sed -n 's/^LIBS := //p' "$ROOT/Makefile")
# shellcheck disable=SC2086
cc -std=gnu11 -I"$ROOT/src" -I"$ROOT/include" -o "$TMP/rb_check" "$ROOT/tests/ruby/src/rb_check.c" \
	"$ROOT/$BUILD/modules.a" $libs $([ "$BUILD" = build-asan ] && echo -fsanitize=address,undefined) \
	2>"$TMP/cc.err" || { fail ruby_walk "rb_check does not build: $(head -3 "$TMP/cc.err")"; exit 0; }

# chain NAME [AS...]: the workload and the driver run by AS (nothing: root), checked.
chain() {
	local name=$1 d=$TMP/$1 pid i
	shift
	mkdir -p "$d"
	chmod 777 "$d"
	cp "$ROOT/tests/ruby/rb/chain.rb" "$d/chain.rb"
	"$@" "$RUBY" "$d/chain.rb" "$d/oracle" "$d/started" 1.5 >"$d/ruby.out" 2>&1 &
	pid=$!
	for i in $(seq 100); do [ -s "$d/started" ] && break; sleep 0.05; done
	"$@" timeout 60 "$TMP/rb_check" "$pid" 250 8000 >"$d/samples" 2>"$d/err"
	wait "$pid" || { fail "$name" "ruby: $(head -3 "$d/ruby.out")"; return; }
	grep -q '^E ' "$d/samples" && { fail "$name" "$(grep '^E ' "$d/samples" | head -3)"; return; }
	python3 "$ROOT/tests/ruby/chain_check.py" "$d/oracle" "$d/samples" "$pid" "$name" |
		grep -E '^(PASS|FAIL):' || fail "$name" "chain_check printed no verdict"
}

chain ruby_walk_chain_root
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && command -v unshare >/dev/null; then
	chmod 711 "$TMP"
	chain ruby_walk_chain_nobody "$ROOT/scripts/as-nobody.sh" "$TMP"
else
	skip ruby_walk_chain_nobody "needs root to drop to nobody, setpriv and unshare"
fi
