/*
 * Opening a module: the ELF file, its separate debug file when the file itself has no
 * DWARF (else its MiniDebugInfo), the symbol tables, and the address ranges of every unit.
 * A unit's ranges come from its DIE; .debug_aranges is consulted only for units whose DIE
 * has none (it is often absent, and where present it may cover only some units). Where ranges of several units
 * overlap, the unit with the lowest offset owns the overlap, as in LLVM.
 */
#include <errno.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/err.h"
#include "base/radix.h"
#include "base/mutex.h"
#include "base/vec.h"
#include "dwarf/dwarf_consts.h"
#include "symbolize/symbolize_internal.h"

typedef VEC(struct sym_cu_range) range_vec;

struct unit_ranges {
	range_vec *out;
	uint32_t unit;
};

static int add_range(uint64_t lo, uint64_t hi, void *ctx)
{
	struct unit_ranges *r = ctx;
	struct sym_cu_range *slot = vec_push(r->out);
	if (!slot)
		return -ENOMEM;
	*slot = (struct sym_cu_range){ lo, hi, r->unit };
	return 0;
}

static bool is_code_unit(const struct dwarf_unit *u)
{
	return u->unit_type == DW_UT_compile || u->unit_type == DW_UT_partial;
}

int sym_aranges_walk(struct elf_file *f, int (*fn)(uint64_t info_off, uint64_t lo, uint64_t hi,
						    void *ctx),
		     void *ctx)
{
	const uint8_t *data;
	size_t size;
	if (elf_section_data_by_name(f, ".debug_aranges", &data, &size))
		return -ENOENT; /* an unreadable table is no table */
	struct cur c = cur_make(data, size, f->big_endian);
	while (cur_left(&c) >= 16) {
		uint64_t start = cur_off(&c), len = cur_u32(&c);
		unsigned osz = len == 0xffffffff ? 8 : 4;
		if (osz == 8)
			len = cur_u64(&c);
		struct cur set = cur_sub(&c, len);
		cur_u16(&set);
		uint64_t info_off = cur_uN(&set, osz);
		uint8_t asz = cur_u8(&set);
		cur_u8(&set);
		if (!cur_ok(&set) || (asz != 4 && asz != 8))
			return 1;
		cur_seek(&set, (cur_off(&set) - start + 2 * asz - 1) / (2 * asz) * (2 * asz) + start);
		for (;;) {
			uint64_t lo = cur_uN(&set, asz), n = cur_uN(&set, asz);
			if (!cur_ok(&set) || (lo == 0 && n == 0))
				break;
			int err = n ? fn(info_off, lo, lo + n, ctx) : 0;
			if (err)
				return err;
		}
	}
	return 0;
}

struct arange_ctx {
	struct dwarf *d;
	const bool *has;
	range_vec *out;
};

static int add_arange(uint64_t info_off, uint64_t lo, uint64_t hi, void *ctx)
{
	struct arange_ctx *a = ctx;
	if (info_off >= a->d->info.size)
		return 0; /* past the front read so far (see front.c), or corrupt */
	struct dwarf_unit *u = dwarf_unit_at(a->d, info_off);
	if (!u || u->offset != info_off || a->has[u - a->d->units])
		return 0;
	struct unit_ranges r = { a->out, (uint32_t)(u - a->d->units) };
	return add_range(lo, hi, &r);
}

/* .debug_aranges sets (DWARF 5 section 6.1.2), for units whose DIE gives no ranges: as
 * front mode kept them, else read again. A damaged table is used as far as it is
 * readable. */
static int aranges(struct sym_module *m, const bool *has, range_vec *out)
{
	struct arange_ctx a = { m->dwarf, has, out };
	int err = sym_front_aranges(m, add_arange, &a);
	if (err == -ENOENT)
		err = sym_aranges_walk(m->dwarf->elf, add_arange, &a);
	return err == -ENOMEM ? -ENOMEM : 0;
}

static int collect_ranges(struct sym_module *m, range_vec *out)
{
	struct dwarf *d = m->dwarf;
	bool *has = calloc(d->nunits ? d->nunits : 1, sizeof(*has));
	if (!has)
		return -ENOMEM;
	struct dwarf_die *die = malloc(sizeof(*die));
	int err = die ? 0 : -ENOMEM;
	for (size_t i = 0; i < d->nunits && !err; i++) {
		struct dwarf_unit *u = &d->units[i];
		if (!is_code_unit(u) || dwarf_unit_root(d, u, die) || !die->abbrev)
			continue;
		size_t before = out->n;
		struct unit_ranges r = { out, (uint32_t)i };
		err = dwarf_die_ranges(d, u, die, add_range, &r);
		if (err && err != -ENOMEM)
			err = 0; /* the unit keeps whatever ranges were read */
		has[i] = out->n > before;
	}
	bool all = true;
	for (size_t i = 0; i < d->nunits; i++)
		all &= has[i] || !is_code_unit(&d->units[i]);
	if (!err && !all)
		err = aranges(m, has, out);
	free(die);
	free(has);
	return err;
}

