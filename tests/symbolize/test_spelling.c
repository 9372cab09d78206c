/*
 * LLVM's spelling of libiberty's demangled names: lambdas, unnamed types and clone
 * suffixes, nesting, and malformed text (which must come back unchanged, and promptly).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "symbolize/symbolize.h"

static const char *spell(const char *name)
{
	static char buf[256];
	return sym_llvm_spelling(name, buf, sizeof(buf));
}

static void spelling_lambdas_count_from_zero_after_the_first(void **state)
{
	assert_string_equal(spell("main::{lambda(int)#1}::operator()(int) const"),
			    "main::'lambda'(int)::operator()(int) const");
	assert_string_equal(spell("f<main::{lambda(int)#2}>(main::{lambda(int)#3})"),
			    "f<main::'lambda0'(int)>(main::'lambda1'(int))");
	assert_string_equal(spell("{unnamed type#1} {unnamed type#2}"), "'unnamed' 'unnamed0'");
}

static void spelling_clone_suffixes_join_in_parentheses(void **state)
{
	assert_string_equal(spell("work(int) [clone .isra.0] [clone .cold]"), "work(int) (.isra.0.cold)");
	assert_string_equal(spell("work [clone .constprop.0]"), "work (.constprop.0)");
}

static void spelling_plain_and_malformed_names_are_kept(void **state)
{
	const char *plain = "std::vector<int>::push_back(int const&)";
	assert_ptr_equal(spell(plain), plain);
	assert_string_equal(spell("x [clone .cold"), "x [clone .cold");
	assert_string_equal(spell("{lambda(int"), "{lambda(int");
	assert_string_equal(spell("{lambda(int)}"), "{lambda(int)}");
}

static void spelling_too_long_for_the_buffer_keeps_the_name(void **state)
{
	char small[8];
	const char *name = "main::{lambda(int)#1}";
	assert_ptr_equal(sym_llvm_spelling(name, small, sizeof(small)), name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(spelling_lambdas_count_from_zero_after_the_first),
		cmocka_unit_test(spelling_clone_suffixes_join_in_parentheses),
		cmocka_unit_test(spelling_plain_and_malformed_names_are_kept),
		cmocka_unit_test(spelling_too_long_for_the_buffer_keeps_the_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
