/*
 * libFuzzer target for the fixture reader: arbitrary bytes as fixture JSON. A fixture that
 * loads is checked against an empty outcome, which walks every expectation.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sbpf/fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbpf_fixture *f;
	if (sbpf_fixture_parse("fuzz.json", (const char *)data, size, &f))
		return 0;
	struct sbpf_outcome o = { .result = "success" };
	FILE *null = fopen("/dev/null", "w");
	if (null) {
		sbpf_fixture_check(f, &o, null);
		fclose(null);
	}
	sbpf_fixture_free(f);
	return 0;
}
