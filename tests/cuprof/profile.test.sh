# The sBPF profiler: C programs compiled at test time with upstream clang, run in tally's
# VM with profiling. Oracles: llvm-dwarfdump/llvm-symbolizer for the inline chain, the
# runtime's syscall price (100 CU per sol_log_64_) and its log lines, the run's own CU
# count (the invariant), `go tool pprof -top`, llvm-objdump and readelf for `sbpf size`.
. tests/lib.sh

SRC="$ROOT/tests/cuprof/profile_progs"
OUT="$CORPUS/sbpf_profile"
mkdir -p "$OUT"
if ! command -v clang >/dev/null; then
	skip sbpf_profile "clang not installed"
	exit 0
fi
build() { # SOURCE OBJECT [FLAGS]
	if [ ! -f "$2" ] || [ "$1" -nt "$2" ]; then
		clang -target bpf -mcpu=v3 -O2 -g ${3:-} -c "$1" -o "$2.tmp" && mv "$2.tmp" "$2" ||
			{ fail sbpf_profile_build "clang -target bpf failed on $1"; exit 0; }
	fi
}
build "$SRC/inline.c" "$OUT/inline.o"
build "$SRC/inline.c" "$OUT/inline_extra.o" -DEXTRA
build "$SRC/recurse.c" "$OUT/recurse.o"

folded_sum() { awk '{ s += $NF } END { print s + 0 }' "$1"; }
cu_of() { sed -n 's/.*"compute_units": \([0-9]*\).*/\1/p' <<<"$1"; }

# The seed's chain: the call to multiply made at a pc inside square's inlined range is
# entrypoint -> square -> multiply; the other call is entrypoint -> multiply.
printf '\005' >"$TMP/in5"
json=$("$TALLY" sbpf run "$OUT/inline.o" --input "$TMP/in5" --json --folded "$TMP/inline.folded")
cu=$(cu_of "$json")
call_addr=$(llvm-objdump -d "$OUT/inline.o" | awk '/call/ { sub(":", "", $1); print $1 * 8; exit }')
chain=$(llvm-symbolizer --obj="$OUT/inline.o" --inlines "$call_addr" | sed -n '1p;3p' | tr '\n' ' ')
[ "$chain" = "square entrypoint " ] && grep -qx 'entrypoint;square;multiply 4' "$TMP/inline.folded" &&
	grep -qx 'entrypoint;multiply 4' "$TMP/inline.folded" && grep -qx 'entrypoint;square 4' "$TMP/inline.folded" &&
	[ "$(folded_sum "$TMP/inline.folded")" = "$cu" ] && pass sbpf_profile_inline_chain ||
	fail sbpf_profile_inline_chain "llvm-symbolizer: $chain; $(tr '\n' ' ' <"$TMP/inline.folded") (CU $cu)"

# Recursion, a syscall in a loop, a spin loop: for each input the profile's total equals
# the CU consumed, fib(n) nests n deep, and the syscall leaf holds exactly 100 CU per
# logged line (the instructions before each syscall stay with log_loop).
i=0
for bytes in '\000\000\000\000' '\006\003\002\000' '\011\007\001\000' '\001\000\012\000'; do
	i=$((i + 1))
	printf "$bytes" >"$TMP/r$i"
	json=$("$TALLY" sbpf run "$OUT/recurse.o" --input "$TMP/r$i" --json --folded "$TMP/r$i.folded")
	cu=$(cu_of "$json")
	n=$(od -An -tu1 -N1 "$TMP/r$i" | tr -d ' ')
	logs=$(grep -o 'Program log: ' <<<"$json" | wc -l)
	depth=$(awk '{ n = gsub(/fib/, "fib", $1); if (n > m) m = n } END { print m + 0 }' "$TMP/r$i.folded")
	want_depth=$((n > 0 ? n : 1))
	sys=$(awk '$1 ~ /syscall:sol_log_64_$/ { s += $2 } END { print s + 0 }' "$TMP/r$i.folded")
	[ "$(folded_sum "$TMP/r$i.folded")" = "$cu" ] && [ "$depth" = "$want_depth" ] &&
		[ "$sys" = $((100 * logs)) ] && ! grep -q 'syscall:[^ ]*;' "$TMP/r$i.folded" &&
		pass "sbpf_profile_recursion_syscalls_$i" ||
		fail "sbpf_profile_recursion_syscalls_$i" "CU $cu depth $depth/$want_depth syscall $sys/$logs logs: $(tr '\n' ' ' <"$TMP/r$i.folded")"
done

