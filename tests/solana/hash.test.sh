# sol_keccak256 and sol_sha256 through a BPF program built at test time (programs/hash.c).
# Oracles: published Keccak-256 vectors, then pycryptodome's Keccak (Debian's
# python3-pycryptodome) and sha256sum on data up to several sponge blocks long, split into
# two slices. Cost: agave's SyscallHash, the same for both hashes: 85, then per slice
# max(10, len / 2); the profile's syscall frame carries exactly that, and the rest of the
# run costs the same whatever the data.
. tests/lib.sh

SRC="$ROOT/tests/sbpf/programs/hash.c"
OUT="$CORPUS/sbpf"
mkdir -p "$OUT"
if ! command -v clang >/dev/null; then
	skip sbpf_hash "clang not installed"
	exit 0
fi
if [ ! -f "$OUT/hash.o" ] || [ "$SRC" -nt "$OUT/hash.o" ]; then
	clang -target bpf -mcpu=v3 -O2 -g -c "$SRC" -o "$OUT/hash.o.tmp" && mv "$OUT/hash.o.tmp" "$OUT/hash.o" ||
		{ fail sbpf_build_hash "clang -target bpf failed"; exit 0; }
fi
# Debian's pycryptodome lives beside the system python, whatever python3 is first on PATH.
PY=/usr/bin/python3
if ! "$PY" -c 'from Cryptodome.Hash import keccak' 2>/dev/null; then
	skip sbpf_hash "python3-pycryptodome not installed (scripts/install-deps.sh)"
	exit 0
fi

# input MODE SPLIT FILE < DATA: the program's input (see hash.c).
input() {
	"$PY" -c 'import sys, struct
d = sys.stdin.buffer.read()
sys.stdout.buffer.write(bytes([int(sys.argv[1]), int(sys.argv[2])]) + struct.pack("<H", len(d)) + bytes(4) + d)' "$1" "$2" >"$3"
}
# run FILE: prints "return_data compute_units syscall_cu"
run() {
	local json
	json=$("$TALLY" sbpf run "$OUT/hash.o" --input "$1" --json --folded "$1.folded") || { echo "run failed: $json"; return; }
	local sys
	sys=$(awk '$1 ~ /;syscall:sol_(sha|keccak)256$/ { s += $NF } END { print s + 0 }' "$1.folded")
	echo "$json" | "$PY" -c 'import sys, json
o = json.load(sys.stdin)
print(o["return_data"], o["compute_units"], sys.argv[1])' "$sys"
}

