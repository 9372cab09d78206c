# Perf maps that are cut short, hold garbage or lie (ranges past 2^64, overlaps, lines of
# 100 KB), put in place of the map node wrote for a recording: every command still works,
# a warning names the file and line, and every JIT frame is named by a whole, valid line
# of the map (the oracle: the map's own lines, as perf's reader takes them).
. tests/lib.sh

PID_OF_NODE=
cleanup() {
	[ -n "$PID_OF_NODE" ] && rm -f "/tmp/perf-$PID_OF_NODE.map"
	rm -rf "$TMP"
}
trap cleanup EXIT

if [ ! -x /usr/bin/node ]; then
	skip hostile_maps "no /usr/bin/node"
	exit 0
fi
cat >"$TMP/app.js" <<'JS'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
let t = Date.now(), a = 0;
while (Date.now() - t < 1000) a += fib(25);
console.log(a > 0 ? "ok" : "no");
JS
"$TALLY" record -q -o "$TMP/node.data" -- sh -c 'echo $$ >"$0"; exec "$@"' "$TMP/pid" \
	/usr/bin/node --perf-basic-prof "$TMP/app.js" >/dev/null 2>"$TMP/rec.err"
rc=$?
PID_OF_NODE=$(cat "$TMP/pid" 2>/dev/null)
if [ $rc != 0 ] || [ ! -s "$TMP/node.data.jit/perf-$PID_OF_NODE.map" ]; then
	fail hostile_maps_recording "exit $rc: $(tail -3 "$TMP/rec.err")"
	exit 0
fi
rm -f "/tmp/perf-$PID_OF_NODE.map"
MAP="$TMP/node.data.jit/perf-$PID_OF_NODE.map"
cp "$MAP" "$TMP/good.map"
size=$(stat -c %s "$TMP/good.map")
# the hottest function's line, to lie about
hot=$(grep -m1 'JS:\*fib ' "$TMP/good.map" | cut -d' ' -f1)

# variant NAME: the map as NAME has it, into $MAP.
variant() {
	case $1 in
	truncated) head -c $((size / 2 + 7)) "$TMP/good.map" ;;
	garbage)
		awk 'NR % 3 == 0 { print "zz qq not hex"; printf "%s 10\n", $1; print "0x 0x name" }
		     { print } NR == 5 { printf "123 \0 nul\n" }' "$TMP/good.map" ;;
	lying)
		cat "$TMP/good.map"
		echo "ffffffffffff0000 ffffffffffffff WRAPS"
		echo "11112222333344445555 10 TOO_LONG_A_NUMBER"
		echo "$hot 0 SIZE_ZERO"
		printf '%s 10 ' "$hot"; head -c 100000 /dev/zero | tr '\0' x; echo
		echo "$hot 8 OVERLAPS_THE_HOT_START" ;;
	empty) : ;;
	esac >"$MAP"
}

# names MAP: the names of MAP's whole, valid lines (perf's format: START SIZE NAME).
names() {
	awk 'length($0) <= 65536 &&
	     match($0, /^(0x)?[0-9a-fA-F]+[ \t]+(0x)?[0-9a-fA-F]*[1-9a-fA-F][0-9a-fA-F]*[ \t]+/) {
		n = split($1, d, ""); m = split($2, e, "")
		if (n - ($1 ~ /^0x/) * 2 <= 16 && m - ($2 ~ /^0x/) * 2 <= 16)
			print substr($0, RLENGTH + 1) }' "$1"
}

for v in truncated garbage lying empty; do
	variant $v
	# a last line without its newline was cut short: no line
	if [ -s "$MAP" ] && [ -n "$(tail -c1 "$MAP")" ]; then head -n -1 "$MAP"; else cat "$MAP"; fi \
		>"$TMP/whole"
	names "$TMP/whole" | sort -u >"$TMP/valid"
	ok=true why=
	for cmd in "report" "export -f folded --kinds" "export -f pprof -o $TMP/o.pb.gz" \
		"export -f speedscope -o $TMP/o.json" "flamegraph -o $TMP/o.svg"; do
		# shellcheck disable=SC2086
		"$TALLY" $cmd "$TMP/node.data" >"$TMP/out" 2>"$TMP/err"
		rc=$?
		if [ $rc != 0 ] || grep -q 'Sanitizer\|runtime error' "$TMP/err"; then
			ok=false why="$cmd: exit $rc: $(head -c 300 "$TMP/err")"
			break
		fi
	done
	"$TALLY" export -f folded --kinds "$TMP/node.data" 2>"$TMP/err" |
		tr ';' '\n' | sed -n 's/_\[j\]\( [0-9]*\)\{0,1\}$//p' | sort -u >"$TMP/used"
	wrong=$(comm -23 "$TMP/used" "$TMP/valid" | head -3)
	$ok && [ -n "$wrong" ] && ok=false why="names from no valid line: $wrong"
	# the good lines are all still there: the hot function keeps its name
	$ok && [ $v != empty ] && [ $v != truncated ] && ! grep -q '^JS:\*fib ' "$TMP/used" &&
		ok=false why="the good lines name nothing"
	case $v in
	empty) want= ;;
	*) want="^tally: $MAP: line [0-9]*: " ;;
	esac
	$ok && [ -n "$want" ] && ! grep -q "$want" "$TMP/err" && ok=false why="no warning: $(head -3 "$TMP/err")"
	$ok && [ $v = lying ] && ! grep -q 'OVERLAPS_THE_HOT_START' "$TMP/used" &&
		ok=false why="the later, overlapping line does not win"
	$ok && [ $v = lying ] && grep -q 'xxxxxxxxxx' "$TMP/used" && ok=false why="a 100 KB line was taken"
	$ok && pass "hostile_map_$v" || fail "hostile_map_$v" "$why"
done
