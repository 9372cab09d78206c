/*
 * Loading an sBPF program: the e_flags version picks the lenient loader (v0-v2: sections,
 * dynamic relocations, murmur3-keyed function registry, read-only sections copied into one
 * region at 0x1_0000_0000) or the strict one (v3+: exactly a rodata and a bytecode program
 * header at fixed addresses, nothing to relocate). Raw bytecode (no ELF magic) runs as the
 * version given. Then the verifier, pre-decoding and the symbol table for names.
 */
#include "sbpf/program.h"

#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/err.h"
#include "base/file.h"
#include "sbpf/elf_parse.h"
#include "sbpf/link_internal.h"
#include "sbpf/syscall.h"
#include "sbpf/vm.h"

/* e_machine of the files of sBPF v3 on (solana-sbpf's EM_SBPF), which <elf.h> lacks. */
enum { SBPF_EM_SBPF = 263 };

struct ctx {
	const char *name;
	const struct sbpf_load_options *opt;
	const struct sbpf_syscalls *syscalls;
	struct sbpf_program *p;
};

static int lerr(const struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int lerr(const struct ctx *c, const char *fmt, ...)
{
	char buf[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return err_set(-EINVAL, "%s: %s", c->name, buf);
}

/* A parser failure as the loader reports it (the reference's From<ElfParserError>). */
static int parse_err(const struct ctx *c, const struct sbpf_elf *e, enum sbpf_elf_err err)
{
	char buf[1200];
	if (err == SBPF_ELF_INVALID_PROGRAM_HEADER)
		return lerr(c, "InvalidProgramHeader");
	if (err == SBPF_ELF_OUT_OF_BOUNDS)
		return lerr(c, "ValueOutOfBounds");
	sbpf_elf_err_format(e, err, buf, sizeof(buf));
	return lerr(c, "FailedToParse(%s)", buf);
}

static bool in_range(uint64_t start, uint64_t len, uint64_t size)
{
	return start <= size && len <= size - start;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* ---- lenient (v0-v2) ---- */

static int validate(struct ctx *c, struct sbpf_elf *e, const struct sbpf_elf_shdr **text)
{
	const struct sbpf_elf_ehdr *h = &e->eh;
	if (h->ident[EI_CLASS] != ELFCLASS64)
		return lerr(c, "WrongClass");
	if (h->ident[EI_DATA] != ELFDATA2LSB)
		return lerr(c, "WrongEndianess");
	if (h->ident[EI_OSABI] != ELFOSABI_NONE)
		return lerr(c, "WrongAbi");
	if (h->machine != EM_BPF && h->machine != SBPF_EM_SBPF)
		return lerr(c, "WrongMachine");
	if (h->type != ET_DYN)
		return lerr(c, "WrongType");
	size_t ntext = 0;
	for (size_t i = 0; i < e->nsh; i++)
		if (sbpf_elf_section_is(e, &e->sh[i], ".text"))
			ntext++, *text = &e->sh[i];
	if (ntext != 1)
		return lerr(c, "NotOneTextSection");
	for (size_t i = 0; i < e->nsh; i++) {
		const struct sbpf_elf_shdr *s = &e->sh[i];
		const char *name;
		size_t len;
		if (sbpf_elf_section_name(e, s, &name, &len))
			continue;
		bool writable = (s->flags & (SHF_ALLOC | SHF_WRITE)) == (SHF_ALLOC | SHF_WRITE);
		if (!strncmp(name, ".bss", 4) ||
		    (writable && !strncmp(name, ".data", 5) && strncmp(name, ".data.rel", 9)))
			return lerr(c, "WritableSectionNotSupported(\"%s\")", name);
	}
	for (size_t i = 0; i < e->nsh; i++)
		if (e->sh[i].offset + e->sh[i].size < e->sh[i].offset ||
		    !in_range(e->sh[i].offset, e->sh[i].size, e->size))
			return lerr(c, "ValueOutOfBounds");
	if (h->entry < (*text)->addr || h->entry >= sat_add((*text)->addr, (*text)->size))
		return lerr(c, "EntrypointOutOfBounds");
	return 0;
}

/* The reference's register_function_hashed_legacy (v0 keys are hashes). */
static int register_hashed(struct ctx *c, const char *name, uint64_t pc, uint32_t *key_out)
{
	uint32_t key;
	if (name && !strcmp(name, "entrypoint")) {
		key = sbpf_hash("entrypoint", 10);
	} else {
		uint8_t le[8];
		for (int i = 0; i < 8; i++)
			le[i] = (uint8_t)(pc >> (8 * i));
		key = sbpf_hash(le, 8);
	}
	if (sbpf_syscalls_find(c->syscalls, key))
		return lerr(c, "SymbolHashCollision(%#x)", key);
	const char *label = name && !strcmp(name, "entrypoint") ? "entrypoint" : "";
	int rc = sbpf_registry_add(&c->p->funcs, key, (uint32_t)pc, label);
	if (rc == -EEXIST)
		return lerr(c, "SymbolHashCollision(%#x)", key);
	if (rc)
		return err_set(rc, "%s: out of memory", c->name);
	if (key_out)
		*key_out = key;
	return 0;
}

static void put_u32(uint8_t *p, uint32_t v)
{
	store_u32(p, v, false);
}

static uint32_t get_u32(const uint8_t *p)
{
	return load_u32(p, false);
}

/* Bpf-to-bpf calls with pc-relative immediates become registry keys. */
static int fix_relative_calls(struct ctx *c, uint8_t *text, uint64_t len)
{
	uint64_t n = len / 8;
	for (uint64_t i = 0; i < n; i++) {
		struct sbpf_insn in = sbpf_decode(text + i * 8);
		if (in.op != OP_CALL_IMM || in.imm == -1)
			continue;
		int64_t target = (int64_t)i + 1 + in.imm;
		if (target < 0 || (uint64_t)target >= n)
			return lerr(c, "RelativeJumpOutOfBounds(%llu)", (unsigned long long)i);
		uint32_t key;
		int rc = register_hashed(c, NULL, (uint64_t)target, &key);
		if (rc)
			return rc;
		put_u32(text + i * 8 + 4, key);
	}
	return 0;
}

static int get_dynsym(struct ctx *c, struct sbpf_elf *e, uint32_t idx, struct sbpf_elf_sym *s)
{
	if (!e->has_dynsym || idx >= e->dynsym_count ||
	    sbpf_elf_read_sym(e->bytes, e->size, e->dynsym_off + idx * sizeof(Elf64_Sym), s))
		return lerr(c, "UnknownSymbol(%u)", idx);
	return 0;
}

static int reloc_64_64(struct ctx *c, struct sbpf_elf *e, uint8_t *img, uint64_t off, uint32_t sym)
{
	uint64_t imm = sat_add(off, 4);
	if (!in_range(imm, 4, e->size))
		return lerr(c, "ValueOutOfBounds");
	uint64_t refd = get_u32(img + imm);
	struct sbpf_elf_sym s;
	int rc = get_dynsym(c, e, sym, &s);
	if (rc)
		return rc;
	uint64_t addr = sat_add(s.value, refd);
	if (addr < SBPF_REGION_SIZE)
		addr += SBPF_REGION_SIZE;
	if (!in_range(imm, 4, e->size) || !in_range(sat_add(imm, 8), 4, e->size))
		return lerr(c, "ValueOutOfBounds");
	put_u32(img + imm, (uint32_t)addr);
	put_u32(img + imm + 8, (uint32_t)(addr >> 32));
	return 0;
}

static int reloc_relative(struct ctx *c, struct sbpf_elf *e, uint8_t *img, uint64_t off,
			  const struct sbpf_elf_shdr *text)
{
	uint64_t imm = sat_add(off, 4);
	bool in_text = text->type != SHT_NOBITS && off >= text->offset &&
		       off < sat_add(text->offset, text->size);
	if (in_text) {
		/* lddw: the address is split over the two slots' immediates */
		if (!in_range(imm, 4, e->size) || !in_range(sat_add(imm, 8), 4, e->size))
			return lerr(c, "ValueOutOfBounds");
		uint64_t refd = get_u32(img + imm) | (uint64_t)get_u32(img + imm + 8) << 32;
		if (!refd)
			return lerr(c, "InvalidVirtualAddress(0x0)");
		if (refd < SBPF_REGION_SIZE)
			refd += SBPF_REGION_SIZE;
		put_u32(img + imm, (uint32_t)refd);
		put_u32(img + imm + 8, (uint32_t)(refd >> 32));
		return 0;
	}
	/* Toolchains before solana-labs/llvm-project#35 wrote only the low 32 bits, shifted
	 * left by 32, into data words; the reference stays compatible by reading the upper
	 * half of the word. */
	if (!in_range(imm, 4, e->size))
		return lerr(c, "ValueOutOfBounds");
	uint64_t refd = SBPF_REGION_SIZE + get_u32(img + imm);
	if (!in_range(off, 8, e->size))
		return lerr(c, "ValueOutOfBounds");
	store_u64(img + off, refd, false);
	return 0;
}

static int reloc_64_32(struct ctx *c, struct sbpf_elf *e, uint8_t *img, uint64_t off, uint32_t sym,
		       const struct sbpf_elf_shdr *text)
{
	struct sbpf_elf_sym s;
	int rc = get_dynsym(c, e, sym, &s);
	if (rc)
		return rc;
	const char *name;
	size_t len;
	if (!e->dynstr ||
	    sbpf_elf_string(e, e->dynstr, s.name, SBPF_ELF_SYMBOL_NAME_MAX, &name, &len))
		return lerr(c, "UnknownSymbol(%u)", s.name);
	uint32_t key;
	if ((s.info & 0xf) == STT_FUNC && s.value) {
		if (s.value < text->addr || s.value >= sat_add(text->addr, text->size))
			return lerr(c, "ValueOutOfBounds");
		if ((rc = register_hashed(c, name, (s.value - text->addr) / 8, &key)))
			return rc;
	} else {
		key = sbpf_hash(name, len);
		if (c->opt->reject_broken_elfs && !sbpf_syscalls_find(c->syscalls, key))
			return lerr(c, "UnresolvedSymbol(\"%s\", %llu, %llu)", name,
				    (unsigned long long)(off / 8), (unsigned long long)off);
	}
	uint64_t imm = sat_add(off, 4);
	if (!in_range(imm, 4, e->size))
		return lerr(c, "ValueOutOfBounds");
	put_u32(img + imm, key);
	return 0;
}

static int relocate(struct ctx *c, struct sbpf_elf *e, uint8_t *img,
		    const struct sbpf_elf_shdr *text)
{
	uint64_t tlen = text->type == SHT_NOBITS ? 0 : text->size;
	if (!in_range(text->offset, tlen, e->size))
		return lerr(c, "ValueOutOfBounds");
	int rc = fix_relative_calls(c, img + text->offset, tlen);
	if (rc || !e->has_rel)
		return rc;
	struct cur cr = cur_make(e->bytes, e->size, false);
	cur_seek(&cr, e->rel_off);
	for (uint64_t i = 0; i < e->rel_count; i++) {
		uint64_t off = cur_u64(&cr), info = cur_u64(&cr);
		if (!cur_ok(&cr))
			return lerr(c, "ValueOutOfBounds");
		uint32_t type = (uint32_t)info, sym = (uint32_t)(info >> 32);
		switch (type) {
		case SBPF_R_64_64: rc = reloc_64_64(c, e, img, off, sym); break;
		case SBPF_R_RELATIVE: rc = reloc_relative(c, e, img, off, text); break;
		case SBPF_R_64_32: rc = reloc_64_32(c, e, img, off, sym, text); break;
		default: rc = lerr(c, "UnknownRelocation(%u)", type);
		}
		if (rc)
			return rc;
	}
	return 0;
}

static bool is_ro_name(struct sbpf_elf *e, const struct sbpf_elf_shdr *s)
{
	return sbpf_elf_section_is(e, s, ".text") || sbpf_elf_section_is(e, s, ".rodata") ||
	       sbpf_elf_section_is(e, s, ".data.rel.ro") || sbpf_elf_section_is(e, s, ".eh_frame");
}

/*
 * The read-only region as the Solana runtime builds it (optimize_rodata off): one buffer
 * from address 0x1_0000_0000 to the end of the highest read-only section, zero except for
 * the read-only sections copied to their addresses.
 */
static int build_ro(struct ctx *c, struct sbpf_elf *e, const uint8_t *img)
{
	uint64_t lowest = UINT64_MAX, highest = 0, fill = 0;
	bool invalid_offsets = false;
	for (size_t i = 0; i < e->nsh; i++) {
		const struct sbpf_elf_shdr *s = &e->sh[i];
		if (!is_ro_name(e, s))
			continue;
		if (s->addr != s->offset)
			invalid_offsets = true;
		if ((c->opt->reject_broken_elfs && invalid_offsets) ||
		    sat_add(s->addr, SBPF_REGION_SIZE) > SBPF_MM_STACK)
			return lerr(c, "ValueOutOfBounds");
		uint64_t len = s->type == SHT_NOBITS ? 0 : s->size;
		if (s->type != SHT_NOBITS && !in_range(s->offset, len, e->size))
			return lerr(c, "ValueOutOfBounds");
		if (s->addr < lowest)
			lowest = s->addr;
		if (s->addr + len > highest)
			highest = s->addr + len;
		fill += len;
	}
	if (c->opt->reject_broken_elfs && sat_add(lowest, fill) > highest)
		return lerr(c, "ValueOutOfBounds");
	if (highest > e->size)
		return lerr(c, "ValueOutOfBounds");
	uint8_t *buf = calloc(highest ? highest : 1, 1);
	if (!buf)
		return err_set(-ENOMEM, "%s: out of memory", c->name);
	for (size_t i = 0; i < e->nsh; i++) {
		const struct sbpf_elf_shdr *s = &e->sh[i];
		if (is_ro_name(e, s) && s->type != SHT_NOBITS && s->size)
			memcpy(buf + s->addr, img + s->offset, s->size);
	}
	c->p->ro_owned = buf;
	c->p->ro = buf;
	c->p->ro_len = highest;
	c->p->ro_vaddr = SBPF_REGION_SIZE;
	return 0;
}

static int load_lenient(struct ctx *c, const uint8_t *bytes, size_t size)
{
	struct sbpf_elf e;
	enum sbpf_elf_err perr = sbpf_elf_parse(bytes, size, &e);
	int rc = perr ? parse_err(c, &e, perr) : 0;
	const struct sbpf_elf_shdr *text = NULL;
	if (!rc)
		rc = validate(c, &e, &text);
	if (!rc && (sat_add(text->addr, SBPF_REGION_SIZE) >= SBPF_MM_STACK ||
		    (c->opt->reject_broken_elfs && text->addr != text->offset)))
		rc = lerr(c, "ValueOutOfBounds");
	struct sbpf_program *p = c->p;
	if (!rc && !(p->image = malloc(size ? size : 1)))
		rc = err_set(-ENOMEM, "%s: out of memory", c->name);
	if (!rc) {
		memcpy(p->image, bytes, size);
		rc = relocate(c, &e, p->image, text);
	}
	if (!rc) {
		uint64_t off = e.eh.entry > text->addr ? e.eh.entry - text->addr : 0;
		if (off % 8)
			rc = lerr(c, "InvalidEntrypoint");
		p->entry_pc = off / 8;
	}
	if (!rc) {
		sbpf_registry_remove(&p->funcs, sbpf_hash("entrypoint", 10));
		rc = register_hashed(c, "entrypoint", p->entry_pc, NULL);
	}
	if (!rc)
		rc = build_ro(c, &e, p->image);
	if (!rc) {
		p->text_len = text->type == SHT_NOBITS ? 0 : text->size;
		p->text = p->ro + text->addr;
		p->text_vaddr = text->addr + SBPF_REGION_SIZE;
	}
	sbpf_elf_free(&e);
	return rc;
}

/* ---- strict (v3+) ---- */

static bool strict_header_ok(const struct sbpf_elf_ehdr *h, size_t size)
{
	static const uint8_t pad[7];
	uint64_t ph_end = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr) * h->phnum;
	return !memcmp(h->ident, ELFMAG, SELFMAG) && h->ident[EI_CLASS] == ELFCLASS64 &&
	       h->ident[EI_DATA] == ELFDATA2LSB && h->ident[EI_VERSION] == EV_CURRENT &&
	       h->ident[EI_OSABI] == ELFOSABI_NONE && h->ident[EI_ABIVERSION] == 0 &&
	       !memcmp(h->ident + EI_PAD, pad, sizeof(pad)) && h->machine == EM_BPF &&
	       h->version == EV_CURRENT && h->phoff == sizeof(Elf64_Ehdr) &&
	       h->ehsize == sizeof(Elf64_Ehdr) && h->phentsize == sizeof(Elf64_Phdr) && h->phnum &&
	       ph_end <= size;
}

static bool strict_phdr_ok(const struct sbpf_elf_phdr *ph, uint32_t flags, uint64_t vaddr,
			   uint64_t expected_off, size_t size)
{
	return ph->type == PT_LOAD && ph->flags == flags && ph->offset == expected_off &&
	       ph->offset < size && ph->offset % 8 == 0 && ph->vaddr == vaddr &&
	       ph->paddr == vaddr && ph->filesz == ph->memsz && ph->filesz <= size - ph->offset &&
	       ph->filesz % 8 == 0 && ph->memsz < SBPF_REGION_SIZE;
}

static int load_strict(struct ctx *c, const uint8_t *bytes, size_t size)
{
	struct sbpf_elf_ehdr h;
	struct sbpf_elf none = { 0 };
	enum sbpf_elf_err perr = sbpf_elf_read_ehdr(bytes, size, &h);
	if (perr)
		return parse_err(c, &none, perr);
	if (!strict_header_ok(&h, size))
		return lerr(c, "FailedToParse(InvalidFileHeader)");
	struct sbpf_elf_phdr ph[2];
	sbpf_elf_read_phdr(bytes, size, sizeof(Elf64_Ehdr), &ph[0]);
	bool skip_rodata = ph[0].flags != PF_R;
	if (!skip_rodata && h.phnum < 2)
		return lerr(c, "FailedToParse(InvalidFileHeader)");
	static const uint32_t flags[2] = { PF_R, PF_X };
	static const uint64_t vaddrs[2] = { SBPF_MM_RODATA, SBPF_MM_BYTECODE };
	uint64_t expected = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr) * h.phnum;
	size_t first = skip_rodata ? 1 : 0;
	for (size_t i = 0; i + first < 2 && i < h.phnum; i++) {
		uint64_t at = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr) * i;
		if (sbpf_elf_read_phdr(bytes, size, at, &ph[i]) ||
		    !strict_phdr_ok(&ph[i], flags[i + first], vaddrs[i + first], expected, size))
			return lerr(c, "InvalidProgramHeader");
		expected += ph[i].filesz;
	}
	const struct sbpf_elf_phdr *code = skip_rodata ? &ph[0] : &ph[1];
	uint64_t end = sat_add(h.entry, 7);
	if (end < code->vaddr || end >= sat_add(code->vaddr, code->memsz) || h.entry % 8)
		return lerr(c, "FailedToParse(InvalidFileHeader)");
	struct sbpf_program *p = c->p;
	if (!(p->image = malloc(size ? size : 1)))
		return err_set(-ENOMEM, "%s: out of memory", c->name);
	memcpy(p->image, bytes, size);
	p->entry_pc = (h.entry - code->vaddr) / 8;
	p->ro_vaddr = SBPF_MM_RODATA;
	if (!skip_rodata) {
		p->ro = p->image + ph[0].offset;
		p->ro_len = ph[0].filesz;
	}
	p->text = p->image + code->offset;
	p->text_len = code->filesz;
	p->text_vaddr = code->vaddr;
	return 0;
}

