# The mappings of tally's pprof export, as go tool pprof -raw shows them: a recording of a
# program built here (non-PIE with bfd, PIE with lld) exported to pprof must name the
# program's path and the build-id readelf -n reports, and map its code as the loader does
# (memory_start and file_offset page-aligned on the executable PT_LOAD segment, readelf -l),
# so that every location's address - memory_start + file_offset is the file offset of an
# instruction of the function the location names (objdump -d; tally names every PLT stub
# "[plt]", objdump "printf@plt": a sample may land in one).
. tests/lib.sh

export GOFLAGS=-mod=mod GOTOOLCHAIN=local GOPROXY=off GOCACHE=$TMP/go-cache

# "ADDR FUNCTION" for every instruction objdump disassembles (addresses as plain hex).
objdump_insns() {
	objdump -d --no-show-raw-insn "$1" | awk '
		/^[0-9a-f]+ <.*>:$/ { fn = $2; gsub(/^<|>:$/, "", fn); next }
		/^ +[0-9a-f]+:\t/ { a = $1; sub(":", "", a); sub(/^0+/, "", a); print a, fn }'
}

long=$(head -c 100000 /dev/zero | tr '\0' a)
for kind in nopie lldpie; do
	bin=$TMP/prog-$kind
	build_layout $kind "$bin" || { fail "pprof_mapping_${kind}_builds"; continue; }
	if ! "$TALLY" record -o "$TMP/$kind.data" -- "$bin" "$long" >/dev/null 2>"$TMP/rec.err"; then
		fail "pprof_mapping_${kind}_records" "$(tail -2 "$TMP/rec.err")"
		continue
	fi
	"$TALLY" export -f pprof "$TMP/$kind.data" -o "$TMP/$kind.pb.gz" || { fail "pprof_mapping_${kind}_exports"; continue; }
	go tool pprof -raw "$TMP/$kind.pb.gz" >"$TMP/$kind.raw" 2>"$TMP/go.err" ||
		{ fail "pprof_mapping_${kind}_go_reads" "$(tail -2 "$TMP/go.err")"; continue; }

	# The program's mapping: "ID: START/LIMIT/OFFSET PATH BUILDID [flags]".
	bid=$(readelf -n "$bin" | sed -n 's/.*Build ID: //p')
	read -r mid start limit offset got_bid < <(sed -n '/^Mappings/,$p' "$TMP/$kind.raw" |
		awk -v p="$bin" '$3 == p { id = $1; sub(":", "", id); split($2, r, "/"); print id, r[1], r[2], r[3], $4 }')
	mapline=$(sed -n '/^Mappings/,$p' "$TMP/$kind.raw" | tr '\n' ' ')
	[ -n "${mid:-}" ] && [ -n "$bid" ] && [ "${got_bid:-}" = "$bid" ] &&
		pass "pprof_mapping_${kind}_has_path_and_build_id" ||
		fail "pprof_mapping_${kind}_has_path_and_build_id" "readelf: '$bid'; go tool pprof -raw: $mapline"
	[ -n "${mid:-}" ] || continue

	# As the loader maps the executable segment: whole pages from its page-aligned offset.
	read -r soff svaddr smem < <(readelf -lW "$bin" | awk '$1 == "LOAD" && / R E / { print $2, $3, $6 }')
	page=4096
	want_off=$(((soff / page) * page))
	want_len=$((((svaddr + smem + page - 1) / page) * page - (svaddr / page) * page))
	[ $((offset)) = $want_off ] && [ $((limit - start)) = $want_len ] && [ $((start % page)) = 0 ] &&
		pass "pprof_mapping_${kind}_is_the_text_segment" ||
		fail "pprof_mapping_${kind}_is_the_text_segment" "$start/$limit/$offset; readelf: offset $soff vaddr $svaddr memsz $smem"

	# Every location of that mapping: its file offset, through readelf's segments, is an
	# instruction objdump puts in the function the location names (its outermost line).
	readelf -lW "$bin" | awk '$1 == "LOAD" { printf "%.0f %.0f %.0f\n", $2 + 0, $3 + 0, $5 + 0 }' >"$TMP/segs"
	objdump_insns "$bin" >"$TMP/insns"
	sed -n '/^Locations/,/^Mappings/p' "$TMP/$kind.raw" | awk -v m="M=$mid" '
		/^ +[0-9]+: 0x/ { if (a != "") print a, fn; a = ($3 == m) ? $2 : ""; fn = $4; next }
		NF >= 3 && $1 !~ /:$/ { fn = $1 }
		END { if (a != "") print a, fn }' >"$TMP/locs"
	bad=$(awk -v s=$((start)) -v o=$((offset)) '
		FILENAME ~ /segs$/ { off[NR] = $1; va[NR] = $2; sz[NR] = $3; n = NR; next }
		FILENAME ~ /insns$/ { fn[$1] = $2; next }
		{ f = ($1 + 0) - s + o; v = -1
		  for (i = 1; i <= n; i++) if (f >= off[i] && f < off[i] + sz[i]) v = f - off[i] + va[i]
		  a = sprintf("%x", v); plt = $2 == "[plt]" && fn[a] ~ /@plt$/
		  if (v < 0 || (fn[a] != $2 && !plt)) print $1, $2, a, (a in fn) ? fn[a] : "no instruction" }' \
		"$TMP/segs" "$TMP/insns" "$TMP/locs")
	nlocs=$(wc -l <"$TMP/locs")
	[ "$nlocs" -ge 3 ] && [ -z "$bad" ] && grep -q ' crunch$' "$TMP/locs" &&
		pass "pprof_mapping_${kind}_locations_are_instructions_of_their_functions" ||
		fail "pprof_mapping_${kind}_locations_are_instructions_of_their_functions" "$nlocs locations; $(head -3 <<<"$bad" | tr '\n' ' ')"
done