# CU exhaustion: the profile still holds every CU consumed, the last in spin.
printf '\004\002\377\000' >"$TMP/spin"
json=$("$TALLY" sbpf run "$OUT/recurse.o" --input "$TMP/spin" --budget 5000 --json --folded "$TMP/spin.folded")
[[ "$json" == *'"result": "ExceededMaxInstructions"'* ]] && [ "$(cu_of "$json")" = 5000 ] &&
	[ "$(folded_sum "$TMP/spin.folded")" = 5000 ] && grep -q '^entrypoint;spin [0-9]' "$TMP/spin.folded" &&
	pass sbpf_profile_cu_exhausted || fail sbpf_profile_cu_exhausted "$json $(tr '\n' ' ' <"$TMP/spin.folded")"

# Runs that end inside the call tree: the 64th nested call (CallDepthExceeded: 63 frames
# of fail_at below entrypoint, the reference's limit), abort and an access violation five
# calls down. The profile keeps every CU, the failing instruction's included.
for how in 1 2 3; do
	printf "\\004\\002\\001\\00$how" >"$TMP/fail$how"
	json=$("$TALLY" sbpf run "$OUT/recurse.o" --input "$TMP/fail$how" --json --folded "$TMP/fail$how.folded")
	depth=$(awk '{ n = gsub(/fail_at/, "&", $1); if (n > m) m = n } END { print m + 0 }' "$TMP/fail$how.folded")
	case $how in
	1) want='"result": "CallDepthExceeded"' want_depth=63 ;;
	2) want='"result": "Abort"' want_depth=5 ;;
	3) want='"result": "AccessViolation"' want_depth=5 ;;
	esac
	[[ "$json" == *"$want"* ]] && [ "$depth" = $want_depth ] &&
		[ "$(folded_sum "$TMP/fail$how.folded")" = "$(cu_of "$json")" ] &&
		pass "sbpf_profile_fails_inside_$how" || fail "sbpf_profile_fails_inside_$how" "depth $depth: $json"
done

# Every budget from 1 CU up to past the end of the run stops at some boundary (an
# instruction, a call, a return, before, inside or after a syscall): the profile always
# holds exactly the CU consumed (tally itself fails with an internal error otherwise).
printf '\003\002\000\000' >"$TMP/sweep"
bad=""
for budget in $(seq 1 3 560); do
	json=$("$TALLY" sbpf run "$OUT/recurse.o" --input "$TMP/sweep" --budget $budget --json --folded "$TMP/sweep.folded" 2>&1)
	[ "$(folded_sum "$TMP/sweep.folded")" = "$(cu_of "$json")" ] || bad="$bad $budget"
done
[ -z "$bad" ] && pass sbpf_profile_invariant_every_budget || fail sbpf_profile_invariant_every_budget "budgets:$bad"

# Every output at once, twice: byte-identical files.
for run in 1 2; do
	"$TALLY" sbpf run "$OUT/recurse.o" --input "$TMP/r2" -o "$TMP/p$run.pb.gz" --flamegraph "$TMP/p$run.svg" \
		--folded "$TMP/p$run.folded" --annotate "$TMP/p$run.html" >/dev/null || fail sbpf_profile_outputs "run $run failed"
done
same=1
for ext in pb.gz svg folded html; do
	[ -s "$TMP/p1.$ext" ] && cmp -s "$TMP/p1.$ext" "$TMP/p2.$ext" || same=0
done
[ $same = 1 ] && pass sbpf_profile_deterministic || fail sbpf_profile_deterministic "outputs differ between runs"

# go tool pprof agrees on the total.
cu=$(cu_of "$("$TALLY" sbpf run "$OUT/recurse.o" --input "$TMP/r2" --json)")
if command -v go >/dev/null; then
	top=$(go tool pprof -top "$TMP/p1.pb.gz" 2>&1)
	[[ "$top" == *"accounting for $cu, 100% of $cu total"* ]] && [[ "$top" == *"syscall:sol_log_64_"* ]] &&
		pass sbpf_profile_pprof_total || fail sbpf_profile_pprof_total "CU $cu: $(head -5 <<<"$top" | tr '\n' ' ')"
else
	skip sbpf_profile_pprof_total "go not installed"
fi

# The annotation shows the hottest function (spin) with its sBPF disassembly, the same
# text `tally sbpf disasm` prints (itself checked against llvm-objdump).
want=$("$TALLY" sbpf disasm "$OUT/recurse.o" | awk '/^spin:/ { on = 1; next } /^[a-z_]+:$/ { on = 0 } on' |
	sed -E 's/^ *[0-9]+: +//' | grep -v -E '^(j|call)' | head -3)
html=$(sed 's/<[^>]*>/ /g' "$TMP/p1.html")
ok=1
while IFS= read -r insn; do
	grep -qF "$insn" <<<"$html" || ok=0
done <<<"$want"
[ -n "$want" ] && [ $ok = 1 ] && [[ "$html" != *"no sBPF disassembler"* ]] && pass sbpf_profile_annotate_disasm ||
	fail sbpf_profile_annotate_disasm "missing: $want"

