/*
 * Front mode: lookups one at a time in a large .debug_info read only its front. Inflating
 * libc6-dbg's compressed .debug_info whole takes 10 ms, more than one lookup should take;
 * reading the root DIE of each of its 2,000 units, once it is inflated (the debug cache's
 * copy), 2 ms, most of a report's time on libc frames.
 * .debug_aranges names the unit an address is probably in (the candidate); units are read
 * up to it, and the unit that owns the address is decided on those exactly as module.c
 * decides it on all of them: the lowest unit whose ranges cover the address. A unit past
 * the front can never be lower than one in it, so when some unit of the front covers the
 * address, that answer is the full reader's answer. Everything else ends front mode and
 * reads the whole section as usual: no candidate, no unit of the front covering the
 * address, a reference leading past the front, DWARF the full reader refuses, a batch
 * (sym_prepare), or more than FRONT_MAX_LOOKUPS lookups. The front grows by doubling, so
 * a module opens its DWARF a handful of times at most.
 */
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "base/search.h"
#include "base/vec.h"
#include "base/radix.h"
#include "symbolize/symbolize_internal.h"

/* Below this much .debug_info in the file, compressed or not, reading it all costs under
 * 4 ms (compressed) or half a millisecond (not). Fuzzing builds read every file so, or the
 * fuzzers' small inputs would never reach this reader. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define FRONT_MIN_SIZE 1
#else
#define FRONT_MIN_SIZE (1u << 20)
#endif
/* Lookups one at a time (a report's distinct addresses: tens to hundreds) stay on the
 * front however many they are, as long as they are not a batch (sym_prepare ends front
 * mode): at 64, a report that touched 70 libc addresses read all of libc6-dbg, 41 ms where
 * the front took 25. The bound remains for callers looking up on many threads, which
 * front_lock serializes. */
#define FRONT_MAX_LOOKUPS 4096
#define INDEX_AFTER 16

struct front_range {
	uint64_t lo, hi, info_off;
	uint64_t reach; /* the highest hi of this range and every one before it */
};

/* Unit indexes built on an earlier front. Frames handed out point into them (file paths
 * live in their line tables), so they stay until the module is closed. */
struct old_units {
	struct sym_unit_index *units;
	size_t n;
};

struct sym_front {
	struct elf_file *src;
	VEC(struct front_range) ranges;
	unsigned lookups;
	bool indexed; /* ranges sorted (index_ranges) */
	VEC(struct old_units) old;
};

/* Large DWARF that the full reader would not refuse wholesale for a reason
 * only found by reading every unit: split DWARF needs .debug_addr in the main file, dwz
 * and supplementary files are named by sections of their own. */
static bool eligible(struct elf_file *src)
{
	const struct elf_section *s = elf_section_by_name(src, ".debug_info");
	return s && s->size >= FRONT_MIN_SIZE && src->type != ET_REL &&
	       src->machine != ELF_EM_BPF && src->machine != ELF_EM_SBPF &&
	       !elf_section_by_name(src, ".debug_addr") &&
	       !elf_section_by_name(src, ".gnu_debugaltlink") &&
	       !elf_section_by_name(src, ".debug_sup");
}

static int keep_range(uint64_t info_off, uint64_t lo, uint64_t hi, void *ctx)
{
	struct sym_front *fr = ctx;
	struct front_range *r = vec_push(&fr->ranges);
	if (!r)
		return -ENOMEM;
	*r = (struct front_range){ lo, hi, info_off, 0 };
	return 0;
}

/* Sorted by start (stably), each with the reach of those before it, so that candidate()
 * looks at the few ranges that can hold an address, not at all of them. Sorting
 * libc6-dbg's 6,000 ranges (its sets are in unit order, not address order) costs as much
 * as 10 scans of them: done at the INDEX_AFTERth lookup, as most reports need a handful.
 * Without memory to sort, nothing changes: the scans go on. */
static void index_ranges(struct sym_front *fr)
{
	struct front_range *r = fr->ranges.v;
	size_t n = fr->ranges.n;
	if (radix_sort(r, n, sizeof(*r), offsetof(struct front_range, lo)))
		return;
	for (size_t i = 0; i < n; i++)
		r[i].reach = i && r[i - 1].reach > r[i].hi ? r[i - 1].reach : r[i].hi;
	fr->indexed = true;
}

bool sym_front_open(struct sym_module *m, struct elf_file *src)
{
	if (!src || !eligible(src))
		return false;
	struct sym_front *fr = calloc(1, sizeof(*fr));
	if (!fr)
		return false;
	fr->src = src;
	if (sym_aranges_walk(src, keep_range, fr) || !fr->ranges.n) {
		vec_free(&fr->ranges);
		free(fr);
		return false;
	}
	m->fr = fr;
	atomic_store_explicit(&m->front, true, memory_order_release);
	return true;
}

