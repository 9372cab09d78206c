/*
 * Building many unit indexes at once. A large batch of addresses touches most units of a
 * module, and indexing them is most of the work; units are independent, so worker threads
 * take them from a shared counter. Workers go through the units from the batch's last
 * address to its first and never wait for a unit another thread builds: a caller running
 * this on a thread of its own while it looks up the batch in order (building on demand)
 * meets the workers in the middle, and printing overlaps indexing.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "symbolize/symbolize_internal.h"

#define MAX_THREADS 16

struct work {
	struct sym_module *m;
	uint32_t *units;
	size_t n;
	atomic_size_t next;
};

static void *worker(void *arg)
{
	struct work *w = arg;
	for (size_t i; (i = atomic_fetch_add(&w->next, 1)) < w->n;)
		sym_unit_build_ahead(w->m, w->units[w->n - 1 - i]);
	return NULL;
}

/* The distinct units the addresses fall in, in the order of their first address. */
static size_t wanted_units(struct sym_module *m, const uint64_t *addrs, size_t n, uint32_t *out)
{
	size_t nunits = m->dwarf->nunits, k = 0;
	bool *want = calloc(nunits ? nunits : 1, sizeof(*want));
	if (!want)
		return 0;
	for (size_t i = 0; i < n; i++) {
		int32_t u = sym_unit_of(m, addrs[i]);
		if (u >= 0 && !want[u]) {
			want[u] = true;
			out[k++] = (uint32_t)u;
		}
	}
	free(want);
	return k;
}

int sym_prepare(struct sym_module *m, const uint64_t *addrs, size_t n, unsigned threads)
{
	sym_front_end(m); /* a batch reads most units: read them all */
	if (!m->dwarf || threads < 1)
		return 0;
	struct work w = { .m = m };
	w.units = malloc((m->dwarf->nunits ? m->dwarf->nunits : 1) * sizeof(*w.units));
	if (!w.units)
		return -ENOMEM;
	w.n = wanted_units(m, addrs, n, w.units);
	atomic_init(&w.next, 0);
	if (threads > MAX_THREADS)
		threads = MAX_THREADS;
	if (threads > w.n)
		threads = (unsigned)w.n;
	pthread_t th[MAX_THREADS];
	unsigned started = 0;
	while (started + 1 < threads && !pthread_create(&th[started], NULL, worker, &w))
		started++;
	worker(&w); /* this thread works too */
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	free(w.units);
	return 0;
}