# Published Keccak-256 vectors (the empty string, "abc", the quick brown fox).
i=0
for v in ":c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470" \
	"abc:4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45" \
	"The quick brown fox jumps over the lazy dog:4d741b6f1eb29cb2a9b9911c82f56fa8d73b04959d3d9d222895df6c0b28aa15"; do
	i=$((i + 1))
	text=${v%:*}
	printf '%s' "$text" | input 1 $((${#text} / 2)) "$TMP/pub$i"
	got=$(run "$TMP/pub$i")
	[ "${got%% *}" = "${v##*:}" ] && pass "sbpf_keccak256_published_vector_$i" ||
		fail "sbpf_keccak256_published_vector_$i" "$got"
done

# Lengths around the 136-byte rate (the pad bytes 0x01 and 0x80 share a byte at 135), the
# split anywhere, slices under 20 bytes (charged the 10 CU floor).
for case in 0:0 1:0 7:3 21:20 135:100 136:136 137:1 271:200 272:255 1000:17 4000:250; do
	len=${case%:*} split=${case#*:}
	"$PY" -c 'import sys, random; random.seed(int(sys.argv[1])); sys.stdout.buffer.write(random.randbytes(int(sys.argv[1])))' "$len" >"$TMP/data"
	input 1 "$split" "$TMP/k$len" <"$TMP/data"
	input 0 "$split" "$TMP/s$len" <"$TMP/data"
	want_k=$("$PY" -c 'import sys
from Cryptodome.Hash import keccak
print(keccak.new(digest_bits=256, data=sys.stdin.buffer.read()).hexdigest())' <"$TMP/data")
	want_s=$(sha256sum <"$TMP/data" | cut -d' ' -f1)
	a=$split b=$((len - split))
	cost=$((85 + (a / 2 > 10 ? a / 2 : 10) + (b / 2 > 10 ? b / 2 : 10)))
	read -r hk cuk sysk <<<"$(run "$TMP/k$len")"
	read -r hs cus syss <<<"$(run "$TMP/s$len")"
	[ "$hk" = "$want_k" ] && pass "sbpf_keccak256_matches_pycryptodome_$len" ||
		fail "sbpf_keccak256_matches_pycryptodome_$len" "want $want_k got $hk"
	[ "$hs" = "$want_s" ] && pass "sbpf_sha256_matches_sha256sum_$len" ||
		fail "sbpf_sha256_matches_sha256sum_$len" "want $want_s got $hs"
	# Outside the syscall the run costs the same for every input.
	: "${rest_k:=$((cuk - sysk))}" "${rest_s:=$((cus - syss))}"
	[ "$sysk" = "$cost" ] && [ "$syss" = "$cost" ] &&
		[ $((cuk - sysk)) = "$rest_k" ] && [ $((cus - syss)) = "$rest_s" ] &&
		pass "sbpf_hash_cost_$len" ||
		fail "sbpf_hash_cost_$len" "want $cost: keccak $sysk of $cuk, sha256 $syss of $cus"
done

# Over 20000 slices: TooManySlices before any charge; a misaligned slice table:
# UnalignedPointer after the base cost (agave translates the table after charging it).
printf '' | input 2 0 "$TMP/many"
out=$("$TALLY" sbpf run "$OUT/hash.o" --input "$TMP/many" --json)
[[ "$out" == *'"result": "TooManySlices"'* && "$out" == *'Keccak256 Hashing 20001 sequences'* ]] &&
	pass sbpf_keccak256_too_many_slices || fail sbpf_keccak256_too_many_slices "$out"
printf '' | input 3 0 "$TMP/misaligned"
out=$("$TALLY" sbpf run "$OUT/hash.o" --input "$TMP/misaligned" --json)
[[ "$out" == *'"result": "UnalignedPointer"'* ]] && pass sbpf_keccak256_unaligned_slices ||
	fail sbpf_keccak256_unaligned_slices "$out"

# sol_blake3 is not registered by the runtime (LiteSVM 1.5, mainnet's features; see
# syscalls.test.sh): an object calling it does not link, as agave's loader would not resolve it.
printf 'extern void sol_blake3(const void *, unsigned long, void *);\nunsigned long entrypoint(void) { sol_blake3(0, 0, 0); return 0; }\n' >"$TMP/b3.c"
clang -target bpf -mcpu=v3 -O2 -c "$TMP/b3.c" -o "$TMP/b3.o"
err=$("$TALLY" sbpf run "$TMP/b3.o" 2>&1); rc=$?
[ $rc -eq 1 ] && [[ "$err" == *'UnresolvedSymbol("sol_blake3"'* ]] &&
	pass sbpf_blake3_unknown || fail sbpf_blake3_unknown "$err"

# The same program as an instruction in tally and in LiteSVM (linked by `tally sbpf link`):
# its input starts with the account count, so K read-only accounts pick mode K with empty
# data: sha256 and keccak256 of two empty slices (85 + 2 * 10 CU), and the two refusals.
. tests/solana/litesvm/oracle.sh
if litesvm_ready sbpf_hash_litesvm; then
	"$TALLY" sbpf link "$OUT/hash.o" -o "$TMP/hash.so" || fail sbpf_hash_litesvm "tally sbpf link failed"
	for k in 0 1 2 3; do
		"$PY" - "$TMP/hash.so" $k >"$TMP/hash$k.json" <<'PY'
import json, sys
sys.path.insert(0, "tests/solana")
from keys import b58, name_key
so, k = sys.argv[1], int(sys.argv[2])
prog = b58(name_key("hash"))
keys = [b58(name_key(f"hash-account-{i}")) for i in range(k)]
print(json.dumps({
    "programs": [{"id": prog, "elf": so}],
    "accounts": [{"pubkey": a, "owner": "11111111111111111111111111111111", "lamports": 1000000000} for a in keys],
    "instruction": {"program_id": prog, "accounts": [{"pubkey": a} for a in keys], "data": ""}}))
PY
		same_as_litesvm "sbpf_hash_litesvm_mode$k" "$TMP/hash$k.json"
	done
fi
