/*
 * Go's .gopclntab in the three layouts tally reads, built here from the runtime's own
 * declarations (runtime/symtab.go, runtime/runtime2.go of Go 1.16, 1.18 and 1.20: only
 * 1.18's can be produced by this machine's go1.19, tests/symbolize/go_pclntab.test.sh):
 * two functions, main.a in a.go (line 10, then 12; a frame of 24 bytes from 0x8 to 0x38)
 * and main.b in b.go (line 20), and damaged tables that must fail with the section named
 * or leave an address unnamed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/err.h"
#include "elf/gopclntab.h"

#define TEXT 0x401000u

struct img {
	uint8_t b[1024];
	size_t n;
};

static size_t put(struct img *m, const void *p, size_t n)
{
	size_t at = m->n;
	memcpy(m->b + at, p, n);
	m->n += n;
	return at;
}

static void put32(struct img *m, uint32_t v) { put(m, &v, 4); }
static void put64(struct img *m, uint64_t v) { put(m, &v, 8); }

/* Pc-value tables: (zig-zag value delta from -1, pc delta) pairs, then 0. */
static const uint8_t a_file[] = { 2, 0x40, 0 }, a_line[] = { 22, 0x10, 4, 0x30, 0 };
static const uint8_t b_file[] = { 4, 0x40, 0 }, b_line[] = { 42, 0x40, 0 };
/* main.a's stack pointer: 0 below its entry value, 24 from 0x8 (the frame made), 0 again
 * from 0x38 (its epilogue). */
static const uint8_t a_sp[] = { 2, 0x08, 48, 0x30, 47, 0x08, 0 };

/* A table of layout version (116, 118 or 120) into m; *rec_b is where main.b's record
 * lies. */
static void build(struct img *m, unsigned version, size_t *rec_b)
{
	static const char names[] = "main.a\0main.b", files[] = "a.go\0b.go";
	bool v116 = version == 116;
	memset(m, 0, sizeof(*m));
	put32(m, v116 ? 0xfffffffa : version == 118 ? 0xfffffff0 : 0xfffffff1);
	uint8_t hdr[4] = { 0, 0, 1, 8 };
	put(m, hdr, 4);
	size_t words = m->n;
	m->n += (v116 ? 7 : 8) * 8;
	size_t o_names = put(m, names, sizeof(names));
	size_t o_cutab = m->n;
	put32(m, 0);
	put32(m, 5);
	size_t o_files = put(m, files, sizeof(files));
	size_t o_pc = m->n;
	m->b[m->n++] = 0; /* offset 0 means no table */
	uint32_t af = (uint32_t)(put(m, a_file, 3) - o_pc), al = (uint32_t)(put(m, a_line, 5) - o_pc);
	uint32_t bf = (uint32_t)(put(m, b_file, 3) - o_pc), bl = (uint32_t)(put(m, b_line, 3) - o_pc);
	uint32_t as = (uint32_t)(put(m, a_sp, sizeof(a_sp)) - o_pc);
	m->n = (m->n + 7) & ~(size_t)7;
	size_t o_pcln = m->n;
	size_t rec = v116 ? 8 + 36 : 4 + 36 + (version == 120 ? 4 : 0);
	size_t ftab = v116 ? 5 * 8 : 5 * 4 + 4;
	uint32_t entry[3] = { 0, 0x40, 0x80 };
	for (int i = 0; i < 3; i++) {
		if (v116) {
			put64(m, TEXT + entry[i]);
			if (i < 2)
				put64(m, ftab + i * rec);
		} else {
			put32(m, entry[i]);
			put32(m, i < 2 ? (uint32_t)(ftab + i * rec) : 0);
		}
	}
	for (int i = 0; i < 2; i++) {
		if (i == 1)
			*rec_b = m->n;
		if (v116)
			put64(m, TEXT + entry[i]);
		else
			put32(m, entry[i]);
		put32(m, i ? 7 : 0); /* nameoff */
		put32(m, 0);         /* args */
		put32(m, 0);         /* deferreturn */
		put32(m, i ? 0 : as); /* pcsp */
		put32(m, i ? bf : af);
		put32(m, i ? bl : al);
		put32(m, 0); /* npcdata */
		put32(m, 0); /* cuOffset */
		if (version == 120)
			put32(m, 9); /* startLine */
		put32(m, 0); /* funcID, flag, pad, nfuncdata */
	}
	uint64_t w[8] = { 2, 2 }, *t = w + 2;
	if (!v116)
		*t++ = TEXT;
	*t++ = o_names;
	*t++ = o_cutab;
	*t++ = o_files;
	*t++ = o_pc;
	*t++ = o_pcln;
	memcpy(m->b + words, w, (v116 ? 7 : 8) * 8);
}

static void expect(const struct elf_gopclntab *t, uint64_t pc, const char *fn, const char *file,
		   uint32_t line)
{
	struct elf_gofunc f;
	assert_true(elf_gopclntab_find(t, pc, &f));
	assert_string_equal(f.name, fn);
	const char *got = NULL;
	uint32_t ln = 0;
	assert_true(elf_gopclntab_line(t, &f, pc, &got, &ln));
	assert_string_equal(got, file);
	assert_int_equal(ln, line);
}

