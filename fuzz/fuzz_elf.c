/*
 * libFuzzer target: the ELF reader on arbitrary bytes: headers, every section's contents
 * (decompression and relocation included; odd sections first inflated as a stream in two
 * steps, as front mode reads them), symbols, notes, build-id, debuglink, address
 * translation, Go's function table; the nearest symbol found by one pass over the tables,
 * which must be the sorted table's; and the debug cache's decompressed copy, which must
 * hold the same contents in every section, none compressed.
 */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/search.h"
#include "elf/elf.h"
#include "elf/gopclntab.h"

#define CACHE_DIR "/tmp/tally-fuzz-cache"

static void same_section(struct elf_file *f, struct elf_file *copy, size_t i)
{
	const uint8_t *a, *b;
	size_t na, nb;
	if (elf_section_data(f, &f->sections[i], &a, &na))
		return;
	if (elf_section_data(copy, &copy->sections[i], &b, &nb) || na != nb ||
	    (na && memcmp(a, b, na)))
		abort();
}

/* A copy that was written reads back with every section's contents the original's. */
static void check_cache_copy(struct elf_file *f)
{
	char path[PATH_MAX];
	if (elf_debug_cache_store(f, CACHE_DIR) || elf_build_id_path(f, CACHE_DIR, path, sizeof(path)))
		return;
	struct elf_file *copy;
	if (elf_open(path, &copy)) {
		fprintf(stderr, "the cache's copy does not open: %s\n", err_msg());
		abort();
	}
	if (copy->nsections != f->nsections || elf_has_compressed_sections(copy))
		abort();
	for (size_t i = 1; i < f->nsections; i++)
		if (!(f->sections[i].flags & 2 /* SHF_ALLOC: kept in place, not compared */))
			same_section(f, copy, i);
	elf_close(copy);
	unlink(path);
}

/* One pass over the tables picks the symbol a search of the sorted table picks. */
static void same_nearest(struct elf_file *f, const struct elf_symtab *t, uint64_t addr,
			 bool first_alias)
{
	size_t lo = UPPER_BOUND(t->syms, t->n, .addr, addr);
	struct elf_symbol s;
	bool found = elf_symbol_at_or_below(f, ELF_SYMS_BOTH, true, addr, first_alias, &s);
	if (found != (lo > 0))
		abort();
	size_t i = lo - 1;
	while (found && first_alias && i > 0 && t->syms[i - 1].addr == t->syms[i].addr &&
	       t->syms[i - 1].size == t->syms[i].size)
		i--;
	if (found && s.order != t->syms[i].order)
		abort();
}

static int count_note(const struct elf_note *n, void *ctx)
{
	*(size_t *)ctx += n->desc_size;
	return 0;
}

/* Go's table, found by section name or by its symbols, and the frames (inline trees come
 * from the file's other sections) at the entry point. */
static void go_table(struct elf_file *f)
{
	struct elf_gopclntab *t;
	struct elf_gofunc fn;
	struct elf_goframe fr[8];
	if (elf_gopclntab_open(f, &t))
		return;
	if (elf_gopclntab_find(t, f->entry, &fn) &&
	    elf_gopclntab_frames(t, &fn, f->entry, fr, 8) - 1 >= 8)
		abort();
	elf_gopclntab_close(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_file *f;
	if (elf_open_mem("fuzz.elf", data, size, &f))
		return 0;
	for (size_t i = 0; i < f->nsections; i++) {
		const uint8_t *p;
		size_t n, total;
		if (i % 2 && !elf_section_prefix(f, &f->sections[i], 1, &p, &n, &total))
			elf_section_prefix(f, &f->sections[i], total / 2 + 1, &p, &n, &total);
		elf_section_data(f, &f->sections[i], &p, &n);
	}
	struct elf_symtab t;
	if (!elf_symbols(f, ELF_SYMS_BOTH, true, &t)) {
		for (size_t k = 0; k < t.n && k < 64; k += 1 + t.n / 16) {
			same_nearest(f, &t, t.syms[k].addr, k & 1);
			same_nearest(f, &t, t.syms[k].addr + 1, !(k & 1));
		}
		same_nearest(f, &t, f->entry, false);
		elf_symtab_free(&t);
	}
	size_t total = 0;
	elf_notes(f, count_note, &total);
	const uint8_t *id;
	size_t len;
	elf_build_id(f, &id, &len);
	const char *link;
	uint32_t crc;
	elf_debuglink(f, &link, &crc);
	uint64_t x;
	elf_vaddr_to_offset(f, f->entry, &x);
	elf_offset_to_vaddr(f, 0x1000, &x);
	elf_section_at(f, f->entry);
	go_table(f);
	check_cache_copy(f);
	err_clear();
	elf_close(f);
	return 0;
}