/* ---- raw bytecode ---- */

static int load_raw(struct ctx *c, const uint8_t *bytes, size_t size)
{
	struct sbpf_program *p = c->p;
	if (!(p->image = malloc(size ? size : 1)))
		return err_set(-ENOMEM, "%s: out of memory", c->name);
	memcpy(p->image, bytes, size);
	p->text = p->image;
	p->text_len = size;
	p->text_vaddr = SBPF_MM_BYTECODE;
	p->entry_pc = 0;
	p->ro = p->image;
	p->ro_len = size;
	p->ro_vaddr = sbpf_lower_rodata(p->version) ? SBPF_MM_RODATA : SBPF_MM_BYTECODE;
	if (!sbpf_static_syscalls(p->version))
		return register_hashed(c, "entrypoint", 0, NULL);
	int rc = sbpf_registry_add(&p->funcs, 0, 0, "entrypoint");
	return rc ? err_set(rc, "%s: out of memory", c->name) : 0;
}

/* ---- common ---- */

/* Where a call goes, decided once: the reference looks the same keys up on every call. */
static void resolve_call(const struct sbpf_program *p, uint64_t pc, struct sbpf_dinsn *d)
{
	const struct sbpf_syscall *sc = NULL;
	bool static_calls = sbpf_static_syscalls(p->version);
	if (!static_calls || d->src == 0)
		sc = sbpf_syscalls_find(p->syscalls, (uint32_t)d->imm);
	if (sc) {
		d->pad = SBPF_CALL_SYSCALL;
		d->imm = sc - p->syscalls->v;
		return;
	}
	if (static_calls) {
		int64_t target = (int64_t)pc + 1 + d->imm;
		if (d->src == 1 && target >= 0 && (uint64_t)target < p->ninsns) {
			d->pad = SBPF_CALL_INTERNAL;
			d->imm = target;
		}
		return;
	}
	const struct sbpf_func *f = sbpf_registry_get(&p->funcs, (uint32_t)d->imm);
	if (f) {
		d->pad = f->pc < p->ninsns ? SBPF_CALL_INTERNAL : SBPF_CALL_OUTSIDE;
		d->imm = f->pc;
	}
}

