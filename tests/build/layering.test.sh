# Includes follow DESIGN's dependency order (scripts/check-layering.sh), in the tree as it
# is; and the check itself catches what it is there for: a planted upward include (in a
# module's folder and in its subfolder), an include of another module's internal header and
# a module missing from the order, each in a copy of one source file inside the test's
# directory.
. tests/lib.sh
check=$ROOT/scripts/check-layering.sh

if out=$("$check" "$ROOT/src" 2>&1); then
	pass includes_follow_dependency_order
else
	fail includes_follow_dependency_order "$out"
fi

mkdir -p "$TMP/src/profile" "$TMP/src/elf" "$TMP/src/unwind"
printf '#include "profile/profile.h"\n#include "base/vec.h"\n' >"$TMP/src/profile/ok.c"
printf '/* ok */\n#include "elf/elf.h"\n' >"$TMP/src/unwind/ok.c"
out=$("$check" "$TMP/src" 2>&1)
[[ $? == 0 && -z "$out" ]] && pass layering_accepts_downward_includes ||
	fail layering_accepts_downward_includes "$out"

printf '#include "elf/elf.h"\n' >"$TMP/src/profile/up.c"
out=$("$check" "$TMP/src" 2>&1)
[[ $? == 1 && "$out" == "$TMP/src/profile/up.c:1: profile includes elf/elf.h" ]] &&
	pass layering_rejects_upward_include || fail layering_rejects_upward_include "$out"
rm "$TMP/src/profile/up.c"

mkdir "$TMP/src/profile/part"
printf '#include "elf/elf.h"\n' >"$TMP/src/profile/part/up.c"
out=$("$check" "$TMP/src" 2>&1)
[[ $? == 1 && "$out" == "$TMP/src/profile/part/up.c:1: profile includes elf/elf.h" ]] &&
	pass layering_checks_a_module_subfolder || fail layering_checks_a_module_subfolder "$out"
rm -r "$TMP/src/profile/part"

printf '#include "dwarf/dwarf_internal.h"\n' >"$TMP/src/unwind/peek.c"
out=$("$check" "$TMP/src" 2>&1)
[[ $? == 1 && "$out" == "$TMP/src/unwind/peek.c:1: unwind includes dwarf/dwarf_internal.h" ]] &&
	pass layering_rejects_internal_header || fail layering_rejects_internal_header "$out"
rm "$TMP/src/unwind/peek.c"

mkdir "$TMP/src/misc"
out=$("$check" "$TMP/src" 2>&1)
[[ $? == 1 && "$out" == "$TMP/src/misc/: module misc is not in the dependency order"* ]] &&
	pass layering_rejects_unplaced_module || fail layering_rejects_unplaced_module "$out"
