/*
 * libFuzzer target for the CU table reader (solana/cu_bench.h): arbitrary bytes as a
 * compute_units.md. A table that parses is written again against itself, which looks up
 * every row, and must read back to the same rows.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solana/cu_bench.h"

static void write_again(const struct sol_bench *b)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return;
	sol_bench_write(f, "date", "version", b, b);
	if (fclose(f)) {
		free(text);
		return;
	}
	struct sol_bench again;
	if (sol_bench_parse("again.md", text, len, &again) || again.n != b->n)
		abort();
	for (size_t i = 0; i < b->n; i++)
		if (strcmp(again.rows[i].name, b->rows[i].name) || again.rows[i].cu != b->rows[i].cu)
			abort();
	sol_bench_free(&again);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sol_bench b;
	if (sol_bench_parse("fuzz.md", (const char *)data, size, &b))
		return 0;
	if (sol_bench_changed(&b, &b))
		abort();
	write_again(&b);
	sol_bench_free(&b);
	return 0;
}
