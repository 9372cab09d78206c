/*
 * Front mode's lazy sections (src/dwarf/unit.c): a compressed .debug_abbrev is inflated as
 * far as the abbreviation a unit's root DIE needs, and when a first guess falls short, the
 * reach past the table's start doubles, not its offset: a table 320 KB into the section
 * whose entry lies 8 KB past its start is read with the section inflated to 384 KB, not
 * 640 KB. The unit's root DIE reads the same as from the section whole.
 */
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <cmocka.h>

#include "dwarf/dwarf.h"
#include "dwarf/dwarf_consts.h"
#include "elf/elf.h"
#include "../elf/elf_image.h"

#define NAMES "\0.debug_info\0.debug_abbrev\0.shstrtab\0"
#define ABBREV_SIZE ((size_t)1 << 20)
/* 4 KiB and 100 bytes before a 64 KiB boundary: a first guess of 4 KiB past it, rounded up
 * to the boundary, falls short of an entry 8 KB on. */
#define TABLE_AT ((size_t)0x50000 - 4096 - 100)
#define FILLERS 80

/* The table at TABLE_AT: FILLERS entries (codes 2 on) of 48 string attributes each, then
 * code 1, a childless unit with an inline name. Returns the table's end. */
static size_t table(uint8_t *a)
{
	size_t n = TABLE_AT;
	for (unsigned code = 2; code < 2 + FILLERS; code++) {
		a[n++] = (uint8_t)(code | 0x80); /* uleb128 of code, two bytes */
		a[n++] = (uint8_t)(code >> 7);
		a[n++] = DW_TAG_member;
		a[n++] = 0;
		for (int i = 0; i < 48; i++) {
			a[n++] = DW_AT_name;
			a[n++] = DW_FORM_string;
		}
		a[n++] = 0;
		a[n++] = 0;
	}
	static const uint8_t unit[] = { 1, DW_TAG_compile_unit, 0, DW_AT_name, DW_FORM_string, 0, 0 };
	memcpy(a + n, unit, sizeof(unit));
	n += sizeof(unit);
	a[n++] = 0; /* the table's end */
	return n;
}

/* An ELF image with one DWARF 4 unit named "front" whose abbreviations are the table, in a
 * zlib-compressed .debug_abbrev of ABBREV_SIZE bytes. */
static size_t image(uint8_t **out)
{
	uint8_t *abbrev = calloc(1, ABBREV_SIZE);
	assert_non_null(abbrev);
	assert_true(table(abbrev) > 0x50000);
	uLongf zsize = compressBound(ABBREV_SIZE);
	uint8_t *z = malloc(zsize);
	assert_non_null(z);
	assert_int_equal(compress2(z, &zsize, abbrev, ABBREV_SIZE, 6), Z_OK);
	free(abbrev);
	uint8_t info[32] = { 0 };
	uint32_t len = 7 + 7; /* the header after the length, the DIE (code, "front") */
	uint32_t at = TABLE_AT;
	memcpy(info, &len, 4);
	info[4] = 4;
	memcpy(info + 6, &at, 4);
	info[10] = 8;
	info[11] = 1;
	memcpy(info + 12, "front", 6);
	size_t info_at = 4096, abbrev_at = info_at + 18;
	size_t names_at = abbrev_at + sizeof(Elf64_Chdr) + zsize;
	size_t sh_at = (names_at + sizeof(NAMES) + 7) & ~(size_t)7;
	size_t size = sh_at + 4 * sizeof(Elf64_Shdr);
	uint8_t *img = calloc(1, size);
	assert_non_null(img);
	elf_image_header(img, sh_at, 4, 3);
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + sh_at);
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_offset = info_at,
			      .sh_size = 18 };
	sh[2] = (Elf64_Shdr){ .sh_name = 13, .sh_type = SHT_PROGBITS, .sh_flags = SHF_COMPRESSED,
			      .sh_offset = abbrev_at, .sh_size = sizeof(Elf64_Chdr) + zsize,
			      .sh_addralign = 1 };
	sh[3] = (Elf64_Shdr){ .sh_name = 27, .sh_type = SHT_STRTAB, .sh_offset = names_at,
			      .sh_size = sizeof(NAMES) };
	memcpy(img + info_at, info, 18);
	Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = ABBREV_SIZE, .ch_addralign = 1 };
	memcpy(img + abbrev_at, &ch, sizeof(ch));
	memcpy(img + abbrev_at + sizeof(ch), z, zsize);
	memcpy(img + names_at, NAMES, sizeof(NAMES));
	free(z);
	*out = img;
	return size;
}

static void abbreviations_are_inflated_as_far_as_the_entry_reaches(void **state)
{
	(void)state;
	uint8_t *img;
	size_t size = image(&img);
	struct elf_file *f;
	struct dwarf *front, *whole;
	assert_int_equal(elf_open_mem("front.elf", img, size, &f), 0);
	assert_int_equal(dwarf_open_front(f, 0, &front), 0);
	assert_int_equal(dwarf_open(f, &whole), 0);
	assert_int_equal(front->nunits, 1);
	assert_string_equal(front->units[0].name, "front");
	assert_string_equal(whole->units[0].name, "front");
	/* past the entry, not as far as twice the table's offset (0xa0000 before) */
	assert_true(front->abbrev.size > 0x50000);
	assert_true(front->abbrev.size <= 0x60000);
	assert_int_equal(whole->abbrev.size, ABBREV_SIZE);
	dwarf_close(front);
	dwarf_close(whole);
	elf_close(f);
	free(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(abbreviations_are_inflated_as_far_as_the_entry_reaches),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
