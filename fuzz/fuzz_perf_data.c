/*
 * Fuzzes the perf.data reader: header, attributes, features (build-ids) and every record
 * decoded in time order. Each input is read twice: as it is (either layout, by its header),
 * and as the record stream of the pipe format behind a pipe header, so that every input
 * also exercises HEADER_ATTR/HEADER_BUILD_ID records and the trailing payloads of
 * tracing-data and AUX records.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

static uint64_t read_all(const uint8_t *data, size_t size)
{
	struct perf_data *d;
	if (perf_data_open_mem("fuzz", data, size, &d))
		return 0;
	uint64_t sum = 0;
	perf_data_each(d, each, &sum);
	for (size_t i = 0; i < d->nbuild_ids; i++)
		sum += (uint8_t)d->build_ids[i].filename[0];
	perf_data_close(d);
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t sum = read_all(data, size);
	uint8_t *pipe = malloc(16 + size);
	if (!pipe)
		return 0;
	memcpy(pipe, "PERFILE2\x10\0\0\0\0\0\0\0", 16);
	memcpy(pipe + 16, data, size);
	sum += read_all(pipe, 16 + size);
	free(pipe);
	return (int)(sum & 0);
}
