# Sourced by the tests of tests/lua after tests/lib.sh, with NAME set to the test group's
# name: the module built here (mod), or a skip (no lua5.4) or failure (no module) and exit;
# lua_tally ENV... CMD... runs CMD with the module on LUA_CPATH.
mod=$ROOT/$BUILD/lua/tally.so
if ! command -v lua5.4 >/dev/null; then
	skip "$NAME" "no lua5.4 (scripts/install-deps.sh test installs it)"
	exit 0
fi
if [ ! -f "$mod" ]; then
	fail "$NAME" "no $mod (make needs liblua5.4-dev)"
	exit 0
fi
# A sanitized module needs its runtime loaded first in an unsanitized lua5.4.
preload=
if [ "$BUILD" = build-asan ]; then
	preload="$(cc -print-file-name=libasan.so):$(cc -print-file-name=libubsan.so)"
	export ASAN_OPTIONS=detect_leaks=0
fi
lua_tally() {
	env LUA_CPATH="$(dirname "$mod")/?.so;;" LD_PRELOAD="$preload" "$@"
}
