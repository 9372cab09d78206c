/*
 * libFuzzer target: MiniDebugInfo. The input is a .gnu_debugdata payload (xz), put in a
 * small x86-64 file of ours (tests/elf/elf_image.h's header) beside a .dynsym of one
 * symbol; an input that is not xz is taken as the inner file itself and compressed here,
 * without a check, so that mutations reach the inner file's parsing instead of failing
 * xz's CRC. Then the symbols both ways, and the nearest symbol found by one pass, which
 * must be the sorted table's.
 */
#include <elf.h>
#include <lzma.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/search.h"
#include "elf/elf.h"
#include "../tests/elf/elf_image.h"

static const uint8_t xz_magic[6] = { 0xfd, '7', 'z', 'X', 'Z', 0 };
static const char shstrtab[] = "\0.shstrtab\0.dynstr\0.dynsym\0.gnu_debugdata";
static const char dynstr[] = "\0exported";

/* The outer file: header, .dynstr, .dynsym, the payload, .shstrtab, section headers. */
static uint8_t *outer_image(const uint8_t *payload, size_t n, size_t *size)
{
	size_t dynstr_off = sizeof(Elf64_Ehdr), dynsym_off = dynstr_off + 16,
	       payload_off = dynsym_off + 2 * sizeof(Elf64_Sym), shstr_off = payload_off + n,
	       sh_off = (shstr_off + sizeof(shstrtab) + 7) & ~(size_t)7;
	*size = sh_off + 5 * sizeof(Elf64_Shdr);
	uint8_t *img = calloc(1, *size);
	if (!img)
		return NULL;
	elf_image_header(img, sh_off, 5, 1);
	memcpy(img + dynstr_off, dynstr, sizeof(dynstr));
	Elf64_Sym sym = { .st_name = 1, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			  .st_shndx = 4, .st_value = 0x1000, .st_size = 0x10 };
	memcpy(img + dynsym_off + sizeof(Elf64_Sym), &sym, sizeof(sym));
	if (n)
		memcpy(img + payload_off, payload, n);
	memcpy(img + shstr_off, shstrtab, sizeof(shstrtab));
	Elf64_Shdr sh[5] = {
		{ 0 },
		{ .sh_name = 1, .sh_type = SHT_STRTAB, .sh_offset = shstr_off,
		  .sh_size = sizeof(shstrtab) },
		{ .sh_name = 11, .sh_type = SHT_STRTAB, .sh_offset = dynstr_off,
		  .sh_size = sizeof(dynstr) },
		{ .sh_name = 19, .sh_type = SHT_DYNSYM, .sh_offset = dynsym_off,
		  .sh_size = 2 * sizeof(Elf64_Sym), .sh_link = 2, .sh_entsize = sizeof(Elf64_Sym) },
		{ .sh_name = 27, .sh_type = SHT_PROGBITS, .sh_offset = payload_off, .sh_size = n },
	};
	memcpy(img + sh_off, sh, sizeof(sh));
	return img;
}

static void same_nearest(struct elf_file *f, const struct elf_symtab *t, uint64_t addr)
{
	size_t lo = UPPER_BOUND(t->syms, t->n, .addr, addr);
	struct elf_symbol s;
	bool found = elf_symbol_at_or_below(f, ELF_SYMS_BOTH, true, addr, false, &s);
	if (found != (lo > 0) || (found && s.order != t->syms[lo - 1].order))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *packed = NULL;
	size_t npacked = 0;
	if (size < sizeof(xz_magic) || memcmp(data, xz_magic, sizeof(xz_magic))) {
		size_t room = lzma_stream_buffer_bound(size);
		if (!(packed = malloc(room)) ||
		    lzma_easy_buffer_encode(0, LZMA_CHECK_NONE, NULL, data, size, packed, &npacked,
					    room) != LZMA_OK) {
			free(packed);
			return 0;
		}
		data = packed;
		size = npacked;
	}
	size_t n;
	uint8_t *img = outer_image(data, size, &n);
	struct elf_file *f;
	if (img && !elf_open_mem("fuzz.elf", img, n, &f)) {
		bool attached = !elf_attach_minidebuginfo(f);
		struct elf_symtab t;
		if (!elf_symbols(f, ELF_SYMS_SYMTAB_ELSE_DYNSYM, true, &t)) {
			/* .dynsym is read beside an inner .symtab, always */
			bool dyn = false;
			for (size_t k = 0; k < t.n; k++)
				dyn |= t.syms[k].dynamic;
			if (!dyn)
				abort();
			for (size_t k = 0; k < t.n && k < 64; k += 1 + t.n / 16) {
				same_nearest(f, &t, t.syms[k].addr);
				same_nearest(f, &t, t.syms[k].addr + 1);
			}
			elf_symtab_free(&t);
		}
		if (attached)
			for (size_t i = 0; i < f->minidebug->nsections; i++) {
				const uint8_t *p;
				size_t m;
				elf_section_data(f->minidebug, &f->minidebug->sections[i], &p, &m);
			}
		elf_close(f);
	}
	err_clear();
	free(img);
	free(packed);
	return 0;
}
