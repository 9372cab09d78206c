# Type layouts (dwarf/types.c) against gdb reading the same file: member offsets by dotted
# path (through nested, anonymous and qualified members), sizes, bit-fields, a struct
# declared in one unit and defined in another, across compilers and DWARF versions 2-5,
# compressed sections, LTO and dwz.
. tests/lib.sh
src="$ROOT/tests/dwarf/src"
libs=$(sed -n 's/^LIBS := //p' "$ROOT/Makefile")
# shellcheck disable=SC2086
if ! cc -std=gnu11 -I"$ROOT/src" -I"$ROOT/include" -o "$TMP/type_member" "$src/type_member.c" \
	"$ROOT/$BUILD/libtally.a" $libs $([ "$BUILD" = build-asan ] && echo -fsanitize=address,undefined) 2>"$TMP/cc.err"; then
	fail type_layouts_build "$(head -3 "$TMP/cc.err")"
	exit 0
fi

paths="tag nested nested.c nested.wide nested.s1 nested.u_int nested.u_double array elsewhere
u u.lo u.hi u.both state fn atomic_int flex"
bitfields="bits_a bits_b bits_c bits_wide state.interned state.kind state.compact state.ascii state.ready"

# gdb's answers in type_member's format: "TYPE.PATH offset size bit_offset bit_size".
oracle() {
	local bin=$1 p
	for p in $paths; do
		echo "printf \"struct outer.$p %lu %lu %lu 0\\n\", (unsigned long)&((struct outer *)0)->$p, (unsigned long)sizeof(((struct outer *)0)->$p), 8 * (unsigned long)&((struct outer *)0)->$p"
	done >"$TMP/gdb.cmds"
	echo 'printf "outer_t %lu\n", (unsigned long)sizeof(outer_t)' >>"$TMP/gdb.cmds"
	echo 'printf "union top_union %lu\n", (unsigned long)sizeof(union top_union)' >>"$TMP/gdb.cmds"
	echo 'printf "elsewhere_t.third %lu %lu %lu 0\n", (unsigned long)&((elsewhere_t *)0)->third, (unsigned long)sizeof(int), 8 * (unsigned long)&((elsewhere_t *)0)->third' >>"$TMP/gdb.cmds"
	gdb -batch -nx -x "$TMP/gdb.cmds" "$bin" 2>"$TMP/gdb.err"
	# "/*    233: 4   |       1 */    signed char bits_c : 4;"
	gdb -batch -nx -ex 'ptype /o struct outer' "$bin" 2>/dev/null |
		sed -n 's|^/\* *\([0-9]*\): *\([0-9]*\) *[|] *\([0-9]*\) \*/.* \([a-z_]*\) : \([0-9]*\);.*|\1 \2 \3 \4 \5|p' |
		while read -r byte bit size name bits; do
			[ "$name" = bits_${name#bits_} ] || name=state.$name
			echo "struct outer.$name $byte $size $((byte * 8 + bit)) $bits"
		done
}

# agrees NAME BIN
agrees() {
	local name=$1 bin=$2
	# shellcheck disable=SC2086
	{ "$TMP/type_member" "$bin" "struct outer" $paths $bitfields
	  "$TMP/type_member" "$bin" outer_t
	  "$TMP/type_member" "$bin" "union top_union"
	  "$TMP/type_member" "$bin" elsewhere_t third; } >"$TMP/got" 2>&1
	oracle "$bin" | sort >"$TMP/want"
	sort "$TMP/got" >"$TMP/got.sorted"
	if [ "$(wc -l <"$TMP/want")" -lt 29 ]; then
		fail "$name" "gdb gave $(wc -l <"$TMP/want") answers: $(head -2 "$TMP/gdb.err")"
	elif cmp -s "$TMP/want" "$TMP/got.sorted"; then
		pass "$name"
	else
		fail "$name" "$(diff "$TMP/want" "$TMP/got.sorted" | head -6)"
	fi
}

build() { # build OUT CC FLAGS...
	local out=$1
	shift
	"$@" -O1 -o "$out" "$src/layouts.c" "$src/layouts_other.c" 2>"$TMP/build.err" ||
		{ fail "type_layouts_build($*)" "$(head -2 "$TMP/build.err")"; return 1; }
}

for variant in "gcc -gdwarf-5" "gcc -gdwarf-4" "gcc -gdwarf-3 -gstrict-dwarf" \
	"gcc -gdwarf-2 -gstrict-dwarf" "clang -gdwarf-5" "clang -gdwarf-4" \
	"gcc -gdwarf-5 -gz=zlib" "gcc -gdwarf-5 -flto"; do
	bin="$TMP/layouts-$(tr ' =' '_-' <<<"$variant")"
	# shellcheck disable=SC2086
	build "$bin" $variant && agrees "type_layouts_match_gdb($variant)" "$bin"
done

# zstd-compressed sections (gcc's -gz knows only zlib).
build "$TMP/layouts-plain" clang -gdwarf-5 &&
	objcopy --compress-debug-sections=zstd "$TMP/layouts-plain" "$TMP/layouts-zstd" &&
	agrees "type_layouts_match_gdb(zstd)" "$TMP/layouts-zstd"

# dwz moves the types both units share into partial units of the same file.
if build "$TMP/layouts-nodwz" gcc -gdwarf-5 && dwz -o "$TMP/layouts-dwz" "$TMP/layouts-nodwz" &&
	readelf --debug-dump=info "$TMP/layouts-dwz" 2>/dev/null | grep -q DW_TAG_partial_unit; then
	agrees "type_layouts_match_gdb(dwz)" "$TMP/layouts-dwz"
else
	fail "type_layouts_match_gdb(dwz)" "dwz made no partial unit"
fi

out=$("$TMP/type_member" "$TMP/layouts-gcc_-gdwarf-5" "struct outer" no_such nested.no_such tag.x 2>&1)
[ "$out" = $'struct outer.no_such missing\nstruct outer.nested.no_such missing\nstruct outer.tag.x missing' ] &&
	pass type_member_missing_paths_are_missing || fail type_member_missing_paths_are_missing "$out"
out=$("$TMP/type_member" "$TMP/layouts-gcc_-gdwarf-5" "struct no_such_type" 2>&1)
[[ "$out" == "struct no_such_type missing"* ]] && pass type_missing_is_missing ||
	fail type_missing_is_missing "$out"
