# replay through the library, on what tally record writes: a file cut short is refused
# with its name and the offset, never read past its end.
. tests/lib.sh

"$TALLY" record -q -o "$TMP/a.data" -- true || { fail record_for_replay; exit 0; }
head -c 300 "$TMP/a.data" > "$TMP/trunc.data"
cat > "$TMP/r.c" <<'C'
#include <stdio.h>
#include "replay/replay.h"
#include "base/err.h"
static int fn(const struct replay_stack *st, void *arg) { return 0; }
int main(int argc, char **argv) { if (replay_unwind(argv[1], UNW_AUTO, fn, 0, 0, 0)) { printf("%s\n", err_msg()); return 1; } return 0; }
C
libs=$(sed -n 's/^LIBS := //p' "$ROOT/Makefile")
# shellcheck disable=SC2086
if cc -I"$ROOT/src" -I"$ROOT/include" -o "$TMP/r" "$TMP/r.c" "$ROOT/$BUILD/modules.a" $libs $([ "$BUILD" = build-asan ] && echo -fsanitize=address,undefined) 2>"$TMP/cc.err"; then
	out=$("$TMP/r" "$TMP/trunc.data"); rc=$?
	[ $rc -eq 1 ] && [[ "$out" == "$TMP/trunc.data: at 0x"* ]] \
		&& pass replay_truncated_file_names_file_and_offset \
		|| fail replay_truncated_file_names_file_and_offset "$rc $out"
else
	fail replay_truncated_file_names_file_and_offset "$(head -3 "$TMP/cc.err")"
fi
