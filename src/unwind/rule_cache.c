/*
 * The rule cache: see unwind_internal.h. Misses (no FDE) are cached too, so code without
 * CFI does not cost a search per sample.
 */
#include "unwind/unwind_internal.h"

#include <elf.h>
#include <errno.h>
#include <string.h>

#include "base/err.h"
#include "elf/elf.h"

/* lld emits no CFI for its x86-64 PLT. A PLT entry is `jmp *GOT; push index; jmp PLT0` (16 bytes)
 * after a 16-byte header `push GOT+8; jmp *GOT+16`: the CFA is rsp+8 until a push has run,
 * rsp+16 after it, the same rule GNU ld writes as an expression. */
static int plt_row(struct unw_module *m, uint64_t vaddr, struct dwarf_cfi_row *row)
{
	struct elf_section *s = m->elf && m->elf->machine == EM_X86_64
					? elf_section_at(m->elf, vaddr) : NULL;
	if (!s || strncmp(s->name, ".plt", 4))
		return -ENOENT;
	uint64_t off = vaddr - s->addr;
	bool pushed = !strcmp(s->name, ".plt") && (off < 16 ? off >= 6 : off % 16 >= 11);
	memset(row, 0, sizeof(*row));
	row->start = vaddr;
	row->end = vaddr + 1;
	row->cfa.reg = 7;
	row->cfa.off = pushed ? 16 : 8;
	row->ra_reg = 16;
	row->regs[16].kind = DWARF_RULE_OFFSET;
	row->regs[16].off = -8;
	return 0;
}

int unw_rule_lookup(struct unw_ctx *c, struct unw_module *m, uint64_t vaddr,
		    const struct dwarf_cfi_row **row, uint64_t *rules)
{
	uint64_t h = (vaddr ^ (uint64_t)(uintptr_t)m) * 0x9e3779b97f4a7c15ull;
	struct unw_cache_entry *e = slot_cache_entry(&c->cache, h >> 53 & (UNW_CACHE_SIZE - 1));
	if (e && e->mod == m && e->vaddr == vaddr) {
		*row = &e->row;
		if (rules)
			*rules = e->rules;
		return e->result;
	}
	if (!e)
		e = &c->spare; /* no memory to keep the row: it is worked out every time */
	int r = m->cfi ? dwarf_cfi_row_at(m->cfi, vaddr, &e->row) : -ENOENT;
	if (r == -ENOENT && unw_module_try_debug(m))
		r = dwarf_cfi_row_at(m->cfi, vaddr, &e->row);
	if (r == -ENOENT)
		r = plt_row(m, vaddr, &e->row);
	if (r && r != -ENOENT) {
		/* Malformed CFI for this pc: treat as absent, the fallback may still work. */
		err_clear();
		r = -ENOENT;
	}
	e->mod = m;
	e->vaddr = vaddr;
	e->result = r;
	e->rules = 0;
	for (unsigned i = 0; !r && i < DWARF_CFI_NREGS; i++)
		if (e->row.regs[i].kind != DWARF_RULE_UNSET)
			e->rules |= 1ull << i;
	*row = &e->row;
	if (rules)
		*rules = e->rules;
	return r;
}

void unw_rule_forget(struct unw_ctx *c, const struct unw_module *m)
{
	for (size_t slot = 0; slot < c->cache.nslots; slot++) {
		struct unw_cache_entry *e = c->cache.slots[slot] ? slot_cache_entry(&c->cache, slot)
								 : NULL;
		if (e && e->mod == m)
			e->mod = NULL; /* lookups always name a module: matches none */
	}
}
