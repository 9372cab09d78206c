# Sourced by tests/cpython/*.test.sh after tests/lib.sh: builds the test driver
# tests/cpython/src/cpy_check.c against BUILD's libtally as $TMP/cpy_check (sanitized for
# build-asan), failing the named test with the compiler's words when it does not build.
PY311=/usr/bin/python3.11
cpy_check_build() {
	local libs
	libs=$(sed -n 's/^LIBS := //p' "$ROOT/Makefile")
	# shellcheck disable=SC2086
	cc -std=gnu11 -I"$ROOT/src" -I"$ROOT/include" -o "$TMP/cpy_check" \
		"$ROOT/tests/cpython/src/cpy_check.c" "$ROOT/$BUILD/libtally.a" $libs \
		$([ "$BUILD" = build-asan ] && echo -fsanitize=address,undefined) 2>"$TMP/cc.err" ||
		{ fail "$1" "cpy_check does not build: $(head -3 "$TMP/cc.err")"; exit 0; }
}
