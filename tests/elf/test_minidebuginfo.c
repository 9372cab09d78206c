/*
 * MiniDebugInfo on images built here: an outer x86-64 file with a .dynsym of one exported
 * function and a .gnu_debugdata holding, xz-compressed (liblzma), an inner file whose
 * .symtab has a static one. Its symbols join .dynsym's; a file with a .symtab of its own
 * keeps it; damaged payloads (a bomb, truncated xz, an inner file for another machine)
 * fail with the file named and leave the outer file as it was.
 */
#include <elf.h>
#include <errno.h>
#include <lzma.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/err.h"
#include "elf/elf.h"
#include "elf_image.h"

struct sec {
	const char *name;
	uint32_t type, link;
	const void *data;
	size_t size;
};

/* A 64-bit little-endian ET_DYN image of machine with sections secs (after the null one,
 * a .shstrtab last); *size its size. */
static uint8_t *image(uint16_t machine, const struct sec *secs, size_t n, size_t *size)
{
	char names[256] = "";
	size_t nlen = 1, name_at[8];
	for (size_t i = 0; i <= n; i++) {
		const char *nm = i < n ? secs[i].name : ".shstrtab";
		name_at[i] = nlen;
		memcpy(names + nlen, nm, strlen(nm) + 1);
		nlen += strlen(nm) + 1;
	}
	size_t off = sizeof(Elf64_Ehdr), at[8];
	for (size_t i = 0; i < n; i++) {
		at[i] = off;
		off = (off + secs[i].size + 7) & ~(size_t)7;
	}
	at[n] = off;
	off = (off + nlen + 7) & ~(size_t)7;
	*size = off + (n + 2) * sizeof(Elf64_Shdr);
	uint8_t *img = calloc(1, *size);
	assert_non_null(img);
	elf_image_header(img, off, (uint16_t)(n + 2), (uint16_t)(n + 1));
	((Elf64_Ehdr *)img)->e_machine = machine;
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + off);
	for (size_t i = 0; i < n; i++) {
		memcpy(img + at[i], secs[i].data, secs[i].size);
		bool syms = secs[i].type == SHT_SYMTAB || secs[i].type == SHT_DYNSYM;
		sh[i + 1] = (Elf64_Shdr){ .sh_name = (uint32_t)name_at[i], .sh_type = secs[i].type,
					  .sh_offset = at[i], .sh_size = secs[i].size,
					  .sh_link = secs[i].link,
					  .sh_entsize = syms ? sizeof(Elf64_Sym) : 0 };
	}
	memcpy(img + at[n], names, nlen);
	sh[n + 1] = (Elf64_Shdr){ .sh_name = (uint32_t)name_at[n], .sh_type = SHT_STRTAB,
				  .sh_offset = at[n], .sh_size = nlen };
	return img;
}

/* A symbol table of one function, named by string 1 of its string table. */
static void one_function(Elf64_Sym syms[2], uint8_t bind, uint64_t addr)
{
	memset(syms, 0, 2 * sizeof(*syms));
	syms[1] = (Elf64_Sym){ .st_name = 1, .st_info = ELF64_ST_INFO(bind, STT_FUNC),
			       .st_shndx = 1, .st_value = addr, .st_size = 0x10 };
}

static const char hidden_str[] = "\0hidden", exported_str[] = "\0exported";

/* The inner file: a .symtab holding the static function hidden at 0x1100. */
static uint8_t *inner(uint16_t machine, size_t *size)
{
	Elf64_Sym syms[2];
	one_function(syms, STB_LOCAL, 0x1100);
	struct sec s[] = { { ".strtab", SHT_STRTAB, 0, hidden_str, sizeof(hidden_str) },
			   { ".symtab", SHT_SYMTAB, 1, syms, sizeof(syms) } };
	return image(machine, s, 2, size);
}

static uint8_t *xz(const void *data, size_t n, size_t *out)
{
	size_t room = lzma_stream_buffer_bound(n);
	uint8_t *buf = malloc(room);
	assert_non_null(buf);
	*out = 0;
	assert_int_equal(lzma_easy_buffer_encode(1, LZMA_CHECK_CRC64, NULL, data, n, buf, out,
						 room),
			 LZMA_OK);
	return buf;
}

/* The outer file: .dynsym with exported at 0x1000 (and a .symtab with it too when
 * with_symtab), .gnu_debugdata holding payload. Opened into *f; the image is returned. */
