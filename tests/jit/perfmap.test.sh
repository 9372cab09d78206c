# JIT frames named by perf maps, against the runtimes themselves: Node 20 with
# --perf-basic-prof recorded by tally record and by perf record (DWARF and frame-pointer
# call graphs), OpenJDK 17 with -XX:+DumpPerfMapAtExit. The oracle is perf report on the
# same file: the hot JS or Java functions have the names it gives, their shares agree with
# its shares within 10 points, and no more samples are left in unnamed JIT code than it
# leaves. tally record keeps the maps, its command's children's too. The runtimes write /tmp/perf-PID.map themselves: the test removes those of its
# own processes, and only those.
. tests/lib.sh

remove_maps_on_exit

# run_noting CMD...: runs CMD (a recorder and its command, after which comes the runtime,
# started through sh so that its pid is known before it writes its map) and notes the
# runtime's map for removal.
run_noting() {
	local rc
	"$@"
	rc=$?
	[ -s "$TMP/pid" ] && MAPS+=("$(cat "$TMP/pid")")
	return $rc
}
# The runtime started by run_noting: its pid into $TMP/pid, then exec.
AS_PID=(sh -c 'echo $$ >"$0"; exec "$@"' "$TMP/pid")

# leaf_counts: "COUNT LEAF" per leaf function of folded stacks on stdin.
leaf_counts() {
	awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";"); c[f[k]] += n; t += n }
	     END { for (l in c) print c[l] "\t" l; print t "\t[total]" }'
}
# tally_leaves FILE: leaf counts of tally's profile of FILE.
tally_leaves() { "$TALLY" export -f folded "$1" 2>"$TMP/tally.err" | leaf_counts; }
# perf_leaves FILE: the same from perf report (self samples by dso and symbol; a symbol
# perf could not name is given as its dso's kind: "[unnamed JIT]" in JIT code).
perf_leaves() {
	perf report -i "$1" -n --stdio --no-children --sort dso,sym -g none 2>/dev/null |
		awk -F'  +' '/^ +[0-9.]+%/ {
			n = $3; sub(/^\[[.k]\] /, "", $5); name = $5
			if ((name ~ /^0x[0-9a-f]+$/ || name == "[unknown]") &&
			    ($4 ~ /^\[JIT\]|^\/\/anon|perf-[0-9]+\.map/))
				name = "[unnamed JIT]"
			c[name] += n; t += n }
		     END { for (l in c) print c[l] "\t" l; print t "\t[total]" }'
}
# sum LEAVES REGEX: samples of the leaves whose name matches REGEX.
sum() { awk -F'\t' -v re="$2" '$2 ~ re && $2 != "[total]" { s += $1 } END { print s + 0 }' "$1"; }
# Unnamed JIT code as tally shows it: a frame in anonymous memory by its address.
TALLY_UNNAMED='^(anon\+0x[0-9a-f]+|0x[0-9a-f]+)$'

# compare NAME FILE A_RE B_RE: shares of A among A+B by tally and by perf within 10 points;
# unnamed JIT samples no more than perf's (plus 1 point of sampling noise).
compare() {
	local name=$1 file=$2 are=$3 bre=$4
	tally_leaves "$file" >"$TMP/t.leaves"
	perf_leaves "$file" >"$TMP/p.leaves"
	local ta tb pa pb tu pu tt pt
	ta=$(sum "$TMP/t.leaves" "$are") tb=$(sum "$TMP/t.leaves" "$bre")
	pa=$(sum "$TMP/p.leaves" "$are") pb=$(sum "$TMP/p.leaves" "$bre")
	tu=$(sum "$TMP/t.leaves" "$TALLY_UNNAMED") pu=$(sum "$TMP/p.leaves" '^\[unnamed JIT\]$')
	tt=$(sum "$TMP/t.leaves" '^\[total\]$') pt=$(sum "$TMP/p.leaves" '^\[total\]$')
	tt=$(awk -F'\t' '$2 == "[total]" { print $1 }' "$TMP/t.leaves")
	pt=$(awk -F'\t' '$2 == "[total]" { print $1 }' "$TMP/p.leaves")
	local why
	why=$(awk -v ta="$ta" -v tb="$tb" -v pa="$pa" -v pb="$pb" -v tu="$tu" -v pu="$pu" \
		-v tt="$tt" -v pt="$pt" 'BEGIN {
		if (ta + tb < 100 || pa + pb < 100) { print "too few samples in the hot functions"; exit }
		ts = 100 * ta / (ta + tb); ps = 100 * pa / (pa + pb)
		tus = 100 * tu / tt; pus = 100 * pu / pt
		printf "%s: tally %.1f%% / perf %.1f%% of the hot pair; unnamed JIT tally %.2f%% / perf %.2f%%\n",
			"'"$name"'", ts, ps, tus, pus > "/dev/stderr"
		if (ts - ps > 10 || ps - ts > 10) printf "shares differ: tally %.1f%%, perf %.1f%%", ts, ps
		else if (tus > pus + 1) printf "unnamed JIT: tally %.2f%%, perf %.2f%%", tus, pus }')
	if [ -z "$why" ]; then pass "$name"; else fail "$name" "$why"; fi
}