# One more instruction in entrypoint: exactly +1 CU there in `tally diff` (same path, as
# after a rebuild).
cp "$OUT/inline.o" "$TMP/prog.o"
"$TALLY" sbpf run "$TMP/prog.o" --input "$TMP/in5" -o "$TMP/before.pb.gz" >/dev/null
cp "$OUT/inline_extra.o" "$TMP/prog.o"
"$TALLY" sbpf run "$TMP/prog.o" --input "$TMP/in5" -o "$TMP/after.pb.gz" >/dev/null
d=$("$TALLY" diff "$TMP/before.pb.gz" "$TMP/after.pb.gz")
rows=$(grep -E '^ +[0-9]+ ' <<<"$d")
[[ "$d" == *"(+1, "* ]] && [ "$(wc -l <<<"$rows")" = 1 ] && [[ "$rows" == *" +1 "*"entrypoint [vm]"* ]] &&
	pass sbpf_profile_diff_one_insn || fail sbpf_profile_diff_one_insn "$d"

# size: instructions per function, against llvm-objdump's listing and readelf's symbols.
want=$(python3 - "$OUT/recurse.o" <<'PY'
import re, subprocess, sys
obj = sys.argv[1]
funcs = []
for l in subprocess.run(["readelf", "-sW", obj], capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if len(f) == 8 and f[3] == "FUNC":
        funcs.append((int(f[1], 16), f[7]))
funcs.sort()
count = {}
for l in subprocess.run(["llvm-objdump", "-d", obj], capture_output=True, text=True).stdout.splitlines():
    m = re.match(r"^\s+([0-9]+):", l)
    if m:
        addr = int(m.group(1)) * 8  # slots, in decimal
        name = [n for a, n in funcs if a <= addr][-1]
        count[name] = count.get(name, 0) + 1
for n in sorted(count):
    print(n, count[n])
PY
)
got=$("$TALLY" sbpf size "$OUT/recurse.o" --folded - | sort)
[ -n "$want" ] && [ "$got" = "$want" ] && pass sbpf_size_per_function ||
	fail sbpf_size_per_function "$(diff <(echo "$want") <(echo "$got") | tr '\n' ' ')"
got=$("$TALLY" sbpf size "$OUT/inline.o" --folded -)
[[ "$got" == *"entrypoint;square 4"* ]] && pass sbpf_size_inline || fail sbpf_size_inline "$got"
"$TALLY" sbpf size "$OUT/recurse.o" --flamegraph "$TMP/size.svg" && grep -q '<svg' "$TMP/size.svg" &&
	[[ "$("$TALLY" sbpf size "$OUT/recurse.o")" == *"total:    $(awk '{ s += $2 } END { print s }' <<<"$want") instructions"* ]] &&
	pass sbpf_size_outputs || fail sbpf_size_outputs "no SVG or report"

# A deployed program without DWARF: .symtab names, total equal to the CU consumed; the
# annotation takes the hottest function with a name (the hottest unnamed one has no
# symbol to find its code by).
DIR="${SBPF_CORPUS:-$SHARED/corpus/sbpf}/programs"
if [ -f "$DIR/hello_world.so" ]; then
	{ head -c 8 /dev/zero; printf '\000\000\000\000\000\000\000\000'; head -c 32 /dev/zero; } >"$TMP/empty"
	json=$("$TALLY" sbpf run "$DIR/hello_world.so" --input "$TMP/empty" --json --folded "$TMP/hello.folded")
	"$TALLY" sbpf run "$DIR/hello_world.so" --input "$TMP/empty" --annotate "$TMP/hello.html" >/dev/null &&
	grep -q '<h1>entrypoint</h1>' "$TMP/hello.html" &&
	[ "$(folded_sum "$TMP/hello.folded")" = "$(cu_of "$json")" ] && grep -q '^entrypoint' "$TMP/hello.folded" &&
		grep -q ';syscall:sol_log_ ' "$TMP/hello.folded" && pass sbpf_profile_symtab ||
		fail sbpf_profile_symtab "$json $(tr '\n' ' ' <"$TMP/hello.folded")"
else
	skip sbpf_profile_symtab "no corpus"
fi

# --no-profile runs without hooks and refuses outputs it could not write.
out=$("$TALLY" sbpf run "$OUT/inline.o" --input "$TMP/in5" --no-profile --json)
"$TALLY" sbpf run "$OUT/inline.o" --no-profile --folded "$TMP/x.folded" 2>/dev/null; rc=$?
[[ "$out" == *'"compute_units": 18,'* ]] && [ $rc = 2 ] && [ ! -e "$TMP/x.folded" ] &&
	pass sbpf_profile_off || fail sbpf_profile_off "rc $rc: $out"
