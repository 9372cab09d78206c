# tally record keeps the perf maps of the command's children too: node run by a shell that
# tally records (node's pid is not the command's), its map kept in DATA.jit/ and naming
# its JS functions; a second recording to the same output removes the first one's maps.
. tests/lib.sh

KEPT=
cleanup() {
	local f
	for f in $KEPT; do rm -f "/tmp/$f"; done
	rm -rf "$TMP"
}
trap cleanup EXIT

if [ ! -x /usr/bin/node ]; then
	skip record_children_maps "no /usr/bin/node"
	exit 0
fi
cat >"$TMP/app.js" <<'JS'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
let t = Date.now(), a = 0;
while (Date.now() - t < 700) a += fib(25);
console.log(a > 0 ? "ok" : "no");
JS
# (V8's log, which --perf-basic-prof turns on, kept in $TMP rather than the current directory)
"$TALLY" record -q -o "$TMP/sh.data" -- sh -c '/usr/bin/node --perf-basic-prof \
	--logfile="$0.log" --no-logfile-per-isolate "$0"; echo "$$" >"$0.sh"' \
	"$TMP/app.js" >/dev/null 2>"$TMP/rec.err"
rc=$?
KEPT=$(ls "$TMP/sh.data.jit" 2>/dev/null)
sh_pid=$(cat "$TMP/app.js.sh" 2>/dev/null)
if [ $rc = 0 ] && [ "$(wc -w <<<"$KEPT")" = 1 ] && [ "$KEPT" != "perf-$sh_pid.map" ] &&
	"$TALLY" export -f folded --kinds "$TMP/sh.data" 2>&1 | grep -q 'JS:\*fib [^;]*_\[j\]'; then
	pass record_keeps_the_childs_map
else
	fail record_keeps_the_childs_map "exit $rc, kept '$KEPT', sh $sh_pid: $(tail -2 "$TMP/rec.err")"
fi
# a recording of a program with no map to the same output leaves none of the old ones
"$TALLY" record -q -o "$TMP/sh.data" -- true >/dev/null 2>&1
[ ! -e "$TMP/sh.data.jit" ] && pass record_again_removes_old_maps ||
	fail record_again_removes_old_maps "$(ls "$TMP/sh.data.jit" 2>&1)"