# ---- Node 20, --perf-basic-prof ----
# --perf-basic-prof also writes V8's log, in the current directory unless told where.
NODE=(/usr/bin/node --perf-basic-prof --logfile="$TMP/v8.log" --no-logfile-per-isolate)
cat >"$TMP/app.js" <<'JS'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function sumsq(n) { let s = 0; for (let i = 0; i < n; i++) s += (i * i) % 7; return s; }
let t = Date.now(), a = 0;
while (Date.now() - t < 2000) { a += fib(30); a += sumsq(1500000); }
console.log(a > 0 ? "ok" : "no");
JS
FIB='^JS:[*^~+]?fib ' SUMSQ='^JS:[*^~+]?sumsq '
if [ ! -x /usr/bin/node ]; then
	skip node_perf_map "no /usr/bin/node"
else
	rm -f "$TMP/pid"
	if run_noting "$TALLY" record -q -o "$TMP/node.data" -- "${AS_PID[@]}" \
		"${NODE[@]}" "$TMP/app.js" >/dev/null 2>"$TMP/rec.err"; then
		compare node_tally_record_shares_agree_with_perf "$TMP/node.data" "$FIB" "$SUMSQ"
		pid=$(cat "$TMP/pid")
		[ -s "$TMP/node.data.jit/perf-$pid.map" ] &&
			cmp -s "$TMP/node.data.jit/perf-$pid.map" "/tmp/perf-$pid.map" &&
			pass node_record_keeps_a_copy_of_the_map ||
			fail node_record_keeps_a_copy_of_the_map "$(ls "$TMP/node.data.jit" 2>&1)"
		# The copy is what names the frames: /tmp's map gone, or another process's.
		cp "$TMP/node.data" "$TMP/moved.data"
		mkdir "$TMP/moved.data.jit"
		cp "/tmp/perf-$pid.map" "$TMP/moved.data.jit/"
		mv "/tmp/perf-$pid.map" "$TMP/saved.map"
		printf '0 ffffffffffffff00 WRONG\n' >"/tmp/perf-$pid.map"
		"$TALLY" export -f folded "$TMP/node.data" >"$TMP/copy.folded" 2>&1
		if grep -q 'JS:\*fib ' "$TMP/copy.folded" && ! grep -q WRONG "$TMP/copy.folded"; then
			pass node_report_reads_the_recordings_copy
		else
			fail node_report_reads_the_recordings_copy "$(head -c 300 "$TMP/copy.folded")"
		fi
		mv "$TMP/saved.map" "/tmp/perf-$pid.map"
		# Every output shows the kind.
		"$TALLY" report "$TMP/node.data" >"$TMP/node.report" 2>&1
		"$TALLY" export -f folded --kinds "$TMP/node.data" >"$TMP/node.kfolded" 2>&1
		"$TALLY" flamegraph "$TMP/node.data" -o "$TMP/node.svg" >/dev/null 2>&1
		grep -q "JS:\*fib $TMP/app.js:1:13 \[jit\]  (perf-$pid.map)" "$TMP/node.report" &&
			grep -q "JS:\*fib $TMP/app.js:1:13_\[j\] " "$TMP/node.kfolded" &&
			grep -q '<g class="j"' "$TMP/node.svg" &&
			pass node_jit_frames_marked_in_report_folded_and_svg ||
			fail node_jit_frames_marked_in_report_folded_and_svg "$(grep -m2 fib "$TMP/node.report")"
	else
		fail node_tally_record "$(tail -3 "$TMP/rec.err")"
	fi
	for cg in dwarf fp; do
		rm -f "$TMP/pid"
		if run_noting perf record -q -N -F 999 --call-graph $cg -o "$TMP/node-$cg.data" -- \
			"${AS_PID[@]}" "${NODE[@]}" "$TMP/app.js" \
			>/dev/null 2>"$TMP/rec.err"; then
			compare node_perf_record_${cg}_shares_agree_with_perf "$TMP/node-$cg.data" \
				"$FIB" "$SUMSQ"
		else
			fail node_perf_record_$cg "$(tail -3 "$TMP/rec.err")"
		fi
	done
	# The command's children's maps are kept too: node under a shell that tally records
	# (node's pid is not the command's); a later recording to the same output removes them.
	"$TALLY" record -q -o "$TMP/sh.data" -- sh -c '"$@"; echo "$$" >"$0"' "$TMP/sh.pid" \
		"${NODE[@]}" "$TMP/app.js" >/dev/null 2>"$TMP/rec.err"
	rc=$?
	kept=$(ls "$TMP/sh.data.jit" 2>/dev/null)
	for f in $kept; do f=${f#perf-} MAPS+=("${f%.map}"); done
	if [ $rc = 0 ] && [ "$(wc -w <<<"$kept")" = 1 ] && [ "$kept" != "perf-$(cat "$TMP/sh.pid").map" ] &&
		"$TALLY" export -f folded --kinds "$TMP/sh.data" 2>&1 | grep -q 'JS:\*fib [^;]*_\[j\]'; then
		pass record_keeps_the_childs_map
	else
		fail record_keeps_the_childs_map "exit $rc, kept '$kept': $(tail -2 "$TMP/rec.err")"
	fi
	"$TALLY" record -q -o "$TMP/sh.data" -- true >/dev/null 2>&1
	[ ! -e "$TMP/sh.data.jit" ] && pass record_again_removes_old_maps ||
		fail record_again_removes_old_maps "$(ls "$TMP/sh.data.jit" 2>&1)"
fi

# ---- OpenJDK 17, -XX:+DumpPerfMapAtExit ----
cat >"$TMP/Hot.java" <<'JAVA'
public class Hot {
    static long spin(int n) { long s = 0; for (int i = 0; i < n; i++) s += (i * 31L) ^ (s >>> 3); return s; }
    static double mix(int n) { double d = 1; for (int i = 1; i < n; i++) d = d * 1.0000001 + Math.sqrt(i); return d; }
    public static void main(String[] a) {
        long end = System.nanoTime() + 2_000_000_000L, acc = 0;
        while (System.nanoTime() < end) { acc += spin(2_000_000); acc += (long) mix(1_000_000); }
        System.out.println(acc != 42 ? "ok" : "no");
    }
}
JAVA
if ! command -v javac >/dev/null || ! command -v java >/dev/null; then
	skip java_perf_map "no javac/java (Debian openjdk-17-jdk-headless)"
elif ! javac -d "$TMP" "$TMP/Hot.java" 2>"$TMP/javac.err"; then
	fail java_compile "$(head -3 "$TMP/javac.err")"
else
	rm -f "$TMP/pid"
	if run_noting "$TALLY" record -q -o "$TMP/java.data" -- "${AS_PID[@]}" java \
		-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -XX:+PreserveFramePointer \
		-cp "$TMP" Hot >/dev/null 2>"$TMP/rec.err"; then
		SPIN='^long Hot\.spin\(int\)$' MIX='^double Hot\.mix\(int\)$'
		compare java_shares_agree_with_perf "$TMP/java.data" "$SPIN" "$MIX"
		# The two hottest leaves are the methods, by the names perf gives them.
		top=$(sort -t$'\t' -k1,1nr "$TMP/t.leaves" | grep -v '\[total\]' | head -2 | cut -f2 | sort)
		ptop=$(sort -t$'\t' -k1,1nr "$TMP/p.leaves" | grep -v '\[total\]' | head -2 | cut -f2 | sort)
		[ "$top" = "$ptop" ] && grep -q 'Hot\.spin' <<<"$top" && grep -q 'Hot\.mix' <<<"$top" &&
			pass java_method_names_on_the_hot_frames ||
			fail java_method_names_on_the_hot_frames "tally: $top; perf: $ptop"
		# Stacks through the methods go on to the thread's start (frame pointers kept).
		"$TALLY" export -f folded "$TMP/java.data" 2>/dev/null |
			grep -E ';(long Hot\.spin|double Hot\.mix)\(int\) [0-9]+$' >"$TMP/hot.folded"
		"$TALLY" report "$TMP/java.data" >"$TMP/java.report" 2>&1
		grep '^unwind:' "$TMP/java.report" >"$TMP/quality"
		# The figures count JIT frames: at least one per sample perf finds in the methods.
		jit=$(sed -n 's/^ *unwind: JIT frames \([0-9]*\)$/\1/p' "$TMP/java.report")
		hot=$(( $(sum "$TMP/p.leaves" "$SPIN") + $(sum "$TMP/p.leaves" "$MIX") ))
		[ -n "$jit" ] && [ "$jit" -ge "$hot" ] && pass java_quality_figures_count_jit_frames ||
			fail java_quality_figures_count_jit_frames "JIT frames '${jit}', perf's samples in the methods $hot"
		awk '{ n = $NF; t += n; if ($0 ~ /^clone3;start_thread;/) c += n }
		     END { exit !(t >= 100 && c >= 0.98 * t) }' "$TMP/hot.folded" &&
			grep -qE ' (99(\.[0-9]+)?|100)% complete' "$TMP/quality" &&
			pass java_stacks_through_methods_complete ||
			fail java_stacks_through_methods_complete "$(cat "$TMP/quality"); $(head -c 200 "$TMP/hot.folded")"
	else
		fail java_tally_record "$(tail -3 "$TMP/rec.err")"
	fi
fi
