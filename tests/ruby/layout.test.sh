# tally's table of Ruby 3.1's layouts (src/ruby/layout.c) against Ruby's own headers: the
# one Ruby installs for its JIT (rb_mjit_min_header-VERSION.h, ruby3.1-dev), which holds
# the VM's structures as the interpreter was built, compiled with our table
# (src/layout_check.c: offsetof and the enums' values; its inline functions link against
# libruby); and libruby itself as tally reads
# it (ruby/lib.h): its version, the GOT slot of ruby_current_ec against readelf's
# relocations, and the symbol table's address against the code of rb_id2str as objdump
# disassembles it.
. tests/lib.sh

H=$(ls /usr/include/x86_64-linux-gnu/ruby-3.1.0/rb_mjit_min_header-3.1.*.h 2>/dev/null | head -1)
[ -n "$H" ] || { skip ruby_layout_headers "needs ruby3.1-dev (scripts/install-deps.sh test)"; exit 0; }
V=$(basename "$H" .h)
V=${V#rb_mjit_min_header-}
libs=$(sed -n 's/^LIBS := //p' "$ROOT/Makefile")
# shellcheck disable=SC2086
if cc -std=gnu11 -w -I"$ROOT/src" -DRB_MJIT_HEADER="\"$H\"" -DRB_VERSION="\"$V\"" \
	-o "$TMP/layout_check" "$ROOT/tests/ruby/src/layout_check.c" "$ROOT/$BUILD/modules.a" \
	$libs -lruby-3.1 $([ "$BUILD" = build-asan ] && echo -fsanitize=address,undefined) \
	2>"$TMP/cc.err"; then
	check ruby_layout_headers_$V "$TMP/layout_check"
else
	fail ruby_layout_headers_$V "does not build: $(head -3 "$TMP/cc.err")"
fi

# libruby as tally reads it, against readelf and objdump.
LIB=$(ls /usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1.* 2>/dev/null | head -1)
[ -n "$LIB" ] || { skip ruby_layout_lib "needs ruby3.1"; exit 0; }
. "$ROOT/tests/ruby/driver.sh"
rb_check_build ruby_layout_lib
"$TMP/rb_check" --lib "$LIB" >"$TMP/lib" 2>&1
got=$(readelf -rW "$LIB" | awk '$3 == "R_X86_64_DTPMOD64" && $5 == "ruby_current_ec" { print $1 }' | sed 's/^0*//')
off=$(readelf -W --dyn-syms "$LIB" | awk '$4 == "TLS" && $8 == "ruby_current_ec" { print $2 }' | sed 's/^0*//')
id2str=$(readelf -W --dyn-syms "$LIB" | awk '$8 == "rb_id2str" { print $2 }')
jmp=$(objdump -d --no-show-raw-insn --start-address=0x$id2str --stop-address=$((0x$id2str + 32)) "$LIB" |
	awk '$2 == "jmp" { print $3; exit }')
syms=$(objdump -d --no-show-raw-insn --start-address=0x$jmp --stop-address=$((0x$jmp + 192)) "$LIB" |
	awk '$2 == "cmp" && $3 ~ /%edi,.*\(%rip\)/ { print $5; exit }')
want="version ${LIB##*.so.}
tls 1 $got ${off:-0}
symbols $syms"
if [ "$(head -3 "$TMP/lib")" = "$want" ]; then
	pass ruby_layout_lib
else
	fail ruby_layout_lib "tally: $(head -3 "$TMP/lib"); readelf/objdump: $want"
fi

# A version without a table: a copy of libruby whose ruby_version says 3.2.0 is refused by
# name, with the versions tally knows, and read no further.
addr=$(readelf -W --dyn-syms "$LIB" | awk '$8 == "ruby_version" { print $2 }')
off=$(readelf -SW "$LIB" | python3 -c '
import re, sys
a = int(sys.argv[1], 16)
for line in sys.stdin:
    m = re.search(r"\]\s+(\S+)\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
    if m and m.group(2) != "NOBITS":
        s, o, n = (int(m.group(i), 16) for i in (3, 4, 5))
        if s <= a < s + n:
            print(a - s + o)
            break
' "$addr")
cp "$LIB" "$TMP/libruby-3.1.so.9"
printf '3.2.0' | dd of="$TMP/libruby-3.1.so.9" bs=1 seek="$off" conv=notrunc 2>/dev/null
expect_err ruby_layout_unknown_version 1 "Ruby 3.2.0 has no layout in tally (it knows Ruby 3.1): native frames only" \
	"$TMP/rb_check" --lib "$TMP/libruby-3.1.so.9"
