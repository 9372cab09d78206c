# Demangling through libiberty: C++, legacy Rust and Rust v0 names, in both output styles.
. tests/lib.sh
cat >"$TMP/names.c" <<'C'
void legacy(void) __asm__("_ZN4core3fmt5write17h0123456789abcdefE");
void legacy(void) {}
void v0(void) __asm__("_RNvCs1234_7mycrate4main");
void v0(void) {}
void cxx(void) __asm__("_ZN3foo3barEv");
void cxx(void) {}
int main(void) { legacy(); v0(); cxx(); return 0; }
C
gcc -O0 -g "$TMP/names.c" -o "$TMP/names"
addr_of() { nm "$TMP/names" | awk -v s="$1" '$3 == s { print "0x" $1 }'; }

for sym in _ZN4core3fmt5write17h0123456789abcdefE _RNvCs1234_7mycrate4main _ZN3foo3barEv; do
	a=$(addr_of "$sym")
	want=$(addr2line -f -C -e "$TMP/names" "$a")
	got=$("$TALLY" symbolize --output-style=GNU -e "$TMP/names" "$a")
	[ "$got" = "$want" ] && pass "gnu_demangles_$sym" || fail "gnu_demangles_$sym" "$got / $want"
done
for sym in _RNvCs1234_7mycrate4main _ZN3foo3barEv; do
	a=$(addr_of "$sym")
	want=$(llvm-symbolizer --inlining --obj="$TMP/names" "$a")
	got=$("$TALLY" symbolize -e "$TMP/names" "$a")
	[ "$got" = "$want" ] && pass "llvm_demangles_$sym" || fail "llvm_demangles_$sym" "$got / $want"
done
# Legacy Rust: libiberty drops the hash, as addr2line -C and rustfilt do; llvm-symbolizer 14
# reads the name as plain Itanium and keeps "::h0123456789abcdef" (KNOWN_DIFFERENCES.md).
got=$("$TALLY" symbolize -e "$TMP/names" "$(addr_of _ZN4core3fmt5write17h0123456789abcdefE)" | head -1)
[ "$got" = "core::fmt::write" ] && pass legacy_rust_hash_is_dropped || fail legacy_rust_hash_is_dropped "$got"
got=$("$TALLY" symbolize --no-demangle -e "$TMP/names" "$(addr_of _ZN3foo3barEv)" | head -1)
[ "$got" = "_ZN3foo3barEv" ] && pass no_demangle_keeps_linkage_name || fail no_demangle_keeps_linkage_name "$got"
