/*
 * Ring buffers of perf events: one metadata page, then a power-of-two data area the kernel
 * writes at data_head and we release at data_tail (memory ordering as in
 * include/uapi/linux/perf_event.h). A record that wraps around the end is copied out whole.
 */
#include "perf/perf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/err.h"

int perf_ring_map(struct perf_ring *r, int fd, size_t data_pages)
{
	memset(r, 0, sizeof(*r));
	r->page = (size_t)sysconf(_SC_PAGESIZE);
	r->size = data_pages * r->page;
	r->base = mmap(NULL, r->page + r->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return err_set(-errno, "perf ring buffer: mmap of %zu KiB: %s (raise "
				       "/proc/sys/kernel/perf_event_mlock_kb?)",
			       (r->page + r->size) / 1024, strerror(errno));
	}
	r->scratch = malloc(65536);
	if (!r->scratch) {
		perf_ring_unmap(r);
		return err_set(-ENOMEM, "out of memory");
	}
	r->fd = fd;
	return 0;
}

void perf_ring_unmap(struct perf_ring *r)
{
	if (r->base)
		munmap(r->base, r->page + r->size);
	free(r->scratch);
	r->base = NULL;
	r->scratch = NULL;
}

int perf_ring_drain(struct perf_ring *r, int (*fn)(const void *rec, size_t size, void *arg),
		    void *arg)
{
	struct perf_event_mmap_page *meta = r->base;
	const uint8_t *data = (const uint8_t *)r->base + r->page;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail, released = tail;
	int rc = 0;
	while (tail < head && !rc) {
		size_t at = (size_t)(tail & (r->size - 1));
		struct perf_event_header h;
		for (size_t i = 0; i < sizeof(h); i++)
			((uint8_t *)&h)[i] = data[(at + i) & (r->size - 1)];
		if (h.size < sizeof(h) || h.size > head - tail)
			break;
		const void *rec = data + at;
		if (at + h.size > r->size) {
			size_t first = r->size - at;
			memcpy(r->scratch, data + at, first);
			memcpy(r->scratch + first, data, h.size - first);
			rec = r->scratch;
		}
		rc = fn(rec, h.size, arg);
		tail += h.size;
		/* Hand consumed space back every eighth of the ring, not only at the end: a
		 * drain of a full ring takes long enough for the kernel to fill what it would
		 * otherwise still see as used (it drops samples then). */
		if (tail - released >= r->size / 8) {
			__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
			released = tail;
		}
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	return rc;
}
