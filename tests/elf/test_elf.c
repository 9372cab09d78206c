/*
 * The ELF reader against readelf, on programs built here: section names and count, the
 * build-id, function symbols, and virtual address <-> file offset through PT_LOAD for
 * lld's and bfd's layouts.
 */
#include <elf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "elf/elf.h"
#include "elf_image.h"

static char dir[] = "/tmp/tally-elf-XXXXXX";

static void build(const char *name, const char *flags)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd),
		 "printf 'int f(int x){return x+1;}\\nint main(void){return f(2);}\\n' >%s/p.c && "
		 "cc %s -g -Wl,--build-id %s/p.c -o %s/%s",
		 dir, flags, dir, dir, name);
	assert_int_equal(system(cmd), 0);
}

/* The first line of a shell command's output. */
static void run(char *out, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void run(char *out, size_t size, const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	if (!fgets(out, (int)size, p))
		out[0] = 0;
	out[strcspn(out, "\n")] = 0;
	pclose(p);
}

static struct elf_file *open_built(const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	struct elf_file *f;
	assert_int_equal(elf_open(path, &f), 0);
	return f;
}

static void elf_sections_match_readelf(void **state)
{
	build("bfd", "");
	struct elf_file *f = open_built("bfd");
	char out[256];
	run(out, sizeof(out), "readelf -hW %s/bfd | awk '/Number of section headers/ { print $5 }'", dir);
	assert_int_equal(f->nsections, atoi(out));
	for (size_t i = 1; i < f->nsections; i++) {
		run(out, sizeof(out),
		    "readelf -SW %s/bfd | sed 's/\\[ */[/' | awk '$1 == \"[%zu]\" { print $2 }'", dir, i);
		assert_string_equal(f->sections[i].name, out);
	}
	elf_close(f);
}

static void elf_build_id_matches_readelf(void **state)
{
	struct elf_file *f = open_built("bfd");
	const uint8_t *id;
	size_t len;
	assert_int_equal(elf_build_id(f, &id, &len), 0);
	char hex[129] = "", out[256];
	for (size_t i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
	run(out, sizeof(out), "readelf -n %s/bfd | awk '/Build ID/ { print $3 }'", dir);
	assert_string_equal(hex, out);
	elf_close(f);
}

static void elf_function_symbols_match_readelf(void **state)
{
	struct elf_file *f = open_built("bfd");
	struct elf_symtab t;
	assert_int_equal(elf_symbols(f, ELF_SYMS_SYMTAB_ELSE_DYNSYM, false, &t), 0);
	char out[256];
	run(out, sizeof(out),
	    "readelf -sW %s/bfd | awk '/Symbol table .\\.symtab/ { on = 1 } "
	    "on && ($4 == \"FUNC\" || $4 == \"IFUNC\") && $7 != \"UND\" && $7 != \"ABS\"' | wc -l", dir);
	assert_int_equal(t.n, atoi(out));
	bool found = false;
	for (size_t i = 0; i < t.n; i++)
		found |= !strcmp(t.syms[i].name, "f") && t.syms[i].size > 0;
	assert_true(found);
	elf_symtab_free(&t);
	elf_close(f);
}

/* In a linked file every allocated section's address and offset agree with its segment. */
static void check_sections_map_through_segments(const char *name)
{
	struct elf_file *f = open_built(name);
	size_t checked = 0;
	for (size_t i = 0; i < f->nsections; i++) {
		const struct elf_section *s = &f->sections[i];
		uint64_t off, va;
		if (!(s->flags & 2 /* SHF_ALLOC */) || s->type == 8 /* SHT_NOBITS */ || !s->size)
			continue;
		assert_int_equal(elf_vaddr_to_offset(f, s->addr, &off), 0);
		assert_int_equal(off, s->offset);
		assert_int_equal(elf_offset_to_vaddr(f, s->offset, &va), 0);
		assert_int_equal(va, s->addr);
		checked++;
	}
	assert_true(checked > 5);
	elf_close(f);
}

static void elf_vaddr_offset_round_trip_lld_rosegment(void **state)
{
	build("lld", "-fuse-ld=lld");
	check_sections_map_through_segments("lld");
}

static void elf_vaddr_offset_round_trip_bfd_separate_code(void **state)
{
	build("sep", "-Wl,-z,separate-code -no-pie");
	check_sections_map_through_segments("sep");
}

static void elf_address_outside_segments_is_erange(void **state)
{
	struct elf_file *f = open_built("bfd");
	uint64_t off;
	assert_int_equal(elf_vaddr_to_offset(f, UINT64_C(0xffffffff00000000), &off), -34);
	elf_close(f);
}

/* An image of three sections: entry 0, sh[1] (the caller's, named .debug_info) and the
 * names: an ELF header, the section headers at 64, the names after them. */
#define IMAGE_SIZE (64 + 3 * 64 + 16)
static Elf64_Shdr *three_sections(unsigned char img[IMAGE_SIZE])
{
	memset(img, 0, IMAGE_SIZE);
	elf_image_header(img, 64, 3, 2);
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + 64);
	static const char names[] = "\0.debug_info\0";
	sh[2] = (Elf64_Shdr){ .sh_type = SHT_STRTAB, .sh_offset = 64 + 3 * 64,
			      .sh_size = sizeof(names) };
	memcpy(img + 64 + 3 * 64, names, sizeof(names));
	return sh;
}

/* A NOBITS section holds no bytes in the file, whatever its offset and size say, also
 * when it claims to be compressed: then it lacks a compression header, read whole or as a
 * prefix (the prefix reader once went to the offset instead, and the whole reader made a
 * pointer of an offset that wraps the address space, which UBSan stops: fuzzers' finds). */
static void elf_compressed_nobits_section_is_empty(void **state)
{
	(void)state;
	static unsigned char img[IMAGE_SIZE];
	Elf64_Shdr *sh = three_sections(img);
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_NOBITS, .sh_flags = SHF_COMPRESSED,
			      .sh_offset = 0xfff5f5f5f5f5f5f5, .sh_size = 0x60000 };
	struct elf_file *f;
	assert_int_equal(elf_open_mem("nobits.elf", img, sizeof(img), &f), 0);
	const uint8_t *p;
	size_t n, total;
	assert_int_equal(elf_section_prefix(f, &f->sections[1], 1, &p, &n, &total), -EINVAL);
	assert_int_equal(elf_section_data(f, &f->sections[1], &p, &n), -EINVAL);
	elf_close(f);
}