static int predecode(struct ctx *c)
{
	struct sbpf_program *p = c->p;
	p->ninsns = p->text_len / 8;
	/* the hooked VM's trace holds pcs and run lengths in 31 bits (vm.h) */
	if (p->ninsns >= SBPF_RUN_SYSCALL)
		return err_set(-E2BIG, "%s: %llu instructions: tally runs at most %u", c->name,
			       (unsigned long long)p->ninsns, SBPF_RUN_SYSCALL - 1);
	p->code = calloc(p->ninsns + 1, sizeof(*p->code));
	if (!p->code)
		return err_set(-ENOMEM, "%s: out of memory", c->name);
	for (uint64_t i = 0; i < p->ninsns; i++) {
		struct sbpf_insn in = sbpf_decode(p->text + i * 8);
		struct sbpf_dinsn *d = &p->code[i];
		d->kind = (uint8_t)sbpf_kind_of(p->version, in.op);
		d->dst = in.dst;
		d->src = in.src;
		d->off = in.off;
		d->imm = in.imm;
		if (d->kind == SBPF_K_LDDW && i + 1 < p->ninsns)
			d->imm = (int64_t)((uint64_t)(uint32_t)in.imm |
					   (uint64_t)get_u32(p->text + i * 8 + 12) << 32);
		if (d->kind == SBPF_K_CALL)
			resolve_call(p, i, d);
		if (d->kind == SBPF_K_CALL && d->pad == SBPF_CALL_SYSCALL &&
		    !p->syscalls->v[d->imm].fn)
			return lerr(c, "UnsupportedSyscall(\"%s\"): tally does not implement it",
				    p->syscalls->v[d->imm].name);
	}
	p->code[p->ninsns].kind = SBPF_K_COUNT;
	return 0;
}

