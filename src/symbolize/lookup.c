/*
 * Address -> frames. The innermost frame takes its file, line and column from the line
 * table; each enclosing frame takes them from the call site recorded on the inlined
 * subroutine it contains (DW_AT_call_file/line/column). Then the outermost frame is named
 * from the symbol table where the address has a symbol (llvm-symbolizer's rule, which
 * also shows compiler clones such as foo.cold or foo.constprop.0 by their real names);
 * GNU style keeps the DWARF name, as addr2line does. A function nothing names keeps no
 * name, as in both tools, but its range from the unwind tables (cfi_funcs.c). A Go binary
 * without DWARF is named, with files and lines, from Go's own table (go.c).
 */
#include <errno.h>

#include "base/search.h"
#include "symbolize/symbolize_internal.h"

#define MAX_FRAMES 256

const struct sym_cu_range *sym_cu_range_of(const struct sym_module *m, uint64_t addr)
{
	size_t lo = UPPER_BOUND(m->cu_ranges, m->ncu_ranges, .hi, addr);
	return lo < m->ncu_ranges && m->cu_ranges[lo].lo <= addr ? &m->cu_ranges[lo] : NULL;
}

int32_t sym_unit_of(const struct sym_module *m, uint64_t addr)
{
	const struct sym_cu_range *r = sym_cu_range_of(m, addr);
	return r ? (int32_t)r->unit : -1;
}

static int32_t find_scope(const struct sym_unit_index *ix, uint64_t addr)
{
	size_t lo = UPPER_BOUND(ix->spans, ix->nspans, .lo, addr);
	if (lo == 0 || addr >= ix->spans[lo - 1].hi)
		return -1;
	return ix->spans[lo - 1].scope;
}

static void from_row(struct sym_unit_index *ix, uint64_t addr, struct tally_frame *f)
{
	const struct dwarf_line_row *row = ix->has_lines ? dwarf_line_lookup(&ix->lines, addr) : NULL;
	if (!row)
		return;
	f->file = dwarf_line_file(&ix->lines, row->file);
	if (!f->file)
		return; /* LLVM gives up on the whole row when its file is unknown */
	f->line = row->line;
	f->column = row->column;
	f->discriminator = dwarf_line_discriminator(&ix->lines, row);
}

/* The scope of the last frame from DWARF, if any, and whether it is named as
 * sym_scope_name's cxx_plain says. */
struct outermost {
	const struct sym_scope *scope;
	bool cxx_plain;
};

/* Frames from DWARF; returns how many (0 when the address is in no unit). */
static size_t dwarf_frames(struct sym_module *m, uint64_t addr, struct tally_frame *fr,
			   struct outermost *outer)
{
	int32_t unit = m->dwarf ? sym_unit_of(m, addr) : -1;
	struct sym_unit_index *ix;
	if (unit < 0 || sym_unit_index(m, (uint32_t)unit, &ix))
		return 0;
	int32_t s = find_scope(ix, addr);
	if (s < 0) {
		fr[0] = (struct tally_frame){ 0 };
		from_row(ix, addr, &fr[0]);
		return fr[0].file ? 1 : 0;
	}
	size_t n = 0;
	const struct sym_scope *inner = NULL;
	for (; s >= 0 && n < MAX_FRAMES; s = ix->scopes[s].parent) {
		const struct sym_scope *sc = &ix->scopes[s];
		struct tally_frame *f = &fr[n++];
		*f = (struct tally_frame){ .function = sym_scope_name(m, ix, s, &outer->cxx_plain) };
		if (!inner) {
			from_row(ix, addr, f);
		} else {
			f->file = ix->has_lines ? dwarf_line_file(&ix->lines, inner->call_file) : NULL;
			f->line = inner->call_line;
			f->column = inner->call_column;
		}
		inner = sc;
		outer->scope = sc;
		if (!sc->inlined)
			break;
	}
	return n;
}

/* addr2line names a C++ function that DWARF names without its linkage name by the symbol
 * that starts where the function does (when the address has no inlined frames). */
static void gnu_cxx_name(struct sym_module *m, const struct sym_symbols *table,
			 const struct sym_scope *outer, uint64_t addr, struct tally_frame *f)
{
	uint64_t start;
	const char *file;
	const char *name = sym_symbols_find(m, table, addr, true, &start, &file);
	if (name && start == outer->low)
		f->function = name;
}

static void name_outermost(struct sym_module *m, uint64_t addr, enum sym_style style,
			   const struct outermost *outer, size_t n, struct tally_frame *f)
{
	uint64_t start = 0;
	const char *name = NULL, *file;
	bool gnu = style == SYM_STYLE_GNU;
	sym_symbols_wait(m);
	/* addr2line reads symbols from the separate debug file when there is one. */
	const struct sym_symbols *table = gnu && m->debug_elf ? sym_fallback(m) : &m->symbols;
	if (gnu && n == 1 && outer->scope && outer->cxx_plain)
		gnu_cxx_name(m, table, outer->scope, addr, f);
	if (!gnu || !f->function) {
		name = sym_symbols_find(m, table, addr, gnu, &start, &file);
		if (name) {
			f->function = name;
			f->sym_start = start;
			/* llvm-symbolizer ignores an empty file name; addr2line prints it. */
			if (!f->file && file && (*file || gnu))
				f->file = file;
		}
	}
	if (!f->function && m->debug_elf &&
	    (name = sym_symbols_find(m, sym_fallback(m), addr, gnu, &start, &file))) {
		f->function = name;
		f->sym_start = start;
	}
	uint64_t end;
	if (!f->function && sym_cfi_function(m, addr, &start, &end)) {
		f->from_cfi = true;
		f->sym_start = start;
		f->sym_end = end;
	}
}

int sym_lookup(struct sym_module *m, uint64_t addr, enum sym_style style,
	       struct tally_frame *frames, size_t max)
{
	int n;
	if (atomic_load_explicit(&m->front, memory_order_acquire) &&
	    sym_front_lookup(m, addr, style, frames, max, &n))
		return n;
	return sym_lookup_in(m, addr, style, frames, max);
}

int sym_lookup_in(struct sym_module *m, uint64_t addr, enum sym_style style,
		  struct tally_frame *frames, size_t max)
{
	struct tally_frame fr[MAX_FRAMES];
	struct outermost outer = { 0 };
	size_t n = dwarf_frames(m, addr, fr, &outer);
	bool go = n == 0 && m->go && (n = sym_go_frames(m, addr, fr, MAX_FRAMES)) > 0;
	if (n == 0)
		fr[n++] = (struct tally_frame){ 0 };
	if (!go)
		name_outermost(m, addr, style, &outer, n, &fr[n - 1]);
	for (size_t i = 0; i < n; i++) {
		fr[i].inlined = i + 1 < n;
		if (i < max)
			frames[i] = fr[i];
	}
	return (int)n;
}
