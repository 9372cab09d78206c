/*
 * The runtime version query of include/tally/tally.h: the libtally this test links says
 * the version of the header it was built with, in words and in numbers that agree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tally/tally.h"

static void version_string_is_the_headers(void **state)
{
	assert_string_equal(tally_version(), TALLY_VERSION);
}

static void version_numbers_begin_the_string(void **state)
{
	assert_int_equal(tally_version_major(), TALLY_VERSION_MAJOR);
	assert_int_equal(tally_version_minor(), TALLY_VERSION_MINOR);
	char prefix[32];
	int n = snprintf(prefix, sizeof(prefix), "%u.%u.", (unsigned)tally_version_major(),
			 (unsigned)tally_version_minor());
	assert_int_equal(strncmp(tally_version(), prefix, (size_t)n), 0);
	assert_true(strlen(tally_version()) > (size_t)n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(version_string_is_the_headers),
		cmocka_unit_test(version_numbers_begin_the_string),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
