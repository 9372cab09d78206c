/*
 * A plan for a batch. Lookups build the unit index they need on first use, and a thread
 * whose unit another thread is building would otherwise wait for it: with threads taking
 * consecutive stretches of a sorted batch, that is most of the time, since neighbouring
 * addresses share units. Given the batch up front, a thread that would wait builds the
 * next unit of the batch nobody has started instead, so every thread indexes all the time
 * and the waits end by themselves.
 */
#include <errno.h>
#include <stdlib.h>

#include "symbolize/symbolize_internal.h"

/* The distinct units the addresses fall in, in the order of their first address. */
static size_t wanted_units(struct sym_module *m, const uint64_t *addrs, size_t n, uint32_t *out)
{
	size_t nunits = m->dwarf->nunits, k = 0;
	bool *want = calloc(nunits ? nunits : 1, sizeof(*want));
	if (!want)
		return 0;
	const struct sym_cu_range *r = NULL; /* the last address's: in a sorted batch, most
					      * often the next one's too */
	for (size_t i = 0; i < n; i++) {
		if (!r || addrs[i] < r->lo || addrs[i] >= r->hi)
			r = sym_cu_range_of(m, addrs[i]);
		if (r && !want[r->unit]) {
			want[r->unit] = true;
			out[k++] = r->unit;
		}
	}
	free(want);
	return k;
}

int sym_prepare(struct sym_module *m, const uint64_t *addrs, size_t n)
{
	sym_front_end(m); /* a batch reads most units: read them all */
	free(m->plan);
	m->plan = NULL;
	m->nplan = 0;
	if (!m->dwarf)
		return 0;
	m->plan = malloc((m->dwarf->nunits ? m->dwarf->nunits : 1) * sizeof(*m->plan));
	if (!m->plan)
		return -ENOMEM;
	m->nplan = wanted_units(m, addrs, n, m->plan);
	atomic_init(&m->plan_next, 0);
	return 0;
}

bool sym_build_planned(struct sym_module *m)
{
	for (size_t i; (i = atomic_fetch_add(&m->plan_next, 1)) < m->nplan;)
		if (sym_unit_build_ahead(m, m->plan[i]))
			return true;
	return false;
}