static int read_version(struct ctx *c, const uint8_t *bytes, size_t size, enum sbpf_version *v)
{
	if (size < 0x34)
		return lerr(c, "ValueOutOfBounds");
	uint32_t flags = get_u32(bytes + 0x30);
	*v = flags <= 4 ? (enum sbpf_version)flags : SBPF_VRESERVED;
	if (*v == SBPF_VRESERVED ||
	    (c->opt->version != SBPF_VRESERVED && c->opt->version != *v))
		return lerr(c, "UnsupportedSBPFVersion");
	return 0;
}

int sbpf_program_load(const char *name, const uint8_t *bytes, size_t size,
		      const struct sbpf_syscalls *syscalls, const struct sbpf_load_options *opt,
		      struct sbpf_program **out)
{
	static const struct sbpf_load_options defaults = { false, SBPF_VRESERVED, false };
	static const struct sbpf_syscalls no_syscalls;
	struct sbpf_program *p = calloc(1, sizeof(*p));
	if (!p)
		return err_set(-ENOMEM, "%s: out of memory", name);
	struct ctx c = { name, opt ? opt : &defaults, syscalls ? syscalls : &no_syscalls, p };
	p->syscalls = c.syscalls;
	p->name = arena_strdup(&p->arena, name);
	int rc;
	bool elf = !c.opt->raw && size >= 4 && !memcmp(bytes, "\x7f" "ELF", 4);
	bool rel = elf && size >= 18 && bytes[16] == ET_REL && bytes[17] == 0;
	if (rel) {
		p->version = c.opt->version == SBPF_VRESERVED ? SBPF_V3 : c.opt->version;
		rc = sbpf_static_syscalls(p->version)
			     ? sbpf_link_object(name, bytes, size, c.syscalls, p)
			     : lerr(&c, "UnsupportedSBPFVersion");
	} else if (elf) {
		rc = read_version(&c, bytes, size, &p->version);
		if (!rc)
			rc = sbpf_strict_elf(p->version) ? load_strict(&c, bytes, size)
							 : load_lenient(&c, bytes, size);
	} else if (c.opt->raw) {
		p->version = c.opt->version == SBPF_VRESERVED ? SBPF_V3 : c.opt->version;
		rc = load_raw(&c, bytes, size);
	} else {
		/* The reference reads e_flags before it looks for the ELF magic. */
		rc = read_version(&c, bytes, size, &p->version);
		if (!rc && size < sizeof(Elf64_Ehdr))
			rc = lerr(&c, "ValueOutOfBounds");
		else if (!rc)
			rc = lerr(&c, "FailedToParse(InvalidFileHeader)");
	}
	char msg[300];
	if (!rc && sbpf_verify(p->text, p->text_len, p->version, msg, sizeof(msg)))
		rc = lerr(&c, "%s", msg);
	if (!rc && c.opt->reject_broken_elfs &&
	    sbpf_verify_local(p->text, p->text_len, p->version, c.syscalls, msg, sizeof(msg)))
		rc = lerr(&c, "%s", msg);
	if (!rc)
		rc = predecode(&c);
	if (!rc && elf && !rel)
		sbpf_collect_symbols(p, bytes, size);
	if (rc) {
		sbpf_program_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

int sbpf_program_load_file(const char *path, const struct sbpf_syscalls *syscalls,
			   const struct sbpf_load_options *opt, struct sbpf_program **out)
{
	uint8_t *buf;
	size_t size;
	int err = file_read(path, &buf, &size);
	if (err)
		return err;
	int rc = sbpf_program_load(path, buf, size, syscalls, opt, out);
	free(buf);
	return rc;
}

void sbpf_program_free(struct sbpf_program *p)
{
	if (!p)
		return;
	free(p->image);
	free(p->ro_owned);
	free(p->code);
	free(p->syms);
	sbpf_registry_free(&p->funcs);
	arena_free(&p->arena);
	free(p);
}
