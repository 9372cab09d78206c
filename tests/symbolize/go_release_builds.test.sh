# Go release builds nobody here made: esbuild's Linux binaries from the npm registry, built
# by its author with Go 1.16.3, 1.17.2, 1.19, 1.20.12, 1.23.1 and 1.26.5 and stripped (no
# .symtab, no DWARF: only Go's own .gopclntab). They span the table's layouts (1.16's, 1.18's,
# 1.20's) and where the inline trees lie (.rodata in 1.16 and 1.17; go:func.* found through
# the module data, in .noptrdata, then in .go.module from 1.26). The oracle is the Go runtime
# reading its own tables: a SIGQUIT traceback (GOTRACEBACK=system) of each binary, blocked
# reading its standard input, gives every goroutine's frames with their pcs, and the calls
# inlined at each; tally symbolize must give the same names, files and lines, inlined frames
# included (tests/symbolize/go_traceback.py).
. tests/lib.sh

mkfifo "$TMP/stdin"
for pkg in esbuild-go1.16 esbuild-go1.17 esbuild-go1.19 esbuild-go1.20 esbuild-go1.23 esbuild-go1.26; do
	bin="$NPM_DIR/node_modules/$pkg/bin/esbuild"
	name=go_release_build_${pkg#esbuild-}
	if [ ! -x "$bin" ]; then
		skip "$name" "no $bin (run scripts/install-deps.sh test)"
		continue
	fi
	GOTRACEBACK=system "$bin" <"$TMP/stdin" >/dev/null 2>"$TMP/$pkg.trace" &
	pid=$!
	exec 3>"$TMP/stdin"
	# Blocked in read(0, ...) on some thread: its goroutines are where they will stay.
	for _ in $(seq 100); do
		grep -qs '^0 0x0 ' /proc/$pid/task/*/syscall && break
		sleep 0.05
	done
	kill -QUIT $pid
	wait $pid
	exec 3>&-
	python3 tests/symbolize/go_traceback.py "$TMP/$pkg.trace" "$TMP/$pkg.addrs" &&
		"$TALLY" symbolize --json -e "$bin" <"$TMP/$pkg.addrs" >"$TMP/$pkg.json" 2>"$TMP/$pkg.err" &&
		python3 tests/symbolize/go_traceback.py "$TMP/$pkg.trace" "$TMP/$pkg.addrs" "$TMP/$pkg.json" \
			>"$TMP/$pkg.out" 2>&1
	out=$(cat "$TMP/$pkg.out" "$TMP/$pkg.err" 2>/dev/null)
	# At least the read's own inlined calls (syscall.Read in internal/poll's) are there.
	inl=$(sed -n 's/^frames [0-9]* inlined \([0-9]*\)$/\1/p' "$TMP/$pkg.out")
	[ "${inl:-0}" -ge 3 ] && pass "${name}_equals_gos_traceback ($out)" ||
		fail "${name}_equals_gos_traceback" "$out $(head -3 "$TMP/$pkg.trace")"
done
