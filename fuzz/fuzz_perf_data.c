/*
 * Fuzzes the perf.data reader: header, attributes, features (build-ids) and every record
 * decoded in time order.
 */
#include <stddef.h>
#include <stdint.h>

#include "perf/perf.h"

static int each(const struct perf_event_rec *ev, void *arg)
{
	uint64_t *sum = arg;
	for (uint64_t i = 0; i < ev->nr_callchain; i++)
		*sum += perf_callchain_at(ev, i);
	if (ev->stack && ev->stack_size)
		*sum += ev->stack[ev->stack_size - 1];
	if (ev->filename)
		*sum += (uint8_t)ev->filename[0];
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_data *d;
	if (perf_data_open_mem("fuzz", data, size, &d))
		return 0;
	uint64_t sum = 0;
	perf_data_each(d, each, &sum);
	for (size_t i = 0; i < d->nbuild_ids; i++)
		sum += (uint8_t)d->build_ids[i].filename[0];
	perf_data_close(d);
	return (int)(sum & 0);
}
