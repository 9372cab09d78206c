/*
 * Fuzzes the perf.data reader: header, attributes, features (build-ids, PMU mappings) and
 * every record decoded in time order. Each input is read twice: as it is (either layout,
 * by its header), and as the record stream of the pipe format behind a pipe header, so that every input
 * also exercises HEADER_ATTR/HEADER_BUILD_ID records and the trailing payloads of
 * tracing-data and AUX records. The plain image is also read as a file (a memfd), the way
 * reports read one: records with pread, stack copies a prefix at a time, the rest of each
 * on demand.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perf/perf.h"

struct walk {
	struct perf_data *d;
	uint64_t sum;
};

static int each(const struct perf_event_rec *ev, void *arg)
{
	struct walk *w = arg;
	uint64_t *sum = &w->sum;
	for (uint64_t i = 0; i < ev->nr_callchain; i++)
		*sum += perf_callchain_at(ev, i);
	if (ev->stack && ev->stack_size)
		*sum += ev->stack[ev->stack_size - 1];
	const uint8_t *all;
	uint64_t n;
	if (ev->stack_total && !perf_sample_stack(w->d, ev, ev->stack_total, &all, &n))
		*sum += all[ev->stack_total - 1];
	if (ev->filename)
		*sum += (uint8_t)ev->filename[0];
	if (ev->raw_data && ev->raw_size) /* PERF_SAMPLE_RAW: all of it must be there */
		*sum += ev->raw_data[0] + ev->raw_data[ev->raw_size - 1];
	return 0;
}

static uint64_t read_open(struct perf_data *d)
{
	struct walk w = { d, 0 };
	perf_data_each(d, each, &w);
	for (size_t i = 0; i < d->nbuild_ids; i++)
		w.sum += (uint8_t)d->build_ids[i].filename[0];
	for (size_t i = 0; i < d->npmus; i++)
		w.sum += (uint8_t)perf_data_pmu_name(d, d->pmus[i].type)[0];
	perf_data_close(d);
	return w.sum;
}

static uint64_t read_all(const uint8_t *data, size_t size)
{
	struct perf_data *d;
	return perf_data_open_mem("fuzz", data, size, &d) ? 0 : read_open(d);
}

static uint64_t read_file(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	struct perf_data *d;
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	return perf_data_open_fd("fuzz", fd, &d) ? 0 : read_open(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t sum = read_all(data, size) + read_file(data, size);
	uint8_t *pipe = malloc(16 + size);
	if (!pipe)
		return 0;
	memcpy(pipe, "PERFILE2\x10\0\0\0\0\0\0\0", 16);
	memcpy(pipe + 16, data, size);
	sum += read_all(pipe, 16 + size);
	free(pipe);
	return (int)(sum & 0);
}
