# Sourced by tests/ruby/*.test.sh after tests/lib.sh: builds the test driver
# tests/ruby/src/rb_check.c against BUILD's modules.a as $TMP/rb_check (sanitized for
# build-asan), failing the named test with the compiler's words when it does not build.
RUBY=/usr/bin/ruby3.1
rb_check_build() {
	local libs
	libs=$(sed -n 's/^LIBS := //p' "$ROOT/Makefile")
	# shellcheck disable=SC2086
	cc -std=gnu11 -I"$ROOT/src" -I"$ROOT/include" -o "$TMP/rb_check" \
		"$ROOT/tests/ruby/src/rb_check.c" "$ROOT/$BUILD/modules.a" $libs \
		$([ "$BUILD" = build-asan ] && echo -fsanitize=address,undefined) 2>"$TMP/cc.err" ||
		{ fail "$1" "rb_check does not build: $(head -3 "$TMP/cc.err")"; exit 0; }
}

# rb_sampled NAME SCRIPT ROUNDS AS... -- ARGS...: SCRIPT (tests/ruby/rb/) run by $RUBY as
# AS (nothing: root) with ARGS (the first two: files in DIR, the second its start
# signal), rb_check (as AS too) stopping its threads ROUNDS times 5 ms apart from the
# start on; in $TMP/NAME: samples, ruby.out. Fails NAME (returning 1) when ruby fails or
# the driver cannot read it.
rb_sampled() {
	local name=$1 script=$2 rounds=$3 d=$TMP/$1 pid i as=()
	shift 3
	while [ "$1" != -- ]; do as+=("$1"); shift; done
	shift
	mkdir -p "$d"
	chmod 777 "$d"
	cp "$ROOT/tests/ruby/rb/$script" "$d/$script"
	"${as[@]}" "$RUBY" "$d/$script" "$d/$1" "$d/$2" "${@:3}" >"$d/ruby.out" 2>&1 &
	pid=$!
	for i in $(seq 100); do [ -s "$d/$2" ] && break; sleep 0.05; done
	"${as[@]}" timeout 60 "$TMP/rb_check" "$pid" "$rounds" 5000 >"$d/samples" 2>"$d/err"
	wait "$pid" || { fail "$name" "ruby: $(head -3 "$d/ruby.out")"; return 1; }
	if grep -q '^E ' "$d/samples"; then
		fail "$name" "$(grep '^E ' "$d/samples" | head -3)"
		return 1
	fi
	echo "$pid" >"$d/pid"
}