int sym_front_aranges(const struct sym_module *m,
		      int (*fn)(uint64_t info_off, uint64_t lo, uint64_t hi, void *ctx), void *ctx)
{
	if (!m->fr)
		return -ENOENT;
	for (size_t i = 0; i < m->fr->ranges.n; i++) {
		const struct front_range *r = &m->fr->ranges.v[i];
		int err = fn(r->info_off, r->lo, r->hi, ctx);
		if (err)
			return err;
	}
	return 0;
}

void sym_front_free(struct sym_module *m)
{
	if (!m->fr)
		return;
	for (size_t i = 0; i < m->fr->old.n; i++) {
		for (size_t u = 0; u < m->fr->old.v[i].n; u++)
			sym_unit_index_free(&m->fr->old.v[i].units[u]);
		free(m->fr->old.v[i].units);
	}
	vec_free(&m->fr->old);
	vec_free(&m->fr->ranges);
	free(m->fr);
	m->fr = NULL;
}

static void take_lower(const struct front_range *r, uint64_t addr, bool *found,
		       uint64_t *info_off)
{
	if (addr >= r->lo && addr < r->hi && (!*found || r->info_off < *info_off)) {
		*info_off = r->info_off;
		*found = true;
	}
}

/* The lowest unit offset whose aranges cover addr. */
static bool candidate(struct sym_front *fr, uint64_t addr, uint64_t *info_off)
{
	bool found = false;
	if (!fr->indexed && fr->lookups >= INDEX_AFTER)
		index_ranges(fr);
	if (!fr->indexed) {
		for (size_t i = 0; i < fr->ranges.n; i++)
			take_lower(&fr->ranges.v[i], addr, &found, info_off);
		return found;
	}
	for (size_t i = UPPER_BOUND(fr->ranges.v, fr->ranges.n, .lo, addr);
	     i > 0 && fr->ranges.v[i - 1].reach > addr; i--)
		take_lower(&fr->ranges.v[i - 1], addr, &found, info_off);
	return found;
}

/* Forgets what was built on the front read so far, and that reader. The unit indexes are
 * kept aside (see struct old_units); when there is no memory to note them, they are kept
 * by leaking them rather than freed under frames that point into them. */
static void drop_front(struct sym_module *m)
{
	if (!m->dwarf)
		return;
	struct old_units *o = m->units ? vec_push(&m->fr->old) : NULL;
	if (o)
		*o = (struct old_units){ m->units, m->nunits_indexed };
	m->units = NULL;
	sym_drop_units(m); /* the ranges */
	sym_names_free(m); /* names resolved on the front may lack what lies past it; the
			    * names themselves live in the sections and the module's arena */
	dwarf_close(m->dwarf);
	m->dwarf = NULL;
}

/* Reads the front further, through the unit at upto at least (twice as far as before at
 * least, so that a report's scattered addresses grow it a few times only). The units read
 * so far, their indexes and their names stay: only the new units are read, and the
 * ranges of all are worked out again. */
static int grow(struct sym_module *m, uint64_t upto)
{
	if (!m->dwarf) {
		struct dwarf *d;
		if (dwarf_open_front(m->fr->src, upto, &d))
			return -1; /* the full reader says what is wrong */
		m->dwarf = d;
	} else {
		if (upto < 2 * m->dwarf->info.size)
			upto = 2 * m->dwarf->info.size;
		if (dwarf_front_extend(m->dwarf, upto)) {
			drop_front(m);
			return -1;
		}
	}
	if (m->dwarf->unsupported || sym_index_more_units(m)) {
		drop_front(m);
		return -1;
	}
	return 0;
}

static void end_locked(struct sym_module *m)
{
	if (!atomic_load_explicit(&m->front, memory_order_relaxed))
		return;
	drop_front(m);
	sym_open_dwarf(m, m->fr->src);
	if (sym_index_units(m)) {
		sym_drop_units(m); /* out of memory: symbol tables only */
		dwarf_close(m->dwarf);
		m->dwarf = NULL;
	}
	atomic_store_explicit(&m->front, false, memory_order_release);
}

void sym_read_all(struct sym_module *m)
{
	sym_front_end(m);
}

void sym_front_end(struct sym_module *m)
{
	if (!atomic_load_explicit(&m->front, memory_order_acquire))
		return;
	pthread_mutex_lock(&m->front_lock);
	end_locked(m);
	pthread_mutex_unlock(&m->front_lock);
}

bool sym_front_lookup(struct sym_module *m, uint64_t addr, enum sym_style style,
		      struct tally_frame *frames, size_t max, int *n)
{
	pthread_mutex_lock(&m->front_lock);
	bool answered = false;
	uint64_t cand = 0;
	if (atomic_load_explicit(&m->front, memory_order_relaxed) &&
	    ++m->fr->lookups <= FRONT_MAX_LOOKUPS && candidate(m->fr, addr, &cand) &&
	    (m->dwarf && cand < m->dwarf->info.size ? 0 : grow(m, cand)) == 0 &&
	    sym_unit_of(m, addr) >= 0) {
		*n = sym_lookup_in(m, addr, style, frames, max);
		answered = !m->dwarf->beyond;
	}
	if (!answered)
		end_locked(m);
	pthread_mutex_unlock(&m->front_lock);
	return answered;
}
