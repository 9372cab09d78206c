/*
 * Unit heads (src/dwarf/unit_head.c): a large .debug_info of a file has its units' headers
 * and root DIEs read with pread, not through the mapping. The reader opened on the file
 * must see exactly what the reader opened on the same bytes in memory sees (that one reads
 * the mapping only, as every reader did before heads), with strings pointing into the
 * mapping; a root DIE longer than a head is read from the mapping; units close together
 * are read through the mapping; a file replaced under its path is not read.
 */
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dwarf/dwarf.h"
#include "dwarf/dwarf_consts.h"
#include "elf/elf.h"
#include "../elf/elf_image.h"

#define NAMES "\0.debug_info\0.debug_abbrev\0.shstrtab\0"
#define INFO_AT 4096

/* One abbreviation: a childless unit DIE with a name (inline), low_pc and high_pc. */
static const uint8_t abbrev[] = {
	1, DW_TAG_compile_unit, 0, DW_AT_name, DW_FORM_string, DW_AT_low_pc, DW_FORM_addr,
	DW_AT_high_pc, DW_FORM_data8, 0, 0, 0,
};

/* An image of nunits DWARF 4 units of unit_size bytes each; unit long_name's name is 400
 * bytes, more than a head holds. Returns its size. */
static size_t image(uint8_t **out, size_t nunits, size_t unit_size, size_t long_name)
{
	size_t info_size = nunits * unit_size, abbrev_at = INFO_AT + info_size;
	size_t names_at = abbrev_at + sizeof(abbrev), sh_at = (names_at + sizeof(NAMES) + 7) & ~7u;
	size_t size = sh_at + 4 * sizeof(Elf64_Shdr);
	uint8_t *img = calloc(1, size);
	assert_non_null(img);
	elf_image_header(img, sh_at, 4, 3);
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + sh_at);
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_offset = INFO_AT,
			      .sh_size = info_size };
	sh[2] = (Elf64_Shdr){ .sh_name = 13, .sh_type = SHT_PROGBITS, .sh_offset = abbrev_at,
			      .sh_size = sizeof(abbrev) };
	sh[3] = (Elf64_Shdr){ .sh_name = 27, .sh_type = SHT_STRTAB, .sh_offset = names_at,
			      .sh_size = sizeof(NAMES) };
	memcpy(img + abbrev_at, abbrev, sizeof(abbrev));
	memcpy(img + names_at, NAMES, sizeof(NAMES));
	for (size_t i = 0; i < nunits; i++) {
		uint8_t *u = img + INFO_AT + i * unit_size;
		uint32_t len = (uint32_t)unit_size - 4;
		memcpy(u, &len, 4);
		u[4] = 4;  /* version 4, abbreviation table 0 (zeros) */
		u[10] = 8; /* address size */
		u[11] = 1;
		size_t n = i == long_name ? 400 : (size_t)snprintf((char *)u + 12, 32, "unit%zu", i);
		if (i == long_name)
			memset(u + 12, 'x', n);
		uint64_t lo = 0x1000 * (i + 1), hi = 0x800;
		memcpy(u + 13 + n, &lo, 8);
		memcpy(u + 21 + n, &hi, 8);
	}
	*out = img;
	return size;
}

struct pair {
	char dir[64], path[96];
	uint8_t *img;
	struct elf_file *file, *mem;
	struct dwarf *from_file, *from_mem;
};

static void open_pair(struct pair *p, size_t nunits, size_t unit_size, size_t long_name)
{
	snprintf(p->dir, sizeof(p->dir), "%s/tally-heads.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(p->dir));
	snprintf(p->path, sizeof(p->path), "%s/heads.elf", p->dir);
	size_t size = image(&p->img, nunits, unit_size, long_name);
	FILE *f = fopen(p->path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p->img, 1, size, f), size);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(elf_open(p->path, &p->file), 0);
	assert_int_equal(elf_open_mem("heads.elf", p->img, size, &p->mem), 0);
	assert_int_equal(dwarf_open(p->mem, &p->from_mem), 0);
}

