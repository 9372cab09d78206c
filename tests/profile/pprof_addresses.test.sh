# Addresses in pprof files written by other tools: runtime addresses whose mapping turns
# them into FILE OFFSETS (address - memory_start + file_offset), which tally must turn into
# ELF vaddrs through the binary's PT_LOAD segments. The layouts where the two differ are
# the point: non-PIE executables and lld's PIE layout (text at vaddr = offset + 0x1000).
# Inputs are genuine: CPU profiles Go's runtime/pprof writes of Go programs built here
# (non-PIE, and PIE linked externally by lld), and perf recordings of C programs converted
# the way perf_to_profile converts them (mapping from the MMAP2 event, raw sample ips).
# Oracles: the file:line Go's runtime gave each pc, go tool pprof -disasm (for non-PIE:
# its Go-only object reader ignores mappings), perf annotate, objdump. Then the round
# trips: foreign -> tally -> pprof -> tally, and tally record -> pprof (-> go tool pprof
# -proto) -> tally, exact whether or not the binary is still there.
. tests/lib.sh

# Offline, with the build cache and module path in the scratch directory.
export GOFLAGS=-mod=mod GOTOOLCHAIN=local GOPROXY=off GOCACHE=$TMP/go-cache GOPATH=$TMP/go-path

# ---- Go's own profiles ----

