/*
 * libFuzzer target for the fixture reader: arbitrary bytes as fixture JSON. A fixture that
 * loads is checked against an empty outcome, which walks every expectation.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "solana/fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sol_fixture *f;
	if (sol_fixture_parse("fuzz.json", (const char *)data, size, &f))
		return 0;
	struct sol_outcome o = { .result = "success" };
	FILE *null = fopen("/dev/null", "w");
	if (null) {
		sol_fixture_check(f, &o, null);
		fclose(null);
	}
	sol_fixture_free(f);
	return 0;
}
