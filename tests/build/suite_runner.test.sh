# tests/run.sh itself, on a tree of made-up tests in $TMP: what it counts (a cmocka skip is
# a skip, and a failure under CI=true; a test that exits non-zero after passing, as a leak
# found by LeakSanitizer does, fails; a script that dies without a FAIL line fails) and when
# it runs what (a test's second run starts after its first has ended; a script marked
# "# suite: alone" runs with nothing beside it). cmocka's own summary lines are the input.
. tests/lib.sh

T=$TMP/tree
mkdir -p "$T/tests/fake" "$T/b1/tests/fake" "$T/b2/tests/fake"
cp "$ROOT/tests/run.sh" "$T/tests/run.sh"
cat >"$TMP/unit.c" <<'C'
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
static void passes(void **s) { (void)s; }
static void skips(void **s) { (void)s; skip(); }
int main(int argc, char **argv)
{
	const struct CMUnitTest t[] = { cmocka_unit_test(passes), cmocka_unit_test(skips) };
	int rc = cmocka_run_group_tests(t, NULL, NULL);
	/* A leak report after a clean summary: the process fails, as LeakSanitizer makes it. */
	return strstr(argv[0], "leaks") ? 23 : rc;
}
C
for b in b1 b2; do
	gcc -Wall -Werror -o "$T/$b/tests/fake/test_skips" "$TMP/unit.c" -lcmocka &&
		gcc -Wall -Werror -o "$T/$b/tests/fake/test_leaks" "$TMP/unit.c" -lcmocka ||
		{ fail suite_runner_builds "gcc with cmocka"; exit 0; }
done
# Each script logs its start and end (in $TMP/log, one line each, with the build).
log() { printf 'printf "%%s %%s %%s\\n" %s "$BUILD" "$(date +%%s%%N)" >>"%s"\n' "$1" "$TMP/log"; }
{ log start_ok; echo 'echo "PASS: one"; sleep 0.3'; log end_ok; } >"$T/tests/fake/ok.test.sh"
{ log start_dies; echo 'echo "PASS: two"; exit 3'; } >"$T/tests/fake/dies.test.sh"
{
	echo '# suite: alone: checks the runner'
	log start_alone
	echo 'echo "PASS: three"; sleep 0.3'
	log end_alone
} >"$T/tests/fake/solo.test.sh"
echo 'echo "FAIL: five: the reason"' >"$T/tests/fake/fails.test.sh"
for i in 1 2 3 4; do
	{ log "start_w$i"; echo 'echo "SKIP: four: why"; sleep 0.2'; log "end_w$i"; } >"$T/tests/fake/w$i.test.sh"
done

( cd "$T" && JOBS=4 CI= TESTS= bash tests/run.sh b1 b2 ) >"$TMP/plain.out" 2>&1
rc_plain=$?
( cd "$T" && JOBS=4 CI=true TESTS=test_skips bash tests/run.sh b1 ) >"$TMP/ci.out" 2>&1
rc_ci=$?
last() { tail -1 "$1"; }

# Per build: unit 1+1 passed (skips' and leaks'), ok 1, dies 1 (exits 3), solo 1; SKIP: 4
# from w1-w4 and 2 from the unit tests; failures: leaks (exit 23), dies and fails.
[ "$(last "$TMP/plain.out")" = "10 passed, 6 failed, 12 skipped" ] && [ $rc_plain = 1 ] &&
	pass suite_runner_counts_skips_and_failed_exits ||
	fail suite_runner_counts_skips_and_failed_exits "exit $rc_plain: $(last "$TMP/plain.out")"
grep -q 'test_leaks \[b1\]: exited 23' "$TMP/plain.out" &&
	grep -q 'dies.test.sh \[b2\]: exited 3' "$TMP/plain.out" &&
	grep -q 'test_skips: skipped: skips$' "$TMP/plain.out" &&
	pass suite_runner_names_what_failed_and_skipped ||
	fail suite_runner_names_what_failed_and_skipped "$(cat "$TMP/plain.out")"
# The closing list of failures (what a CI log keeps) says why under each one.
sed -n '/^failed:$/,$p' "$TMP/plain.out" | grep -A1 -F 'fails.test.sh [b2]' |
	grep -qx '      FAIL: five: the reason' &&
	sed -n '/^failed:$/,$p' "$TMP/plain.out" | grep -A1 -F 'dies.test.sh [b1]' | grep -qx '      PASS: two' &&
	pass suite_runner_failure_list_says_why ||
	fail suite_runner_failure_list_says_why "$(sed -n '/^failed:$/,$p' "$TMP/plain.out")"
[ "$(last "$TMP/ci.out")" = "1 passed, 1 failed" ] && [ $rc_ci = 1 ] &&
	grep -q 'test_skips: 1 skipped under CI=true' "$TMP/ci.out" &&
	pass suite_runner_fails_unit_skips_under_ci ||
	fail suite_runner_fails_unit_skips_under_ci "exit $rc_ci: $(cat "$TMP/ci.out")"

# Scheduling, from the log: intervals [start, end] of each script run.
python3 - "$TMP/log" >"$TMP/sched.out" 2>&1 <<'PY'
import sys
runs = {}
for line in open(sys.argv[1]):
    ev, build, t = line.split()
    what, name = ev.split('_', 1)
    runs.setdefault((name, build), {})[what] = int(t)
def span(k):
    r = runs[k]
    return r['start'], r.get('end', r['start'])
assert len(runs) == 14, sorted(runs)
# The second build's run of a script starts after the first build's has ended.
for name in {n for n, _ in runs}:
    assert span((name, 'b2'))[0] >= span((name, 'b1'))[1], name
# Side by side: some two waiting scripts overlapped.
ws = [span((f'w{i}', b)) for i in range(1, 5) for b in ('b1', 'b2')]
assert any(a[0] < b[1] and b[0] < a[1] for a in ws for b in ws if a is not b), 'nothing ran in parallel'
# Alone: nothing else overlaps either run of solo.
for b in ('b1', 'b2'):
    s, e = span(('alone', b))
    for k in runs:
        if k[0] != 'alone':
            ks, ke = span(k)
            assert ke <= s or ks >= e, (k, 'overlaps solo', b)
PY
[ $? = 0 ] && pass suite_runner_runs_side_by_side_but_alone_alone ||
	fail suite_runner_runs_side_by_side_but_alone_alone "$(tail -3 "$TMP/sched.out")"