static void reads_layout(unsigned version)
{
	struct img m;
	size_t rec_b;
	build(&m, version, &rec_b);
	struct elf_gopclntab *t;
	assert_int_equal(elf_gopclntab_open_mem("t", m.b, m.n, &t), 0);
	assert_int_equal(elf_gopclntab_version(t), version);
	assert_int_equal(elf_gopclntab_nfuncs(t), 2);
	expect(t, TEXT, "main.a", "a.go", 10);
	expect(t, TEXT + 0xf, "main.a", "a.go", 10);
	expect(t, TEXT + 0x10, "main.a", "a.go", 12);
	expect(t, TEXT + 0x3f, "main.a", "a.go", 12);
	expect(t, TEXT + 0x40, "main.b", "b.go", 20);
	expect(t, TEXT + 0x7f, "main.b", "b.go", 20);
	struct elf_gofunc f;
	assert_false(elf_gopclntab_find(t, TEXT - 1, &f));
	assert_false(elf_gopclntab_find(t, TEXT + 0x80, &f));
	assert_true(elf_gopclntab_func(t, 1, &f));
	assert_int_equal(f.entry, TEXT + 0x40);
	assert_int_equal(f.end, TEXT + 0x80);
	int32_t sp;
	assert_false(elf_gopclntab_spdelta(t, &f, TEXT + 0x40, &sp)); /* main.b has no table */
	assert_true(elf_gopclntab_func(t, 0, &f));
	const uint32_t pcs[] = { 0, 7, 8, 0x37, 0x38, 0x3f }, want[] = { 0, 0, 24, 24, 0, 0 };
	for (size_t i = 0; i < sizeof(pcs) / sizeof(*pcs); i++) {
		assert_true(elf_gopclntab_spdelta(t, &f, TEXT + pcs[i], &sp));
		assert_int_equal(sp, want[i]);
	}
	/* Opened from memory, with no ELF file to find go:func.* in: no inline frames. */
	struct elf_goframe fr[4];
	assert_int_equal(elf_gopclntab_frames(t, &f, TEXT + 0x10, fr, 4), 1);
	assert_string_equal(fr[0].name, "main.a");
	assert_string_equal(fr[0].file, "a.go");
	assert_int_equal(fr[0].line, 12);
	elf_gopclntab_close(t);
}

static void gopclntab_reads_go_1_16_layout(void **state) { (void)state; reads_layout(116); }
static void gopclntab_reads_go_1_18_layout(void **state) { (void)state; reads_layout(118); }
static void gopclntab_reads_go_1_20_layout(void **state) { (void)state; reads_layout(120); }

static void fails_with(struct img *m, const char *what)
{
	struct elf_gopclntab *t = NULL;
	assert_int_equal(elf_gopclntab_open_mem("prog", m->b, m->n, &t), -EINVAL);
	assert_non_null(strstr(err_msg(), what));
	assert_non_null(strstr(err_msg(), "prog: .gopclntab at 0x"));
	err_clear();
}

static void gopclntab_bad_headers_fail_naming_the_section(void **state)
{
	(void)state;
	struct img m;
	size_t rec_b;
	build(&m, 118, &rec_b);
	m.b[0] = 0xfb; /* Go 1.2's magic: not read */
	fails_with(&m, "magic");
	build(&m, 118, &rec_b);
	m.b[7] = 3;
	fails_with(&m, "pointer size");
	build(&m, 118, &rec_b);
	uint64_t huge = 1u << 28;
	memcpy(m.b + 8, &huge, 8);
	fails_with(&m, "more functions than the function table holds");
	build(&m, 118, &rec_b);
	uint64_t past = m.n + 1;
	memcpy(m.b + 8 + 7 * 8, &past, 8);
	fails_with(&m, "table offset past the section");
	struct img shorter = m;
	shorter.n = 20;
	fails_with(&shorter, "shorter than its header");
}

static void gopclntab_damaged_records_leave_addresses_unnamed(void **state)
{
	(void)state;
	struct img m;
	size_t rec_b;
	build(&m, 118, &rec_b);
	struct elf_gopclntab *t;
	uint32_t bad = 0x7fffffff;
	memcpy(m.b + rec_b + 4, &bad, 4);  /* name offset past the section */
	memcpy(m.b + rec_b + 24, &bad, 4); /* line table past the section */
	assert_int_equal(elf_gopclntab_open_mem("t", m.b, m.n, &t), 0);
	struct elf_gofunc f;
	assert_true(elf_gopclntab_find(t, TEXT + 0x40, &f));
	assert_null(f.name);
	const char *file = NULL;
	uint32_t line = 0;
	assert_false(elf_gopclntab_line(t, &f, TEXT + 0x40, &file, &line));
	expect(t, TEXT, "main.a", "a.go", 10);
	elf_gopclntab_close(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gopclntab_reads_go_1_16_layout),
		cmocka_unit_test(gopclntab_reads_go_1_18_layout),
		cmocka_unit_test(gopclntab_reads_go_1_20_layout),
		cmocka_unit_test(gopclntab_bad_headers_fail_naming_the_section),
		cmocka_unit_test(gopclntab_damaged_records_leave_addresses_unnamed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
