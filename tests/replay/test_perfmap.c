/*
 * perf-PID.map reading: both spellings of hex, names with spaces, later lines winning over
 * the parts of earlier ones they overlap, and hostile lines left out with a warning that
 * names the file and line (expected values worked out by hand from the lines).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "replay/sources/perfmap/perfmap.h"

struct read {
	struct replay_perfmap *m;
	char *warnings;
	size_t wlen;
};

static void read_map(const char *text, size_t len, struct read *r)
{
	FILE *in = fmemopen((void *)text, len, "r");
	FILE *warn = open_memstream(&r->warnings, &r->wlen);
	assert_non_null(in);
	assert_non_null(warn);
	assert_int_equal(replay_perfmap_read(in, "/tmp/perf-7.map", warn, &r->m), 0);
	fclose(in);
	fclose(warn);
}

static void done(struct read *r)
{
	replay_perfmap_free(r->m);
	free(r->warnings);
}

/* The name at pc, "-" when none; *start too. */
static const char *at(const struct read *r, uint64_t pc, uint64_t *start)
{
	uint64_t s = 0;
	const char *n = replay_perfmap_find(r->m, pc, &s);
	if (start)
		*start = s;
	return n ? n : "-";
}

static void perfmap_reads_both_hex_spellings_and_names_with_spaces(void **state)
{
	(void)state;
	static const char text[] = "1000 10 JS:*fib app.js:1:13\n"
				   "0x2000 0x20 void Foo.bar(int, long)\r\n"
				   "\n";
	struct read r;
	read_map(text, sizeof(text) - 1, &r);
	uint64_t start;
	assert_string_equal(at(&r, 0x1000, &start), "JS:*fib app.js:1:13");
	assert_int_equal(start, 0x1000);
	assert_string_equal(at(&r, 0x100f, NULL), "JS:*fib app.js:1:13");
	assert_string_equal(at(&r, 0x1010, NULL), "-");
	assert_string_equal(at(&r, 0x201f, &start), "void Foo.bar(int, long)");
	assert_int_equal(start, 0x2000);
	assert_string_equal(at(&r, 0xfff, NULL), "-");
	assert_string_equal(r.warnings, "");
	done(&r);
}

static void perfmap_later_lines_win_where_they_overlap(void **state)
{
	(void)state;
	/* old covers 0x100-0x200; new takes 0x140-0x180 out of its middle; newer reuses
	 * 0x1c0-0x240, past old's end; last repeats new's range exactly. */
	static const char text[] = "100 100 old\n"
				   "140 40 new\n"
				   "1c0 80 newer\n"
				   "140 40 last\n";
	struct read r;
	read_map(text, sizeof(text) - 1, &r);
	uint64_t start;
	assert_string_equal(at(&r, 0x13f, &start), "old");
	assert_int_equal(start, 0x100);
	assert_string_equal(at(&r, 0x140, NULL), "last");
	assert_string_equal(at(&r, 0x17f, NULL), "last");
	assert_string_equal(at(&r, 0x180, &start), "old");
	assert_int_equal(start, 0x100);
	assert_string_equal(at(&r, 0x1bf, NULL), "old");
	assert_string_equal(at(&r, 0x1c0, &start), "newer");
	assert_int_equal(start, 0x1c0);
	assert_string_equal(at(&r, 0x23f, NULL), "newer");
	assert_string_equal(at(&r, 0x240, NULL), "-");
	done(&r);
}

static void perfmap_hostile_lines_are_left_out_with_a_warning(void **state)
{
	(void)state;
	static const char text[] = "zz 10 garbage\n"                 /* 1: not hex */
				   "1000 10\n"                       /* 2: no name */
				   "ffffffffffffff00 200 wraps\n"    /* 3: past 2^64 */
				   "11112222333344445 10 long\n"     /* 4: 17 digits */
				   "3000 0 empty\n"                  /* 5: size 0 */
				   "4000 10 n\0ul\n"                 /* 6: a NUL byte */
				   "5000,10 comma\n"                 /* 7: not a blank */
				   "6000 10 good\n"                  /* 8 */
				   "7000 10 cut sho";                /* 9: no newline */
	struct read r;
	read_map(text, sizeof(text) - 1, &r);
	assert_string_equal(r.warnings,
		"tally: /tmp/perf-7.map: line 1: expected START SIZE NAME, hexadecimal numbers\n"
		"tally: /tmp/perf-7.map: line 2: no name after START SIZE\n"
		"tally: /tmp/perf-7.map: line 3: START + SIZE runs past the end of the address space\n"
		"tally: /tmp/perf-7.map: line 4: a number past 2^64\n"
		"tally: /tmp/perf-7.map: line 5: size 0\n"
		"tally: /tmp/perf-7.map: line 6: a NUL byte in the line\n"
		"tally: /tmp/perf-7.map: line 7: expected START SIZE NAME, hexadecimal numbers\n"
		"tally: /tmp/perf-7.map: line 9: cut short (no newline at the end): left out\n");
	assert_string_equal(at(&r, 0x6008, NULL), "good");
	assert_string_equal(at(&r, 0x1000, NULL), "-");
	assert_string_equal(at(&r, 0xffffffffffffff10, NULL), "-");
	assert_string_equal(at(&r, 0x4000, NULL), "-");
	assert_string_equal(at(&r, 0x7000, NULL), "-");
	done(&r);
}

static void perfmap_line_longer_than_the_window_is_skipped_alone(void **state)
{
	(void)state;
	size_t big = 200000;
	char *text = malloc(big + 64);
	assert_non_null(text);
	int n = sprintf(text, "1000 10 ");
	memset(text + n, 'x', big);
	n += (int)big;
	n += sprintf(text + n, "\n2000 10 after\n");
	struct read r;
	read_map(text, (size_t)n, &r);
	assert_string_equal(r.warnings, "tally: /tmp/perf-7.map: line 1: longer than 64 KiB: left out\n");
	assert_string_equal(at(&r, 0x1000, NULL), "-");
	assert_string_equal(at(&r, 0x2000, NULL), "after");
	done(&r);
	free(text);
}

static void perfmap_warnings_stop_at_ten_and_are_counted(void **state)
{
	(void)state;
	char text[2000] = "";
	for (int i = 0; i < 25; i++)
		strcat(text, "bad\n");
	struct read r;
	read_map(text, strlen(text), &r);
	assert_non_null(strstr(r.warnings, "line 10: "));
	assert_null(strstr(r.warnings, "line 11: "));
	assert_non_null(strstr(r.warnings, "tally: /tmp/perf-7.map: 15 more bad lines left out\n"));
	done(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(perfmap_reads_both_hex_spellings_and_names_with_spaces),
		cmocka_unit_test(perfmap_later_lines_win_where_they_overlap),
		cmocka_unit_test(perfmap_hostile_lines_are_left_out_with_a_warning),
		cmocka_unit_test(perfmap_line_longer_than_the_window_is_skipped_alone),
		cmocka_unit_test(perfmap_warnings_stop_at_ten_and_are_counted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
