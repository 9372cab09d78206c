/*
 * stapsdt notes (systemtap v3, note type 3, owner "stapsdt"): the descriptor holds the
 * probe address, the link-time address of .stapsdt.base, the semaphore address (each
 * pointer-sized), then provider, name and argument string, NUL-terminated. When the file's
 * .stapsdt.base has moved since (prelink), probe addresses move by the same amount, as
 * systemtap's readers do; semaphores are not adjusted (libbpf does not either).
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/err.h"
#include "base/vec.h"
#include "elf/elf.h"
#include "probes/usdt.h"

#define NT_STAPSDT 3

int usdt_parse_desc(const uint8_t *desc, size_t size, bool is64, bool big_endian,
		    struct arena *arena, struct usdt_probe *out)
{
	struct cur c = cur_make(desc, size, big_endian);
	memset(out, 0, sizeof(*out));
	unsigned w = is64 ? 8 : 4;
	out->pc = cur_uN(&c, w);
	out->note_base = cur_uN(&c, w);
	out->semaphore = cur_uN(&c, w);
	const char *provider = cur_str(&c), *name = cur_str(&c), *args = cur_str(&c);
	if (!cur_ok(&c))
		return err_set(-EINVAL, "descriptor of %zu bytes ends inside its addresses or a "
					"string that is not NUL-terminated", size);
	if (!*provider || !*name)
		return err_set(-EINVAL, "empty provider or probe name");
	out->provider = arena_strdup(arena, provider);
	out->name = arena_strdup(arena, name);
	out->args_text = arena_strdup(arena, args);
	if (!out->provider || !out->name || !out->args_text)
		return err_set(-ENOMEM, "out of memory");
	return 0;
}

struct reader {
	struct elf_file *f;
	struct usdt_list *l;
	uint64_t base;   /* address of .stapsdt.base in this file, 0 if it has none */
};

static int add_note(const struct elf_note *n, void *ctx)
{
	struct reader *r = ctx;
	if (n->type != NT_STAPSDT || strcmp(n->name, "stapsdt"))
		return 0;
	struct usdt_probe *p = vec_push(r->l);
	if (!p)
		return err_set(-ENOMEM, "out of memory");
	int e = usdt_parse_desc(n->desc, n->desc_size, r->f->is64, r->f->big_endian,
				&r->l->arena, p);
	if (!e)
		e = usdt_parse_args(p->args_text, r->l->arch, &r->l->arena, &p->args, &p->nargs);
	if (e) {
		r->l->n--;
		return err_prefix(e, "%s: stapsdt note at 0x%llx", r->f->path,
				  (unsigned long long)n->offset);
	}
	p->note_offset = n->offset;
	if (r->base && p->note_base && r->base != p->note_base)
		p->pc += r->base - p->note_base;
	if (r->f->type != ET_REL) {
		if (elf_vaddr_to_offset(r->f, p->pc, &p->pc_offset)) {
			r->l->n--;
			return err_set(-EINVAL, "%s: probe %s:%s at 0x%llx is outside every loaded segment",
				       r->f->path, p->provider, p->name, (unsigned long long)p->pc);
		}
		/* A semaphore outside the file's bytes (.bss) keeps sem_offset 0: the kernel
		 * cannot count it, and attaching says so. */
		if (p->semaphore && elf_vaddr_to_offset(r->f, p->semaphore, &p->sem_offset))
			p->sem_offset = 0;
	}
	return 0;
}

/* Link-time addresses of the symbols in memory operands ("8@level(%rip)": the value is at
 * level), from the file's symbol tables; an operand whose symbol is not there (a stripped
 * file) stays unresolved. The tables are read only when some operand names a symbol. */
static int resolve_symbols(struct elf_file *f, struct usdt_list *l)
{
	struct elf_symtab t = { 0 };
	bool loaded = false;
	for (size_t i = 0; i < l->n; i++)
		for (size_t j = 0; j < l->v[i].nargs; j++) {
			struct usdt_arg *a = &l->v[i].args[j];
			if (!a->symbol)
				continue;
			if (!loaded) {
				int e = elf_symbols(f, ELF_SYMS_BOTH, true, &t);
				if (e)
					return e;
				loaded = true;
			}
			for (size_t k = 0; k < t.n && !a->symbol_found; k++)
				if (!strcmp(t.syms[k].name, a->symbol)) {
					a->symbol_found = true;
					a->symbol_addr = t.syms[k].addr;
				}
		}
	if (loaded)
		elf_symtab_free(&t);
	return 0;
}

int usdt_read(struct elf_file *f, struct usdt_list *out)
{
	memset(out, 0, sizeof(*out));
	if (f->machine == EM_X86_64)
		out->arch = USDT_ARCH_X86_64;
	else if (f->machine == EM_AARCH64)
		out->arch = USDT_ARCH_AARCH64;
	else {
		bool any = false;
		for (size_t i = 0; i < f->nsections && !any; i++)
			any = f->sections[i].name && !strcmp(f->sections[i].name, ".note.stapsdt");
		if (any)
			return err_set(-ENOTSUP, "%s: USDT arguments of machine %u are not supported",
				       f->path, f->machine);
		return 0;
	}
	out->relocatable = f->type == ET_REL;
	struct reader r = { f, out, 0 };
	struct elf_section *base = elf_section_by_name(f, ".stapsdt.base");
	if (base)
		r.base = base->addr;
	int e = elf_notes(f, add_note, &r);
	if (!e && !out->relocatable)
		e = resolve_symbols(f, out);
	if (e)
		usdt_list_free(out);
	return e;
}

void usdt_list_free(struct usdt_list *l)
{
	free(l->v);
	arena_free(&l->arena);
	memset(l, 0, sizeof(*l));
}
