# Repair of sBPF DWARF misrelocated by Solana platform-tools before v1.51 (R_BPF_64_64
# applied to 8-byte address slots: low word at +4, high word at +12). The test builds BPF
# objects (DWARF 5: addresses in .debug_addr; DWARF 4: in .debug_info), then writes each
# twice: relocated correctly, and relocated in exactly the broken pattern. tally on the
# broken file must answer what llvm-symbolizer answers on the correct one; llvm-symbolizer
# itself is fooled by the broken one.
. tests/lib.sh
cc -O1 -o "$TMP/misrelocate" tests/dwarf/src/misrelocate.c
cat >"$TMP/prog.c" <<'C'
static inline int square(int x) { return x * x; }
static inline __attribute__((always_inline)) int quad(int x) { return square(square(x)); }
__attribute__((noinline)) int multiply(int x, int y) { return x * y; }
static inline __attribute__((always_inline)) int sq_call(int x) { return multiply(x, x); }
__attribute__((noinline)) int leaf(int x) { return quad(x) + sq_call(x); }
int entrypoint(const int *input) { return leaf(input[0]) + quad(input[1]) + sq_call(input[2]); }
C

# repaired_like_llvm VERSION: the broken file symbolizes like the good one, and the breakage
# is real (llvm-symbolizer reads the broken file wrong).
repaired_like_llvm() {
	local v=$1
	clang -target bpf -O2 -g -gdwarf-$v -c "$TMP/prog.c" -o "$TMP/v$v.o"
	"$TMP/misrelocate" good "$TMP/v$v.o" "$TMP/v$v-good.o"
	"$TMP/misrelocate" broken "$TMP/v$v.o" "$TMP/v$v-broken.o"
	agrees_with_llvm "dwarf${v}_misrelocated_addresses_are_repaired" "$TMP/v$v-broken.o" "$TMP/v$v-good.o"
	text_addrs "$TMP/v$v-good.o" >"$TMP/addrs"
	if cmp -s <(llvm-symbolizer --inlining --obj="$TMP/v$v-good.o" <"$TMP/addrs") \
		<(llvm-symbolizer --inlining --obj="$TMP/v$v-broken.o" <"$TMP/addrs"); then
		fail "dwarf${v}_broken_pattern_fools_llvm_symbolizer" "llvm-symbolizer reads it right"
	else
		pass "dwarf${v}_broken_pattern_fools_llvm_symbolizer"
	fi
}
repaired_like_llvm 5
repaired_like_llvm 4

# The seed's example: multiply called from sq_call, which is inlined into leaf.
addr=$(llvm-objdump -d --section=.text "$TMP/v5-broken.o" |
	awk '/<leaf>:/ { on = 1 } on && /call/ { sub(":", "", $1); printf "0x%x\n", $1 * 8; exit }')
out=$("$TALLY" symbolize -e "$TMP/v5-broken.o" "$addr")
[[ "$(sed -n '1p;3p' <<<"$out" | tr '\n' ' ')" == "sq_call leaf " ]] &&
	pass repaired_call_site_names_inlined_caller || fail repaired_call_site_names_inlined_caller "$out"