# "FILE:LINE COUNT" for the samples whose innermost location lies in FUNC (its outermost
# Line entry), by the innermost Line entry: what Go's runtime said each pc was.
go_lines() { # PROFILE FUNC
	go tool pprof -raw "$1" 2>/dev/null | awk -v fn="$2" '
		/^Samples:/ { sec = "s"; next }
		/^Locations/ { sec = "l"; next }
		/^Mappings/ { sec = "m"; next }
		sec == "s" && /:/ { split($0, h, ":"); split(h[1], v, " "); split(h[2], ids, " "); n[ids[1]] += v[1] }
		sec == "l" && /^ +[0-9]+: 0x/ { cur = $1; sub(":", "", cur); inner[cur] = $(NF - 1); outer[cur] = $4; next }
		sec == "l" && NF >= 3 { outer[cur] = $1 }
		END { for (id in n) if (outer[id] == fn) { f = inner[id]; sub(/.*\//, "", f); s[f] += n[id] }
		      for (f in s) print f, s[f] }' | LC_ALL=C sort
}

# The same from tally annotate: each instruction's weight under the source line printed
# above it (the innermost one, inlined callee's included).
our_lines() { # ANNOTATE_OUTPUT
	awk '$1 ~ /^[^ ]+\.[a-z]+:[0-9]+$/ { line = $1; next }
	     $1 ~ /%$/ { w = $2; gsub(",", "", w); s[line] += w }
	     END { for (l in s) print l, s[l] }' "$1" | LC_ALL=C sort
}

# "ADDR COUNT" per instruction with weight, from go tool pprof -disasm (ms; period 10 ms)
# and from tally annotate --metric samples.
go_disasm() {
	go tool pprof -disasm="$2" "$1" 2>/dev/null | awk '$1 ~ /ms$/ && $3 ~ /:$/ {
		a = $3; sub(":", "", a); print a, ($1 + 0) / 10 }' | LC_ALL=C sort
}
our_insns() { sed -n 's/^ *[0-9.]*% *\([0-9,]*\) .* \([0-9a-f]*\):  .*/\2 \1/p' "$1" | tr -d , | LC_ALL=C sort; }

gobuild() { # DIR OUT [go build flags...]
	local dir=$1 out=$2
	shift 2
	(cd "$dir" && go build "$@" -o "$out" .) >"$TMP/go.err" 2>&1
}

mkdir -p "$TMP/go"
cp tests/report/gocpu.go "$TMP/go/"
if ! (cd "$TMP/go" && go mod init gocpu) >"$TMP/go.err" 2>&1; then
	fail go_module "$(tail -2 "$TMP/go.err")"
fi
for kind in nopie lldpie; do
	bin=$TMP/go/gocpu-$kind
	if [ $kind = nopie ]; then
		gobuild "$TMP/go" "$bin"
	else
		gobuild "$TMP/go" "$bin" -buildmode=pie -ldflags='-linkmode=external -extldflags=-fuse-ld=lld'
	fi || { fail "go_${kind}_builds" "$(tail -3 "$TMP/go.err")"; continue; }
	prof=$TMP/go/$kind.pb.gz
	"$bin" "$prof" || { fail "go_${kind}_profiles_itself"; continue; }
	# The layout this is about: in lld's PIE, code lies one page above its file offset.
	if [ $kind = lldpie ]; then
		readelf -lW "$bin" | awk '$1 == "LOAD" && / R E / && $2 + 0 != $3 + 0 { d = 1 } END { exit !d }' ||
			fail go_lldpie_text_vaddr_differs_from_offset "$(readelf -lW "$bin" | grep LOAD)"
	fi
	"$TALLY" annotate --function main.hashLoop --metric samples "$prof" >"$TMP/$kind.txt" 2>&1
	want=$(go_lines "$prof" main.hashLoop)
	got=$(our_lines "$TMP/$kind.txt")
	[ -n "$want" ] && [ "$got" = "$want" ] && pass "go_${kind}_annotate_lines_match_go_runtime" ||
		fail "go_${kind}_annotate_lines_match_go_runtime" "go: $(echo $want) ours: $(echo $got) $(head -2 "$TMP/$kind.txt" | tr '\n' ' ')"
	if [ $kind = nopie ]; then
		want=$(go_disasm "$prof" main.hashLoop)
		got=$(our_insns "$TMP/$kind.txt")
		[ -n "$want" ] && [ "$got" = "$want" ] && pass go_nopie_annotate_matches_go_disasm ||
			fail go_nopie_annotate_matches_go_disasm "go: $(echo $want) ours: $(echo $got)"
	fi
	# foreign -> tally -> pprof: the same runtime addresses and the mapping Go wrote (which
	# is what the loader mapped); -> tally: the same listing, even with the binary gone.
	"$TALLY" export -f pprof "$prof" -o "$TMP/$kind-re.pb.gz"
	locs() { go tool pprof -raw "$1" 2>/dev/null | sed -n '/^Locations/,/^Mappings/s/^ *[0-9]*: \(0x[0-9a-f]*\) M=[0-9]* \([^ ]*\) .*/\1 \2/p' | LC_ALL=C sort -u; }
	maps() { go tool pprof -raw "$1" 2>/dev/null | sed -n '/^Mappings/,$s/^[0-9]*: \([^ ]* [^ ]*\).*/\1/p' | LC_ALL=C sort; }
	[ -n "$(locs "$prof")" ] && [ "$(locs "$prof")" = "$(locs "$TMP/$kind-re.pb.gz")" ] &&
		[ "$(maps "$prof")" = "$(maps "$TMP/$kind-re.pb.gz")" ] &&
		pass "go_${kind}_export_keeps_addresses_and_mapping" ||
		fail "go_${kind}_export_keeps_addresses_and_mapping" "$(maps "$prof") / $(maps "$TMP/$kind-re.pb.gz")"
	"$TALLY" annotate --function main.hashLoop --metric samples "$TMP/$kind-re.pb.gz" >"$TMP/$kind-re.txt" 2>&1
	"$TALLY" export -f pprof "$TMP/$kind-re.pb.gz" -o "$TMP/$kind-re2.pb.gz"
	mv "$bin" "$bin.moved"
	"$TALLY" annotate --function main.hashLoop --metric samples --binary "$bin.moved" "$TMP/$kind-re.pb.gz" >"$TMP/$kind-moved.txt" 2>&1
	mv "$bin.moved" "$bin"
	grep -qE '^ *[0-9.]+% ' "$TMP/$kind.txt" && cmp -s "$TMP/$kind.txt" "$TMP/$kind-re.txt" &&
		cmp -s <(sed 2d "$TMP/$kind.txt") <(sed 2d "$TMP/$kind-moved.txt") &&
		cmp -s "$TMP/$kind-re.pb.gz" "$TMP/$kind-re2.pb.gz" &&
		pass "go_${kind}_round_trip_is_exact_with_or_without_binary" ||
		fail "go_${kind}_round_trip_is_exact_with_or_without_binary" "$(diff "$TMP/$kind.txt" "$TMP/$kind-moved.txt" | head -4 | tr '\n' ' ')"
done

# ---- perf recordings of C programs, converted as perf_to_profile does ----

long=$(head -c 100000 /dev/zero | tr '\0' a)
for kind in nopie lldpie; do
	bin=$TMP/c-$kind
	build_layout $kind "$bin" || { fail "c_${kind}_builds"; continue; }
	if ! perf record -q -e cpu-clock -F 10000 -o "$TMP/$kind.data" "$bin" "$long" >/dev/null 2>"$TMP/perf.err"; then
		skip "c_${kind}_perf_record" "$(head -2 "$TMP/perf.err")"
		continue
	fi
	# The executable mapping of the binary, as the MMAP2 event gives it.
	read -r start len pgoff < <(perf script -i "$TMP/$kind.data" --show-mmap-events 2>/dev/null |
		sed -n "s|.*PERF_RECORD_MMAP2 .*\[\(0x[0-9a-f]*\)(\(0x[0-9a-f]*\)) @ \([0-9a-fx]*\) .*\]: r-xp $bin\$|\1 \2 \3|p" | head -1)
	[ -n "${start:-}" ] || { fail "c_${kind}_mmap_event" "no r-xp MMAP2 of $bin"; continue; }
	perf script -i "$TMP/$kind.data" -F ip,sym 2>/dev/null | awk '$2 == "crunch" { print $1 }' |
		sort | uniq -c >"$TMP/$kind.ips"
	bid=$(readelf -n "$bin" | sed -n 's/.*Build ID: //p')
	{
		printf '{ "binary": "%s", "build_id": "%s", "start": "%s", "limit": "%s", "offset": "%s", "samples": [\n' \
			"$bin" "$bid" "$start" "$((start + len))" "$((pgoff))"
		awk -v s=$((start)) 'NR > 1 { printf "," }
			{ printf "{ \"stack\": [{ \"addr\": %.0f, \"func\": \"crunch\" }], \"value\": %d }\n", ("0x" $2) - s, $1 }' "$TMP/$kind.ips"
		echo "] }"
	} >"$TMP/$kind.json"
	node tests/report/annotate_pprof.js "$TMP/$kind.json" "$TMP/$kind.pb" || { fail "c_${kind}_converts"; continue; }
	"$TALLY" annotate "$TMP/$kind.pb" >"$TMP/c-$kind.txt" 2>&1
	ours=$(sed -n 's/^ *\([0-9.]*\)% .* \([0-9a-f]*\):  .*/\2 \1/p' "$TMP/c-$kind.txt")
	theirs=$(perf annotate -i "$TMP/$kind.data" --stdio -s crunch 2>/dev/null |
		sed -n 's/^ *\([0-9.]*\) : *\([0-9a-f]*\):.*/\2 \1/p' | awk '$2 != "0.00"')
	[ "$(wc -l <<<"$ours")" -ge 2 ] && [ "$ours" = "$theirs" ] && pass "c_${kind}_annotate_matches_perf_annotate" ||
		fail "c_${kind}_annotate_matches_perf_annotate" "ours: $(echo $ours) perf: $(echo $theirs) $(head -3 "$TMP/c-$kind.txt" | tr '\n' ' ')"

	# Unsymbolized (address-only locations, as perf_to_profile writes them): the report
	# names each pc as BINARY+VADDR, which llvm-symbolizer puts in crunch.
	sed 's/, "func": "crunch"//' "$TMP/$kind.json" >"$TMP/$kind-anon.json"
	node tests/report/annotate_pprof.js "$TMP/$kind-anon.json" "$TMP/$kind-anon.pb"
	addrs=$("$TALLY" report "$TMP/$kind-anon.pb" | sed -n "s/.*  $(basename "$bin")+\(0x[0-9a-f]*\)\$/\1/p" | sort -u)
	funcs=$(llvm-symbolizer --no-inlines --obj="$bin" $addrs | awk 'NR % 3 == 1' | sort -u)
	[ "$(wc -w <<<"$addrs")" -ge 2 ] && [ "$funcs" = crunch ] && pass "c_${kind}_unsymbolized_report_gives_vaddrs" ||
		fail "c_${kind}_unsymbolized_report_gives_vaddrs" "$(echo $addrs) -> $(echo $funcs)"

	# foreign -> tally -> pprof: the mapping is the kernel's MMAP2 event again, with the
	# build-id readelf reports; -> tally: the same listing, with or without the binary.
	"$TALLY" export -f pprof "$TMP/$kind.pb" -o "$TMP/$kind-re.pb.gz"
	want=$(printf '0x%x/0x%x/0x%x %s %s' $((start)) $((start + len)) $((pgoff)) "$bin" "$bid")
	got=$(go tool pprof -raw "$TMP/$kind-re.pb.gz" 2>/dev/null | sed -n '/^Mappings/,$s/^[0-9]*: \([^ ]* [^ ]* [^ ]*\).*/\1/p')
	[ -n "$bid" ] && grep -qxF "$want" <<<"$got" && pass "c_${kind}_export_mapping_is_the_mmap_event_with_build_id" ||
		fail "c_${kind}_export_mapping_is_the_mmap_event_with_build_id" "want $want; go tool pprof -raw: $(echo $got)"
	"$TALLY" annotate "$TMP/$kind-re.pb.gz" >"$TMP/c-$kind-re.txt" 2>&1
	mv "$bin" "$bin.moved"
	"$TALLY" annotate --binary "$bin.moved" "$TMP/$kind-re.pb.gz" >"$TMP/c-$kind-moved.txt" 2>&1
	mv "$bin.moved" "$bin"
	grep -qE '^ *[0-9.]+% ' "$TMP/c-$kind.txt" && cmp -s "$TMP/c-$kind.txt" "$TMP/c-$kind-re.txt" &&
		cmp -s <(sed 2d "$TMP/c-$kind.txt") <(sed 2d "$TMP/c-$kind-moved.txt") &&
		pass "c_${kind}_foreign_round_trip_is_exact" ||
		fail "c_${kind}_foreign_round_trip_is_exact" "$(diff "$TMP/c-$kind.txt" "$TMP/c-$kind-moved.txt" | head -4 | tr '\n' ' ')"

	# Gone from its path but kept in perf's build-id cache: the foreign file still reads as
	# vaddrs (the cached copy has the segments).
	cached=$TMP/buildid-cache/.build-id/${bid:0:2}/${bid:2}
	mkdir -p "$cached" && cp "$bin" "$cached/elf"
	mv "$bin" "$bin.moved"
	PERF_BUILDID_DIR=$TMP/buildid-cache "$TALLY" annotate --binary "$bin.moved" "$TMP/$kind.pb" >"$TMP/c-$kind-cache.txt" 2>&1
	# (perf record itself may have left a copy in ~/.debug: look in an empty cache instead)
	mkdir -p "$TMP/empty-cache"
	PERF_BUILDID_DIR=$TMP/empty-cache "$TALLY" annotate --binary "$bin.moved" "$TMP/$kind.pb" >"$TMP/c-$kind-nocache.txt" 2>&1
	mv "$bin.moved" "$bin"
	grep -qE '^ *[0-9.]+% ' "$TMP/c-$kind-cache.txt" &&
		cmp -s <(sed 2d "$TMP/c-$kind.txt") <(sed 2d "$TMP/c-$kind-cache.txt") &&
		! cmp -s "$TMP/c-$kind-cache.txt" "$TMP/c-$kind-nocache.txt" &&
		pass "c_${kind}_binary_found_in_build_id_cache" ||
		fail "c_${kind}_binary_found_in_build_id_cache" "$(head -3 "$TMP/c-$kind-cache.txt" | tr '\n' ' ')"

	# tally record -> pprof -> tally: the listing of the recording itself, again with the
	# binary in place and moved away.
	if "$TALLY" record -o "$TMP/$kind-rec.data" -- "$bin" "$long" >/dev/null 2>"$TMP/rec.err"; then
		"$TALLY" annotate --function crunch "$TMP/$kind-rec.data" >"$TMP/rec-$kind.txt" 2>&1
		"$TALLY" export -f pprof "$TMP/$kind-rec.data" -o "$TMP/$kind-rec.pb.gz"
		"$TALLY" annotate --function crunch "$TMP/$kind-rec.pb.gz" >"$TMP/rec-$kind-re.txt" 2>&1
		# go tool pprof -proto rewrites the file; tally's mapping comments survive it.
		go tool pprof -symbolize=none -proto "$TMP/$kind-rec.pb.gz" >"$TMP/$kind-rec-go.pb.gz" 2>/dev/null
		mv "$bin" "$bin.moved"
		"$TALLY" annotate --function crunch --binary "$bin.moved" "$TMP/$kind-rec.pb.gz" >"$TMP/rec-$kind-moved.txt" 2>&1
		"$TALLY" annotate --function crunch --binary "$bin.moved" "$TMP/$kind-rec-go.pb.gz" >"$TMP/rec-$kind-go.txt" 2>&1
		mv "$bin.moved" "$bin"
		grep -qE '^ *[0-9.]+% ' "$TMP/rec-$kind.txt" && cmp -s "$TMP/rec-$kind.txt" "$TMP/rec-$kind-re.txt" &&
			cmp -s <(sed 2d "$TMP/rec-$kind.txt") <(sed 2d "$TMP/rec-$kind-moved.txt") &&
			cmp -s "$TMP/rec-$kind-moved.txt" "$TMP/rec-$kind-go.txt" &&
			pass "c_${kind}_recording_round_trip_is_exact" ||
			fail "c_${kind}_recording_round_trip_is_exact" "$(diff "$TMP/rec-$kind.txt" "$TMP/rec-$kind-moved.txt" | head -4 | tr '\n' ' ')"
	else
		fail "c_${kind}_records" "$(tail -2 "$TMP/rec.err")"
	fi
done