static void close_pair(struct pair *p)
{
	dwarf_close(p->from_file);
	dwarf_close(p->from_mem);
	elf_close(p->file);
	elf_close(p->mem);
	free(p->img);
	unlink(p->path);
	rmdir(p->dir);
}

/* The two readers' units agree, and names read from the file point into its mapping. */
static void assert_same_units(const struct pair *p)
{
	const struct dwarf *a = p->from_file, *b = p->from_mem;
	assert_int_equal(a->nunits, b->nunits);
	for (size_t i = 0; i < a->nunits; i++) {
		const struct dwarf_unit *x = &a->units[i], *y = &b->units[i];
		assert_int_equal(x->offset, y->offset);
		assert_int_equal(x->end, y->end);
		assert_int_equal(x->first_die, y->first_die);
		assert_int_equal(x->tag, y->tag);
		assert_int_equal(x->base_addr, y->base_addr);
		assert_non_null(x->name);
		assert_string_equal(x->name, y->name);
		assert_true(x->name >= (const char *)p->file->map &&
			    x->name < (const char *)p->file->map + p->file->size);
	}
}

static void heads_read_sparse_units_from_the_file(void **state)
{
	(void)state;
	struct pair p;
	open_pair(&p, 24, 48 << 10, 5); /* 1.1 MiB */
	assert_int_equal(dwarf_open(p.file, &p.from_file), 0);
	assert_same_units(&p);
	assert_non_null(p.from_file->units[0].head);
	assert_non_null(p.from_file->units[23].head);
	assert_null(p.from_file->units[5].head); /* its root DIE is longer than a head */
	assert_string_equal(p.from_file->units[5].name, p.from_mem->units[5].name);
	/* Read again after opening, as symbolize/ reads roots for their ranges. */
	static struct dwarf_die a, b;
	assert_int_equal(dwarf_unit_root(p.from_file, &p.from_file->units[7], &a), 0);
	assert_int_equal(dwarf_unit_root(p.from_mem, &p.from_mem->units[7], &b), 0);
	assert_int_equal(a.nvals, b.nvals);
	assert_string_equal(a.vals[0].str, b.vals[0].str);
	assert_int_equal(a.vals[1].u, b.vals[1].u);
	assert_int_equal(a.vals[2].u, b.vals[2].u);
	close_pair(&p);
}

static void heads_leave_dense_units_to_the_mapping(void **state)
{
	(void)state;
	struct pair p;
	open_pair(&p, 300, 4 << 10, 300);
	assert_int_equal(dwarf_open(p.file, &p.from_file), 0);
	assert_same_units(&p);
	/* Two short units in a row are read from the file, the next through the mapping. */
	assert_non_null(p.from_file->units[0].head);
	assert_non_null(p.from_file->units[1].head);
	for (size_t i = 2; i < p.from_file->nunits; i++)
		assert_null(p.from_file->units[i].head);
	close_pair(&p);
}

static void heads_are_not_read_from_a_replaced_file(void **state)
{
	(void)state;
	struct pair p;
	open_pair(&p, 24, 48 << 10, 99);
	char other[128];
	snprintf(other, sizeof(other), "%s/other", p.dir);
	FILE *f = fopen(other, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p.img, 1, 4096, f), 4096); /* not the same bytes */
	assert_int_equal(fclose(f), 0);
	assert_int_equal(rename(other, p.path), 0);
	assert_int_equal(dwarf_open(p.file, &p.from_file), 0);
	assert_same_units(&p);
	for (size_t i = 0; i < p.from_file->nunits; i++)
		assert_null(p.from_file->units[i].head);
	close_pair(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(heads_read_sparse_units_from_the_file),
		cmocka_unit_test(heads_leave_dense_units_to_the_mapping),
		cmocka_unit_test(heads_are_not_read_from_a_replaced_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
