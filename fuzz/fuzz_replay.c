/*
 * Fuzzes replay: perf.data parsing, address-space tracking (mmap, fork, exec records) and
 * the unwinder on whatever registers and stack bytes the samples carry, against the real
 * libraries the mmap records may name.
 */
#include <stddef.h>
#include <stdint.h>

#include "replay/unwound.h"

static int each(const struct replay_stack *st, void *arg)
{
	uint64_t *sum = arg;
	for (size_t i = 0; i < st->n; i++)
		*sum += st->frames[i].pc;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_data *d;
	if (perf_data_open_mem("fuzz", data, size, &d))
		return 0;
	uint64_t sum = 0;
	for (int m = UNW_AUTO; m <= UNW_FP; m++)
		replay_unwind_data(d, (enum unw_method)m, each, &sum, NULL, NULL);
	perf_data_close(d);
	return (int)(sum & 0);
}