/* Entry 0 of the section table is no section: flags a damaged file gives it do not make
 * the file compressed (the debug cache once stored such files again on every run, its copy
 * refused for the flag it kept: a fuzzer's find). */
static void elf_section_zero_is_never_compressed(void **state)
{
	(void)state;
	static unsigned char img[IMAGE_SIZE];
	Elf64_Shdr *sh = three_sections(img);
	sh[0].sh_flags = SHF_COMPRESSED;
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_offset = 64 + 3 * 64,
			      .sh_size = 1 };
	struct elf_file *f;
	assert_int_equal(elf_open_mem("zero.elf", img, sizeof(img), &f), 0);
	assert_false(elf_has_compressed_sections(f));
	f->sections[1].flags |= SHF_COMPRESSED;
	assert_true(elf_has_compressed_sections(f));
	elf_close(f);
}

/* The symbol sort orders by (address, size, table order) and keeps every symbol: random
 * tables with many aliases, addresses differing in high and low bytes alike. */
static void elf_symtab_sort_orders_by_address_size_and_order(void **state)
{
	(void)state;
	uint64_t seed = 42;
	for (int round = 0; round < 20; round++) {
		size_t n = 1 + (size_t)(round * 397 % 3000);
		struct elf_symtab t = { .syms = calloc(n, sizeof(struct elf_symbol)), .n = n };
		assert_non_null(t.syms);
		uint64_t sum = 0;
		for (size_t i = 0; i < n; i++) {
			seed = seed * 6364136223846793005u + 1442695040888963407u;
			uint64_t r = seed >> 11;
			t.syms[i].addr = (r % 7 == 0 ? r << 40 : 0) + (r % 512) * 16;
			t.syms[i].size = r >> 40 & 3;
			t.syms[i].order = (uint32_t)i;
			sum += i;
		}
		assert_int_equal(elf_symtab_sort(&t), 0);
		for (size_t i = 0; i < n; i++) {
			sum -= t.syms[i].order;
			if (i == 0)
				continue;
			const struct elf_symbol *a = &t.syms[i - 1], *b = &t.syms[i];
			assert_true(a->addr < b->addr ||
				    (a->addr == b->addr && (a->size < b->size ||
							    (a->size == b->size && a->order < b->order))));
		}
		assert_int_equal(sum, 0);
		free(t.syms); /* calloc'd here: elf_symtab_free unmaps what elf_symbols mapped */
	}
}

static int setup(void **state)
{
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(elf_sections_match_readelf),
		cmocka_unit_test(elf_build_id_matches_readelf),
		cmocka_unit_test(elf_function_symbols_match_readelf),
		cmocka_unit_test(elf_vaddr_offset_round_trip_lld_rosegment),
		cmocka_unit_test(elf_vaddr_offset_round_trip_bfd_separate_code),
		cmocka_unit_test(elf_address_outside_segments_is_erange),
		cmocka_unit_test(elf_compressed_nobits_section_is_empty),
		cmocka_unit_test(elf_section_zero_is_never_compressed),
		cmocka_unit_test(elf_symtab_sort_orders_by_address_size_and_order),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
