/*
 * The folded-stacks reader: kinds from suffixes, CRLF, counts, and the errors it gives.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "base/err.h"
#include "profile/profile.h"
#include "profile/read.h"

static struct prof *read_ok(const char *text)
{
	struct prof *p = NULL;
	assert_true(prof_sniff_folded(text, strlen(text)));
	int rc = prof_read_folded("t.folded", text, strlen(text), &p);
	if (rc)
		fail_msg("%s", err_msg());
	return p;
}

static void read_err(const char *text, const char *msg)
{
	struct prof *p;
	assert_int_not_equal(prof_read_folded("t.folded", text, strlen(text), &p), 0);
	assert_string_equal(err_msg(), msg);
}

static void folded_suffixes_give_kinds_and_crlf_is_a_line_end(void **state)
{
	struct prof *p = read_ok("\r\nmain;mix_[i];sys_read_[k] 7\r\nmain;x_[w] 2\nmain;js_[j] 1\n");
	uint32_t main_ = prof_node_at(p, PROF_ROOT)->first_child;
	/* children by label: js, mix, x_[w] */
	uint32_t js = prof_node_at(p, main_)->first_child;
	uint32_t mix = prof_node_at(p, js)->next_sibling;
	uint32_t sys = prof_node_at(p, mix)->first_child;
	assert_string_equal(prof_frame_label(p, prof_node_at(p, mix)->frame), "mix");
	assert_int_equal(prof_frame_at(p, prof_node_at(p, mix)->frame)->kind, PROF_INLINE);
	assert_string_equal(prof_frame_label(p, prof_node_at(p, sys)->frame), "sys_read");
	assert_int_equal(prof_frame_at(p, prof_node_at(p, sys)->frame)->kind, PROF_KERNEL);
	assert_int_equal(prof_self(p, sys)[0], 7);
	/* JIT frames as FlameGraph's stackcollapse-perf marks them */
	assert_string_equal(prof_frame_label(p, prof_node_at(p, js)->frame), "js");
	assert_int_equal(prof_frame_at(p, prof_node_at(p, js)->frame)->kind, PROF_JIT);
	/* Other FlameGraph annotations (the waker's) stay part of the name. */
	uint32_t x = prof_node_at(p, mix)->next_sibling;
	assert_string_equal(prof_frame_label(p, prof_node_at(p, x)->frame), "x_[w]");
	int64_t t;
	prof_grand_total(p, &t);
	assert_int_equal(t, 10);
	prof_free(p);
}

static void folded_names_may_hold_spaces_and_any_bytes(void **state)
{
	struct prof *p = read_ok("operator new(unsigned long);a b\xff 3\n");
	uint32_t a = prof_node_at(p, prof_node_at(p, PROF_ROOT)->first_child)->first_child;
	assert_string_equal(prof_frame_label(p, prof_node_at(p, a)->frame), "a b\xff");
	prof_free(p);
}

/* Any count tally writes reads back: merged stacks may sum to 19 digits (found by
 * fuzz_folded), and a profile's total stays below 2^63. */
static void folded_counts_up_to_int64_max(void **state)
{
	struct prof *p = read_ok("b 9223372036854775807\n");
	prof_free(p);
	p = read_ok("a 555555555555555555\na 555555555555555555\n");
	int64_t t;
	prof_grand_total(p, &t);
	assert_int_equal(t, 1111111111111111110);
	prof_free(p);
}

static void folded_errors_name_line_and_problem(void **state)
{
	read_err("a;b 1\na;b\n", "t.folded: line 2: expected 'frame;frame;... COUNT'");
	read_err("a;b 1\n;b 2\n", "t.folded: line 2: empty frame name at column 1");
	read_err("a;b 1\nb; 2\n", "t.folded: line 2: empty frame name at column 3");
	read_err("a 9223372036854775808\n", "t.folded: line 1: expected 'frame;frame;... COUNT'");
	read_err("a 12345678901234567890\n", "t.folded: line 1: expected 'frame;frame;... COUNT'");
	read_err("\n\n", "t.folded: no stacks (empty profile)");
	read_err("a 999999999999999999\nb 999999999999999999\nc 999999999999999999\n"
		 "d 999999999999999999\ne 999999999999999999\nf 999999999999999999\n"
		 "g 999999999999999999\nh 999999999999999999\ni 999999999999999999\n"
		 "j 999999999999999999\n",
		 "t.folded: line 10: total weight exceeds 2^63");
	assert_false(prof_sniff_folded("<svg/>\n", 7));
	assert_false(prof_sniff_folded("a 1\0", 4));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(folded_suffixes_give_kinds_and_crlf_is_a_line_end),
		cmocka_unit_test(folded_names_may_hold_spaces_and_any_bytes),
		cmocka_unit_test(folded_counts_up_to_int64_max),
		cmocka_unit_test(folded_errors_name_line_and_problem),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