struct endpoint {
	uint64_t addr;
	uint32_t unit;
	bool start;
};

static int emit(range_vec *res, uint64_t lo, uint64_t hi, uint32_t unit)
{
	struct sym_cu_range *last = res->n ? &res->v[res->n - 1] : NULL;
	if (last && last->hi == lo && last->unit == unit) {
		last->hi = hi;
		return 0;
	}
	struct sym_cu_range *slot = vec_push(res);
	if (!slot)
		return -ENOMEM;
	*slot = (struct sym_cu_range){ lo, hi, unit };
	return 0;
}

/* Makes ranges disjoint with one sweep over their endpoints: each stretch goes to the
 * lowest-numbered unit among those covering it. Overlaps are rare, so the set of covering
 * units is a short list. */
static int make_disjoint(range_vec *in, struct sym_cu_range **out, size_t *nout)
{
	struct endpoint *ev = malloc((2 * in->n + 1) * sizeof(*ev));
	VEC(uint32_t) active = { 0 };
	range_vec res = { 0 };
	int err = ev ? 0 : -ENOMEM;
	for (size_t i = 0; ev && i < in->n; i++) {
		ev[2 * i] = (struct endpoint){ in->v[i].lo, in->v[i].unit, true };
		ev[2 * i + 1] = (struct endpoint){ in->v[i].hi, in->v[i].unit, false };
	}
	size_t n = ev ? 2 * in->n : 0;
	if (ev && radix_sort(ev, n, sizeof(*ev), offsetof(struct endpoint, addr)))
		err = -ENOMEM;
	for (size_t i = 0; i < n && !err;) {
		uint64_t x = ev[i].addr;
		for (; i < n && ev[i].addr == x; i++) {
			if (ev[i].start) {
				uint32_t *slot = vec_push(&active);
				if (!slot) {
					err = -ENOMEM;
					break;
				}
				*slot = ev[i].unit;
				continue;
			}
			for (size_t j = 0; j < active.n; j++) {
				if (active.v[j] == ev[i].unit) {
					active.v[j] = active.v[--active.n];
					break;
				}
			}
		}
		if (!active.n || i == n || err)
			continue;
		uint32_t owner = active.v[0];
		for (size_t j = 1; j < active.n; j++)
			owner = active.v[j] < owner ? active.v[j] : owner;
		err = emit(&res, x, ev[i].addr, owner);
	}
	free(ev);
	vec_free(&active);
	if (err) {
		free(res.v);
		return err;
	}
	*out = res.v;
	*nout = res.n;
	return 0;
}

static bool has_debug_info(struct elf_file *f)
{
	const struct elf_section *s = elf_section_by_name(f, ".debug_info");
	return s && s->type != 8 /* SHT_NOBITS: a stripped copy's placeholder */ && s->size;
}

static const char *cache_dir(const struct sym_module *m)
{
	return m->opts.debug_cache ? elf_debug_cache_dir() : NULL;
}

/* The file whose DWARF to use: the module, else its separate debug file on disk or, for a
 * caller that uses the cache (every command does), from debuginfod (opened into
 * m->debug_elf), else NULL. */
static struct elf_file *dwarf_source(struct sym_module *m)
{
	if (has_debug_info(m->elf))
		return m->elf;
	int err = elf_open_debug_file(m->elf, m->opts.debug_dir, cache_dir(m), &m->debug_elf);
	if (err == -ENOENT && m->opts.debug_cache)
		err = elf_debuginfod_open(m->elf, &m->debug_elf);
	if (err) {
		if (err != -ENOENT)
			fprintf(stderr, "tally: warning: %s\n", err_msg());
		return NULL;
	}
	return has_debug_info(m->debug_elf) ? m->debug_elf : NULL;
}

/* A module with neither .symtab nor DWARF nor a separate debug file takes the symbols of
 * its MiniDebugInfo (GDB's order: any other debug information wins). A damaged one is
 * warned of and the module keeps its .dynsym. */
static void minidebuginfo(struct sym_module *m, const struct elf_file *src)
{
	if (src || m->debug_elf)
		return;
	int err = elf_attach_minidebuginfo(m->elf);
	if (err && err != -ENOENT)
		fprintf(stderr, "tally: warning: %s; using .dynsym only\n", err_msg());
}

