# Sourced by tests/cpython/*.test.sh after tests/lib.sh: builds the test driver
# tests/cpython/src/cpy_check.c against BUILD's modules.a as $TMP/cpy_check (sanitized for
# build-asan), failing the named test with the compiler's words when it does not build.
PY311=/usr/bin/python3.11
cpy_check_build() {
	local libs
	libs=$(sed -n 's/^LIBS := //p' "$ROOT/Makefile")
	# shellcheck disable=SC2086
	cc -std=gnu11 -I"$ROOT/src" -I"$ROOT/include" -o "$TMP/cpy_check" \
		"$ROOT/tests/cpython/src/cpy_check.c" "$ROOT/$BUILD/modules.a" $libs \
		$([ "$BUILD" = build-asan ] && echo -fsanitize=address,undefined) 2>"$TMP/cc.err" ||
		{ fail "$1" "cpy_check does not build: $(head -3 "$TMP/cc.err")"; exit 0; }
}

# python_writes TEST SCRIPT OUT: the driver built and $PY311 running tests/cpython/py/SCRIPT
# to write OUT; skips TEST without the interpreter, fails it when the script fails (and
# ends the test script in both cases).
python_writes() {
	if [ ! -x "$PY311" ]; then
		skip "$1" "needs $PY311"
		exit 0
	fi
	cpy_check_build "$1"
	"$PY311" "$ROOT/tests/cpython/py/$2" "$3" 2>"$TMP/py.err" ||
		{ fail "$1" "python: $(head -3 "$TMP/py.err")"; exit 0; }
}

# pyenv_lib V: pyenv's libpython V (3.12, 3.13), or nothing; its python is ../bin/pythonV.
pyenv_lib() {
	ls "${PYENV_ROOT:-/root/.pyenv}"/versions/$1.*/lib/libpython$1.so.1.0 2>/dev/null | head -1
}