static uint8_t *outer(const void *payload, size_t n, bool with_symtab, struct elf_file **f)
{
	Elf64_Sym syms[2];
	one_function(syms, STB_GLOBAL, 0x1000);
	struct sec s[] = { { ".dynstr", SHT_STRTAB, 0, exported_str, sizeof(exported_str) },
			   { ".dynsym", SHT_DYNSYM, 1, syms, sizeof(syms) },
			   { ".gnu_debugdata", SHT_PROGBITS, 0, payload, n },
			   { ".symtab", SHT_SYMTAB, 1, syms, sizeof(syms) } };
	size_t size;
	uint8_t *img = image(EM_X86_64, s, with_symtab ? 4 : 3, &size);
	assert_int_equal(elf_open_mem("outer", img, size, f), 0);
	return img;
}

static void elf_minidebuginfo_symtab_joins_dynsym(void **state)
{
	(void)state;
	size_t n, nz;
	uint8_t *in = inner(EM_X86_64, &n), *z = xz(in, n, &nz);
	struct elf_file *f;
	uint8_t *img = outer(z, nz, false, &f);
	assert_int_equal(elf_attach_minidebuginfo(f), 0);
	struct elf_symtab t;
	assert_int_equal(elf_symbols(f, ELF_SYMS_SYMTAB_ELSE_DYNSYM, false, &t), 0);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.n_symtab, 1);
	assert_string_equal(t.syms[0].name, "exported");
	assert_true(t.syms[0].dynamic);
	assert_int_equal(t.syms[0].order, 1); /* after the inner .symtab, as a .symtab's are */
	assert_string_equal(t.syms[1].name, "hidden");
	assert_int_equal(t.syms[1].addr, 0x1100);
	assert_false(t.syms[1].dynamic);
	elf_symtab_free(&t);
	struct elf_symbol s;
	assert_true(elf_symbol_at_or_below(f, ELF_SYMS_SYMTAB_ELSE_DYNSYM, false, 0x1108, false, &s));
	assert_string_equal(s.name, "hidden");
	elf_close(f);
	free(img);
	free(z);
	free(in);
}

static void elf_minidebuginfo_ignored_beside_a_symtab(void **state)
{
	(void)state;
	size_t n, nz;
	uint8_t *in = inner(EM_X86_64, &n), *z = xz(in, n, &nz);
	struct elf_file *f;
	uint8_t *img = outer(z, nz, true, &f);
	assert_int_equal(elf_attach_minidebuginfo(f), -ENOENT);
	assert_null(f->minidebug);
	elf_close(f);
	free(img);
	free(z);
	free(in);
}

/* attach_fails PAYLOAD N WHAT: the attach fails with WHAT in a message naming the outer
 * file, and the outer file's symbols are its .dynsym's. */
static void attach_fails(const void *payload, size_t n, const char *what)
{
	struct elf_file *f;
	uint8_t *img = outer(payload, n, false, &f);
	err_clear();
	assert_int_equal(elf_attach_minidebuginfo(f), -EINVAL);
	assert_non_null(strstr(err_msg(), what));
	assert_true(!strncmp(err_msg(), "outer: .gnu_debugdata: ", 23));
	assert_null(f->minidebug);
	struct elf_symtab t;
	assert_int_equal(elf_symbols(f, ELF_SYMS_SYMTAB_ELSE_DYNSYM, false, &t), 0);
	assert_int_equal(t.n, 1);
	assert_string_equal(t.syms[0].name, "exported");
	elf_symtab_free(&t);
	elf_close(f);
	free(img);
}

/* 64 MiB of zeros, 10 KB of xz: the outer file's few hundred bytes allow a megabyte or so. */
static void elf_minidebuginfo_xz_bomb_stops_at_the_cap(void **state)
{
	(void)state;
	size_t n = (size_t)64 << 20, nz;
	uint8_t *zeros = calloc(1, n), *z;
	assert_non_null(zeros);
	z = xz(zeros, n, &nz);
	free(zeros);
	attach_fails(z, nz, "inflates past the size a symbol table could have");
	free(z);
}

static void elf_minidebuginfo_truncated_xz_fails(void **state)
{
	(void)state;
	size_t n, nz;
	uint8_t *in = inner(EM_X86_64, &n), *z = xz(in, n, &nz);
	attach_fails(z, nz / 2, "truncated xz data");
	attach_fails(z, nz - 1, "truncated xz data");
	free(z);
	free(in);
}

static void elf_minidebuginfo_for_another_machine_fails(void **state)
{
	(void)state;
	size_t n, nz;
	uint8_t *in = inner(EM_AARCH64, &n), *z = xz(in, n, &nz);
	attach_fails(z, nz, "another machine");
	free(z);
	free(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(elf_minidebuginfo_symtab_joins_dynsym),
		cmocka_unit_test(elf_minidebuginfo_ignored_beside_a_symtab),
		cmocka_unit_test(elf_minidebuginfo_xz_bomb_stops_at_the_cap),
		cmocka_unit_test(elf_minidebuginfo_truncated_xz_fails),
		cmocka_unit_test(elf_minidebuginfo_for_another_machine_fails),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
