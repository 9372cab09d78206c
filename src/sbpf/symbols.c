/*
 * Function names for messages, disassembly and profiles, from .symtab and .dynsym (sh_link
 * names the string table, so section names are not needed). Unlike the reference's debug
 * labels (at most 255 bytes), names of any length up to 4 KiB are kept: Rust's mangled
 * generic names run longer. Sorted by pc; a symbol without a size ends where the next one
 * starts. Also which syscall a call instruction makes, for profiles that key syscalls by
 * the pc of their call.
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "base/search.h"
#include "base/vec.h"
#include "sbpf/elf_parse.h"
#include "sbpf/isa.h"
#include "sbpf/link_internal.h"
#include "sbpf/program.h"
#include "sbpf/syscall.h"

enum { SYMBOL_NAME_MAX = 4096 };

static int by_pc(const void *a, const void *b)
{
	const struct sbpf_symbol *x = a, *y = b;
	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void add_table(struct sbpf_program *p, struct sbpf_elf *e, const struct sbpf_elf_shdr *tab,
		      size_t *cap, uint64_t base)
{
	if (tab->link >= e->nsh || e->sh[tab->link].type != SHT_STRTAB)
		return;
	const struct sbpf_elf_shdr *str = &e->sh[tab->link];
	for (uint64_t off = tab->offset; off + sizeof(Elf64_Sym) <= tab->offset + tab->size;
	     off += sizeof(Elf64_Sym)) {
		struct sbpf_elf_sym s;
		const char *name;
		size_t len;
		if (sbpf_elf_read_sym(e->bytes, e->size, off, &s))
			return;
		if ((s.info & 0xf) != STT_FUNC || s.value < base || !s.name ||
		    sbpf_elf_string(e, str, s.name, SYMBOL_NAME_MAX, &name, &len) || !len)
			continue;
		uint64_t pc = (s.value - base) / 8;
		if (pc >= p->ninsns)
			continue;
		const char *copy = arena_strndup(&p->arena, name, len);
		struct sbpf_symbol *sym = copy ? sbpf_add_symbol(p, cap) : NULL;
		if (!sym)
			return;
		uint64_t end = s.size ? pc + (s.size + 7) / 8 : 0;
		*sym = (struct sbpf_symbol){ pc, end, copy };
	}
}

void sbpf_collect_symbols(struct sbpf_program *p, const uint8_t *bytes, size_t size)
{
	struct sbpf_elf e = { .bytes = bytes, .size = size };
	if (sbpf_elf_read_ehdr(bytes, size, &e.eh) || !e.eh.shnum)
		return;
	e.sh = calloc(e.eh.shnum, sizeof(*e.sh));
	if (!e.sh)
		return;
	for (size_t i = 0; i < e.eh.shnum; i++, e.nsh++)
		if (sbpf_elf_read_shdr(bytes, size, e.eh.shoff + i * sizeof(Elf64_Shdr), &e.sh[i]))
			break;
	uint64_t base = sbpf_strict_elf(p->version) ? p->text_vaddr : p->text_vaddr - SBPF_REGION_SIZE;
	size_t cap = 0;
	for (size_t i = 0; i < e.nsh; i++)
		if (e.sh[i].type == SHT_SYMTAB || e.sh[i].type == SHT_DYNSYM)
			add_table(p, &e, &e.sh[i], &cap, base);
	free(e.sh);
	sbpf_sort_symbols(p);
}

struct sbpf_symbol *sbpf_add_symbol(struct sbpf_program *p, size_t *cap)
{
	return vec_push_raw((void **)&p->syms, &p->nsyms, cap, sizeof(*p->syms));
}

void sbpf_sort_symbols(struct sbpf_program *p)
{
	if (!p->nsyms)
		return;
	qsort(p->syms, p->nsyms, sizeof(*p->syms), by_pc);
	/* one name per pc: the first in order (tables list the same function twice) */
	size_t n = 0;
	for (size_t i = 0; i < p->nsyms; i++)
		if (!n || p->syms[n - 1].pc != p->syms[i].pc)
			p->syms[n++] = p->syms[i];
	p->nsyms = n;
	for (size_t i = 0; i < n; i++) {
		uint64_t next = i + 1 < n ? p->syms[i + 1].pc : p->ninsns;
		if (p->syms[i].end_pc <= p->syms[i].pc || p->syms[i].end_pc > next)
			p->syms[i].end_pc = next;
	}
}

const struct sbpf_symbol *sbpf_program_symbol_at(const struct sbpf_program *p, uint64_t pc)
{
	size_t lo = UPPER_BOUND(p->syms, p->nsyms, .pc, pc);
	if (!lo || pc >= p->syms[lo - 1].end_pc)
		return NULL;
	return &p->syms[lo - 1];
}

const struct sbpf_syscall *sbpf_program_syscall_at(const struct sbpf_program *p, uint64_t pc)
{
	if (pc >= p->ninsns)
		return NULL;
	const struct sbpf_dinsn *d = &p->code[pc];
	if (d->kind != SBPF_K_CALL || d->pad != SBPF_CALL_SYSCALL || !p->syscalls ||
	    d->imm < 0 || (uint64_t)d->imm >= p->syscalls->n)
		return NULL;
	return &p->syscalls->v[d->imm];
}