void sym_open_dwarf(struct sym_module *m, struct elf_file *src)
{
	if (!src)
		return;
	if (dwarf_open(src, &m->dwarf)) {
		fprintf(stderr, "tally: warning: %s; using symbol tables only\n", err_msg());
		return;
	}
	if (m->dwarf->lost)
		fprintf(stderr, "tally: warning: %s: %s\n", src->path, m->dwarf->lost);
	if (m->dwarf->unsupported) {
		fprintf(stderr, "tally: %s: %s is not supported; using symbol tables only\n",
			src->path, m->dwarf->unsupported);
		dwarf_close(m->dwarf);
		m->dwarf = NULL;
	}
}

/* The address ranges of every unit of m->dwarf, into m->cu_ranges. */
static int index_ranges(struct sym_module *m)
{
	free(m->cu_ranges);
	m->cu_ranges = NULL;
	m->ncu_ranges = 0;
	range_vec all = { 0 };
	int err = collect_ranges(m, &all);
	if (!err)
		err = make_disjoint(&all, &m->cu_ranges, &m->ncu_ranges);
	free(all.v);
	return err;
}

int sym_index_units(struct sym_module *m)
{
	if (!m->dwarf)
		return 0;
	m->units = calloc(m->dwarf->nunits ? m->dwarf->nunits : 1, sizeof(*m->units));
	m->nunits_indexed = m->dwarf->nunits;
	return m->units ? index_ranges(m) : -ENOMEM;
}

int sym_index_more_units(struct sym_module *m)
{
	size_t had = m->units ? m->nunits_indexed : 0, n = m->dwarf->nunits;
	struct sym_unit_index *units = realloc(m->units, (n ? n : 1) * sizeof(*units));
	if (!units)
		return -ENOMEM;
	if (n > had)
		memset(units + had, 0, (n - had) * sizeof(*units));
	m->units = units;
	m->nunits_indexed = n;
	return index_ranges(m);
}

int sym_open(const char *path, const struct sym_opts *opts, struct sym_module **out)
{
	struct sym_module *m = calloc(1, sizeof(*m));
	if (!m)
		return err_set(-ENOMEM, "%s: out of memory", path);
	if (opts)
		m->opts = *opts;
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->built, NULL);
	mutex_init_adaptive(&m->names_lock); /* taken per name by every lookup thread */
	pthread_mutex_init(&m->front_lock, NULL);
	pthread_mutex_init(&m->cfi_lock, NULL);
	bulk_init(&m->bulk);
	int err = elf_open(path, &m->elf);
	if (!err) {
		struct elf_file *src = dwarf_source(m);
		minidebuginfo(m, src);
		sym_go_open(m, src);
		err = sym_symbols_start(m);
		if (!err && (m->opts.many || !sym_front_open(m, src))) {
			sym_open_dwarf(m, src);
			err = sym_index_units(m);
		}
	}
	if (err) {
		if (err == -ENOMEM)
			err_set(err, "%s: out of memory", path);
		sym_close(m);
		return err;
	}
	*out = m;
	return 0;
}

const char *sym_path(const struct sym_module *m)
{
	return m->elf->path;
}

void sym_drop_units(struct sym_module *m)
{
	for (size_t i = 0; m->units && i < m->nunits_indexed; i++)
		sym_unit_index_free(&m->units[i]);
	free(m->units);
	free(m->cu_ranges);
	m->units = NULL;
	m->nunits_indexed = 0;
	m->cu_ranges = NULL;
	m->ncu_ranges = 0;
}

void sym_close(struct sym_module *m)
{
	if (!m)
		return;
	sym_symbols_stop(m);
	sym_drop_units(m);
	free(m->plan);
	sym_front_free(m);
	sym_symbols_free(&m->symbols);
	sym_symbols_free(&m->fallback);
	sym_names_free(m);
	sym_cfi_free(m);
	sym_go_free(m);
	dwarf_close(m->dwarf);
	/* A compressed debug file whose DWARF was used goes to the cache decompressed, in the
	 * background: the next process that needs it will not inflate it again, and this one
	 * does not wait for the rest to be inflated. Best effort. */
	if (m->debug_elf && has_debug_info(m->debug_elf) && cache_dir(m))
		elf_debug_cache_close(m->debug_elf, cache_dir(m));
	else
		elf_close(m->debug_elf);
	elf_close(m->elf);
	arena_free(&m->arena);
	bulk_free(&m->bulk);
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->built);
	pthread_mutex_destroy(&m->names_lock);
	pthread_mutex_destroy(&m->front_lock);
	pthread_mutex_destroy(&m->cfi_lock);
	free(m);
}
