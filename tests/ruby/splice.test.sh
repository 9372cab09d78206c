# Replay's splice of Ruby frames into native stacks (replay/sources/ruby/), on native
# stacks unwound by gdb (an unwinder nobody here wrote) of the chain workload stopped six
# times, three in each phase: tests/ruby/src/rb_splice.c reads the Ruby frames with tally's
# reader while gdb holds the process, then names gdb's stack with tally's namer (the Ruby
# source, then the ELF source), as replay names a recording's sample; splice_check.py
# compares the Ruby frames with Ruby's caller_locations and checks what native frames stay
# between and above them.
. tests/lib.sh

RUBY=/usr/bin/ruby3.1
[ -x "$RUBY" ] || { skip ruby_splice "needs $RUBY (scripts/install-deps.sh test)"; exit 0; }
command -v gdb >/dev/null || { skip ruby_splice "needs gdb"; exit 0; }
libs=$(sed -n 's/^LIBS := //p' "$ROOT/Makefile")
# shellcheck disable=SC2086
cc -std=gnu11 -I"$ROOT/src" -I"$ROOT/include" -o "$TMP/rb_splice" "$ROOT/tests/ruby/src/rb_splice.c" \
	"$ROOT/$BUILD/modules.a" $libs $([ "$BUILD" = build-asan ] && echo -fsanitize=address,undefined) \
	2>"$TMP/cc.err" || { fail ruby_splice "rb_splice does not build: $(head -3 "$TMP/cc.err")"; exit 0; }

cp "$ROOT/tests/ruby/rb/chain.rb" "$TMP/chain.rb"
"$RUBY" "$TMP/chain.rb" "$TMP/oracle" "$TMP/started" 4 >"$TMP/ruby.out" 2>&1 &
pid=$!
for i in $(seq 100); do [ -s "$TMP/started" ] && break; sleep 0.05; done
outs=()
for at in 1 2 3 5 6 7; do
	while [ "$(awk -v s="$(stat -c %Y "$TMP/started")" 'BEGIN { print systime() - s }')" -lt "$at" ]; do
		sleep 0.1
	done
	RB_SPLICE=$TMP/rb_splice RB_OUT=$TMP/spliced.$at timeout 60 gdb -batch -nx -p "$pid" \
		-x "$ROOT/tests/ruby/splice.gdb.py" >"$TMP/gdb.$at" 2>&1
	outs+=("$TMP/spliced.$at")
done
wait "$pid" || { fail ruby_splice "ruby: $(head -3 "$TMP/ruby.out")"; exit 0; }
python3 "$ROOT/tests/ruby/splice_check.py" "$TMP/oracle" ruby_splice "${outs[@]}" |
	grep -E '^(PASS|FAIL):' || fail ruby_splice "splice_check printed no verdict"
