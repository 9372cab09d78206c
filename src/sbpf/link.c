/*
 * Relocatable eBPF objects (ET_REL from upstream `clang -target bpf -g -c`) linked into one
 * sBPF program, since no upstream linker targets sBPF. Executable sections of every object
 * are concatenated into the bytecode, read-only data sections into the rodata region, then
 * the REL relocations are applied, global symbols resolved across the objects:
 *
 *   R_BPF_64_64    lddw immediate  S + A (A in the first slot's imm)
 *   R_BPF_64_ABS64 data word       S + A
 *   R_BPF_64_ABS32 data word       S + A
 *   R_BPF_64_32    call            defined function: pc-relative internal call;
 *                                  undefined symbol: syscall by murmur3 of its name
 *
 * sBPF v3 (static) puts the bytecode at 0x1_0000_0000 and rodata at 0 and leaves nothing
 * to the loader. sBPF v0 places the file at address 0 (text at SBPF_LINK_V0_TEXT, rodata
 * after it) and leaves to agave's loader what it relocates itself (solana-sbpf elf.rs):
 * addresses in lddw and data words become R_BPF_64_RELATIVE (the loader adds
 * 0x1_0000_0000; a data word holds its address in its upper half, as the loader reads it),
 * or R_BPF_64_64 against the .dynsym entry of a global; syscalls stay `call -1` with an
 * R_BPF_64_32 against an undefined .dynsym entry the loader hashes by name; internal calls
 * are pc-relative, which the loader turns into its function keys.
 *
 * The .debug_* sections of the objects are concatenated by name and their relocations
 * applied with the program's file addresses (v0: the text's file address; v3: its
 * vaddr), so that a DWARF reader maps the linked file as the runtime runs it. Writable
 * data (.data, .bss) has no place in sBPF and is refused as the loader refuses it.
 */
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/err.h"
#include "sbpf/elf_parse.h"
#include "sbpf/isa.h"
#include "sbpf/link_internal.h"
#include "sbpf/syscall.h"

enum { LINK_MAX_BYTES = 256 << 20, NAME_MAX_ = 4096 };
/* LLVM's BPF data relocations, which <elf.h> lacks (it has R_BPF_NONE, _64_64 and _64_32). */
enum { R_BPF_64_ABS64 = 2, R_BPF_64_ABS32 = 3, R_BPF_64_NODYLD32 = 4 };

enum place { P_NONE, P_TEXT, P_RO, P_DEBUG };

struct obj {
	const char *name;
	struct sbpf_elf e;
	const struct sbpf_elf_shdr *symtab;
	uint64_t *base; /* per section: offset in the text, the rodata or its debug section */
	uint8_t *place; /* per section: enum place */
	uint32_t *debug; /* per section: index into out->debug */
};

struct global {
	const char *name;
	uint32_t obj;
	struct sbpf_elf_sym sym;
	uint32_t dynsym; /* its .dynsym entry plus one, once an lddw needs it (v0) */
};

/* What a relocation's symbol resolves to. */
struct target {
	uint8_t place;   /* P_NONE: undefined (name says which) or in no linked section */
	bool global;     /* a named global definition (v0 may relocate against it by name) */
	uint32_t obj;
	struct sbpf_elf_sym sym;
	const char *name;
};

struct link {
	struct obj *objs;
	size_t nobjs;
	const struct sbpf_syscalls *syscalls;
	struct sbpf_program *p;
	struct sbpf_linked *out; /* NULL in memory */
	bool dynamic;            /* v0: the loader relocates */
	bool debug;              /* .debug_* sections are linked into out->debug */
	uint8_t *text, *ro;
	uint64_t text_len, ro_len, ro_align, debug_len;
	uint64_t text_vm, ro_vm; /* VM addresses of text[0] and ro[0] */
	VEC(struct global) globals;
};

static int oerr(const struct obj *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int oerr(const struct obj *o, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return err_set(-EINVAL, "%s: %s", o->name, buf);
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Section names of any length (an object's names are not limited like a .so's). */
static const char *sec_name(struct obj *o, const struct sbpf_elf_shdr *s)
{
	const char *name;
	size_t len;
	if (!o->e.shstrtab ||
	    sbpf_elf_string(&o->e, o->e.shstrtab, s->name, NAME_MAX_, &name, &len))
		return "";
	return name;
}

static const char *sym_name(struct obj *o, const struct sbpf_elf_sym *s)
{
	const char *name;
	size_t len;
	if (!o->symtab || o->symtab->link >= o->e.nsh ||
	    sbpf_elf_string(&o->e, &o->e.sh[o->symtab->link], s->name, NAME_MAX_, &name, &len))
		return NULL;
	return name;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	if (a < 2)
		return v;
	return (v + a - 1) / a * a;
}

static int open_obj(struct obj *o)
{
	struct sbpf_elf_ehdr h;
	const uint8_t *bytes = o->e.bytes;
	size_t size = o->e.size;
	if (sbpf_elf_read_ehdr(bytes, size, &h) || h.ident[EI_CLASS] != ELFCLASS64 ||
	    h.ident[EI_DATA] != ELFDATA2LSB || h.type != ET_REL || h.machine != EM_BPF ||
	    h.shentsize != sizeof(Elf64_Shdr) || !h.shnum || h.shstrndx >= h.shnum)
		return oerr(o, "not a 64-bit little-endian eBPF relocatable object");
	o->e.eh = h;
	o->e.nsh = h.shnum;
	o->e.sh = calloc(h.shnum, sizeof(*o->e.sh));
	o->base = calloc(h.shnum, sizeof(*o->base));
	o->place = calloc(h.shnum, sizeof(*o->place));
	o->debug = calloc(h.shnum, sizeof(*o->debug));
	if (!o->e.sh || !o->base || !o->place || !o->debug)
		return err_set(-ENOMEM, "%s: out of memory", o->name);
	for (size_t i = 0; i < h.shnum; i++) {
		if (sbpf_elf_read_shdr(bytes, size, h.shoff + i * sizeof(Elf64_Shdr), &o->e.sh[i]))
			return oerr(o, "section header %zu runs past the end of the file", i);
		if (o->e.sh[i].type == SHT_SYMTAB && !o->symtab)
			o->symtab = &o->e.sh[i];
	}
	o->e.shstrtab = &o->e.sh[h.shstrndx];
	return 0;
}

static void close_obj(struct obj *o)
{
	free(o->e.sh);
	free(o->base);
	free(o->place);
	free(o->debug);
}

/* The output debug section called name, made when it is new. */
static int debug_section(struct link *l, const char *name, uint32_t *idx)
{
	for (size_t i = 0; i < l->out->debug.n; i++)
		if (!strcmp(l->out->debug.v[i].name, name)) {
			*idx = (uint32_t)i;
			return 0;
		}
	if (l->out->debug.n >= SBPF_LINK_MAX_DEBUG)
		return -E2BIG;
	const char *copy = arena_strdup(&l->p->arena, name);
	struct sbpf_debug_section *d = copy ? vec_push(&l->out->debug) : NULL;
	if (!d)
		return -ENOMEM;
	*d = (struct sbpf_debug_section){ .name = copy };
	*idx = (uint32_t)(l->out->debug.n - 1);
	return 0;
}

static int place_section(struct link *l, struct obj *o, size_t i)
{
	const struct sbpf_elf_shdr *s = &o->e.sh[i];
	const char *name = sec_name(o, s);
	if (!(s->flags & SHF_ALLOC)) {
		if (!l->debug || !starts(name, ".debug_") || s->type != SHT_PROGBITS || !s->size)
			return 0;
		if (s->offset > o->e.size || s->size > o->e.size - s->offset)
			return oerr(o, "section %s runs past the end of the file", name);
		if (l->dynamic && strlen(name) > SBPF_ELF_SECTION_NAME_MAX)
			return oerr(o, "%s: v0's loader reads section names of at most %d bytes "
				       "(compile with -gdwarf-4, or link with --no-debug)",
				    name, SBPF_ELF_SECTION_NAME_MAX);
		uint32_t d;
		int rc = debug_section(l, name, &d);
		if (rc == -E2BIG)
			return oerr(o, "more than %d kinds of .debug_* sections", SBPF_LINK_MAX_DEBUG);
		if (rc)
			return err_set(-ENOMEM, "%s: out of memory", o->name);
		o->place[i] = P_DEBUG;
		o->debug[i] = d;
		o->base[i] = l->out->debug.v[d].size;
		l->out->debug.v[d].size += s->size;
		l->debug_len += s->size;
		return l->debug_len > LINK_MAX_BYTES
			       ? oerr(o, "debug sections add up to more than %d MiB",
				      LINK_MAX_BYTES >> 20)
			       : 0;
	}
	if (!s->size)
		return 0;
	if (s->type == SHT_NOBITS)
		return s->flags & SHF_WRITE ? oerr(o, "WritableSectionNotSupported(\"%s\")", name)
					     : oerr(o, "section %s has no contents in the file", name);
	if (s->offset > o->e.size || s->size > o->e.size - s->offset || s->addralign > 4096)
		return oerr(o, "section %s runs past the end of the file", name);
	if (s->flags & SHF_EXECINSTR) {
		if (s->type != SHT_PROGBITS || s->size % 8)
			return oerr(o, "executable section %s is not whole instructions", name);
		o->place[i] = P_TEXT;
		o->base[i] = l->text_len;
		l->text_len += s->size;
	} else if (s->flags & SHF_WRITE && !starts(name, ".data.rel.ro")) {
		return oerr(o, "WritableSectionNotSupported(\"%s\")", name);
	} else {
		l->ro_len = align_up(l->ro_len, s->addralign);
		if (s->addralign > l->ro_align)
			l->ro_align = s->addralign;
		o->place[i] = P_RO;
		o->base[i] = l->ro_len;
		l->ro_len += s->size;
	}
	/* sections may overlap in the file; bound what their copies can add up to */
	if (l->text_len > LINK_MAX_BYTES || l->ro_len > LINK_MAX_BYTES)
		return oerr(o, "sections add up to more than %d MiB", LINK_MAX_BYTES >> 20);
	return 0;
}

/* Where each section goes, then the copies. */
static int place_sections(struct link *l)
{
	for (size_t k = 0; k < l->nobjs; k++)
		for (size_t i = 0; i < l->objs[k].e.nsh; i++) {
			int rc = place_section(l, &l->objs[k], i);
			if (rc)
				return rc;
		}
	if (!l->text_len)
		return oerr(&l->objs[0], "no executable section");
	l->text = calloc(l->text_len, 1);
	l->ro = calloc(l->ro_len ? l->ro_len : 1, 1);
	if (!l->text || !l->ro)
		return err_set(-ENOMEM, "%s: out of memory", l->objs[0].name);
	for (size_t i = 0; l->out && i < l->out->debug.n; i++) {
		struct sbpf_debug_section *d = &l->out->debug.v[i];
		if (!(d->bytes = malloc(d->size)))
			return err_set(-ENOMEM, "%s: out of memory", l->objs[0].name);
	}
	for (size_t k = 0; k < l->nobjs; k++) {
		struct obj *o = &l->objs[k];
		for (size_t i = 0; i < o->e.nsh; i++) {
			const struct sbpf_elf_shdr *s = &o->e.sh[i];
			uint8_t *to = o->place[i] == P_TEXT  ? l->text
				      : o->place[i] == P_RO  ? l->ro
				      : o->place[i] == P_DEBUG ? l->out->debug.v[o->debug[i]].bytes
							     : NULL;
			if (to)
				memcpy(to + o->base[i], o->e.bytes + s->offset, s->size);
		}
	}
	return 0;
}

static int by_name_then_obj(const void *a, const void *b)
{
	const struct global *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->obj > y->obj) - (x->obj < y->obj);
}

/* Every global definition, sorted by name; one per name (a strong one over weak ones). */
static int collect_globals(struct link *l)
{
	for (size_t k = 0; k < l->nobjs; k++) {
		struct obj *o = &l->objs[k];
		if (!o->symtab)
			continue;
		for (uint64_t n = 0; n < o->symtab->size / sizeof(Elf64_Sym); n++) {
			struct sbpf_elf_sym s;
			if (sbpf_elf_read_sym(o->e.bytes, o->e.size,
					      o->symtab->offset + n * sizeof(Elf64_Sym), &s))
				return oerr(o, "symbol table runs past the end of the file");
			unsigned bind = s.info >> 4;
			if ((bind != STB_GLOBAL && bind != STB_WEAK) || s.shndx == SHN_UNDEF)
				continue;
			const char *name = sym_name(o, &s);
			if (!name || !*name)
				return oerr(o, "global symbol %llu has no name", (unsigned long long)n);
			if (s.shndx == SHN_COMMON)
				return oerr(o, "WritableSectionNotSupported(\"COMMON\") for \"%s\"", name);
			struct global *g = vec_push(&l->globals);
			if (!g)
				return err_set(-ENOMEM, "%s: out of memory", o->name);
			*g = (struct global){ name, (uint32_t)k, s, 0 };
		}
	}
	if (l->globals.n)
		qsort(l->globals.v, l->globals.n, sizeof(*l->globals.v), by_name_then_obj);
	size_t kept = 0;
	for (size_t i = 0; i < l->globals.n; i++) {
		struct global *g = &l->globals.v[i];
		struct global *prev = kept ? &l->globals.v[kept - 1] : NULL;
		if (!prev || strcmp(prev->name, g->name)) {
			l->globals.v[kept++] = *g;
			continue;
		}
		bool prev_weak = prev->sym.info >> 4 == STB_WEAK, weak = g->sym.info >> 4 == STB_WEAK;
		if (!prev_weak && !weak)
			return oerr(&l->objs[g->obj], "duplicate symbol \"%s\" (also defined in %s)",
				    g->name, l->objs[prev->obj].name);
		if (prev_weak && !weak)
			*prev = *g;
	}
	l->globals.n = kept;
	return 0;
}

static struct global *find_global(const struct link *l, const char *name)
{
	size_t lo = 0, hi = l->globals.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(l->globals.v[mid].name, name);
		if (!c)
			return &l->globals.v[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int resolve(struct link *l, uint32_t k, uint32_t idx, struct target *t)
{
	struct obj *o = &l->objs[k];
	memset(t, 0, sizeof(*t));
	if (!o->symtab || idx >= o->symtab->size / sizeof(Elf64_Sym) ||
	    sbpf_elf_read_sym(o->e.bytes, o->e.size, o->symtab->offset + idx * sizeof(Elf64_Sym),
			      &t->sym))
		return oerr(o, "UnknownSymbol(%u)", idx);
	t->name = sym_name(o, &t->sym);
	t->obj = k;
	/* a global, defined here or not, is the one definition the link chose */
	if (t->sym.shndx == SHN_UNDEF || t->sym.info >> 4 != STB_LOCAL) {
		const struct global *g = t->name && *t->name ? find_global(l, t->name) : NULL;
		if (!g)
			return 0;
		t->obj = g->obj;
		t->sym = g->sym;
		o = &l->objs[g->obj];
	}
	if (t->sym.shndx < SHN_LORESERVE && t->sym.shndx < o->e.nsh)
		t->place = o->place[t->sym.shndx];
	t->global = t->sym.info >> 4 != STB_LOCAL && (t->sym.info & 0xf) != STT_SECTION &&
		    t->name && *t->name;
	return 0;
}

/* Offset of the target in its output (text, rodata or debug section). */
static uint64_t target_off(const struct link *l, const struct target *t)
{
	return l->objs[t->obj].base[t->sym.shndx] + t->sym.value;
}

static uint64_t target_vm(const struct link *l, const struct target *t)
{
	return (t->place == P_TEXT ? l->text_vm : l->ro_vm) + target_off(l, t);
}

/* The file's address of a VM address (v0 files are mapped at 0x1_0000_0000). */
static uint64_t file_addr(const struct link *l, uint64_t vm)
{
	return l->dynamic ? vm - SBPF_MM_BYTECODE : vm;
}

/* A relocation for v0's loader at offset off of the text (or of the rodata). */
static int add_rel(struct link *l, bool in_ro, uint64_t off, uint32_t type, uint32_t sym)
{
	struct sbpf_dynrel *r = vec_push(&l->out->rels);
	if (!r)
		return err_set(-ENOMEM, "out of memory");
	*r = (struct sbpf_dynrel){ file_addr(l, in_ro ? l->ro_vm : l->text_vm) + off, type, sym };
	return 0;
}

/* A new .dynsym entry; *idx is its index plus one. */
static int add_dynsym(struct link *l, const char *name, uint8_t type, uint8_t place,
		      uint64_t addr, uint64_t size, uint32_t *idx)
{
	const char *copy = arena_strdup(&l->p->arena, name);
	struct sbpf_dynsym *d = copy ? vec_push(&l->out->dynsyms) : NULL;
	if (!d)
		return err_set(-ENOMEM, "out of memory");
	*d = (struct sbpf_dynsym){ copy, addr, size, type, place };
	*idx = (uint32_t)l->out->dynsyms.n;
	return 0;
}

/* The undefined .dynsym entry of a syscall (plus one), made when it is new: the program
 * calls at most the runtime's few syscalls, which are the only undefined entries. */
static int syscall_dynsym(struct link *l, const char *name, uint32_t *idx)
{
	for (size_t i = 0; i < l->out->dynsyms.n; i++)
		if (l->out->dynsyms.v[i].place == SBPF_DYN_UNDEF &&
		    !strcmp(l->out->dynsyms.v[i].name, name)) {
			*idx = (uint32_t)i + 1;
			return 0;
		}
	return add_dynsym(l, name, STT_NOTYPE, SBPF_DYN_UNDEF, 0, 0, idx);
}

static int reloc_call(struct link *l, struct obj *o, const struct target *t, uint8_t *at,
		      uint64_t pc)
{
	if (t->place == P_TEXT) {
		uint64_t off = target_off(l, t);
		if (off % 8 || off >= l->text_len)
			return oerr(o, "call at pc %llu to a symbol outside the code",
				    (unsigned long long)pc);
		int64_t rel = (int64_t)(off / 8) - (int64_t)(pc + 1);
		/* v3 marks internal calls (src 1); v0 tells them apart by the immediate */
		at[1] = (uint8_t)((at[1] & 0x0f) | (l->dynamic ? 0 : 0x10));
		store_u32(at + 4, (uint32_t)rel, false);
		return 0;
	}
	const char *name = t->name ? t->name : "";
	uint32_t key = sbpf_hash(name, strlen(name));
	if (t->place != P_NONE || !*name || !sbpf_syscalls_find(l->syscalls, key))
		return oerr(o, "UnresolvedSymbol(\"%s\", %llu, %llu): no object defines it and the "
			       "runtime has no such syscall", name, (unsigned long long)pc,
			    (unsigned long long)(pc * 8));
	at[1] &= 0x0f;
	if (!l->dynamic) {
		store_u32(at + 4, key, false);
		return 0;
	}
	uint32_t sym;
	store_u32(at + 4, UINT32_MAX, false);
	int rc = syscall_dynsym(l, name, &sym);
	return rc ? rc : add_rel(l, false, pc * 8, SBPF_R_64_32, sym);
}

/* An lddw of an address: the full address (v3), or what v0's loader relocates. */
static int reloc_lddw(struct link *l, const struct target *t, uint8_t *at, uint64_t off)
{
	int32_t addend = (int32_t)load_u32(at + 4, false);
	uint64_t v = target_vm(l, t) + (uint64_t)(int64_t)addend;
	struct global *g = l->dynamic && t->global && addend >= 0 ? find_global(l, t->name) : NULL;
	if (g) {
		const struct target def = { .place = t->place, .obj = g->obj, .sym = g->sym };
		uint8_t type = (g->sym.info & 0xf) == STT_FUNC ? STT_FUNC : STT_OBJECT;
		int rc = g->dynsym ? 0
				   : add_dynsym(l, g->name, type,
						t->place == P_TEXT ? SBPF_DYN_TEXT : SBPF_DYN_RODATA,
						file_addr(l, target_vm(l, &def)), g->sym.size,
						&g->dynsym);
		if (rc)
			return rc;
		store_u32(at + 4, (uint32_t)addend, false);
		store_u32(at + 12, 0, false);
		return add_rel(l, false, off, SBPF_R_64_64, g->dynsym);
	}
	if (l->dynamic)
		v = file_addr(l, v);
	store_u32(at + 4, (uint32_t)v, false);
	store_u32(at + 12, (uint32_t)(v >> 32), false);
	return l->dynamic ? add_rel(l, false, off, SBPF_R_RELATIVE, 0) : 0;
}

/* A data word holding an address in the text or the rodata. */
static int reloc_word(struct link *l, struct obj *o, const struct target *t, uint8_t *at,
		      uint32_t type, bool in_ro, uint64_t where)
{
	if (type == R_BPF_64_ABS64) {
		uint64_t v = target_vm(l, t) + load_u64(at, false);
		if (!l->dynamic) {
			store_u64(at, v, false);
			return 0;
		}
		v = file_addr(l, v);
		if (v >> 32)
			return oerr(o, "data address %#llx beyond what v0's loader relocates",
				    (unsigned long long)v);
		/* v0's loader reads the address from the word's upper half */
		store_u32(at, 0, false);
		store_u32(at + 4, (uint32_t)v, false);
		return add_rel(l, in_ro, where, SBPF_R_RELATIVE, 0);
	}
	if (l->dynamic)
		return oerr(o, "a 32-bit data address, which v0's loader cannot relocate");
	store_u32(at, (uint32_t)(target_vm(l, t) + load_u32(at, false)), false);
	return 0;
}

/* A relocation in a debug section: a file address, or an offset into a debug section. */
static int reloc_debug(struct link *l, struct obj *o, const struct target *t, uint8_t *at,
		       uint32_t type, const char *sec)
{
	uint64_t v;
	if (t->place == P_TEXT || t->place == P_RO)
		v = file_addr(l, target_vm(l, t));
	else if (t->place == P_DEBUG)
		v = target_off(l, t);
	else
		return oerr(o, "%s refers to \"%s\", which is not linked", sec,
			    t->name ? t->name : "?");
	if (type == R_BPF_64_ABS64)
		store_u64(at, v + load_u64(at, false), false);
	else
		store_u32(at, (uint32_t)(v + load_u32(at, false)), false);
	return 0;
}

static unsigned reloc_width(uint32_t type)
{
	switch (type) {
	case SBPF_R_64_64: return 16;
	case R_BPF_64_ABS64: return 8;
	case R_BPF_64_ABS32:
	case R_BPF_64_NODYLD32:
	case SBPF_R_64_32: return 4;
	default: return 0;
	}
}

static int apply_one(struct link *l, uint32_t k, size_t sec, uint64_t off, uint32_t type,
		     uint32_t sym)
{
	struct obj *o = &l->objs[k];
	const struct sbpf_elf_shdr *s = &o->e.sh[sec];
	uint8_t place = o->place[sec];
	unsigned width = reloc_width(type);
	if (type == R_BPF_NONE)
		return 0;
	bool ok = place == P_DEBUG ? type == R_BPF_64_ABS64 || type == R_BPF_64_ABS32 ||
					     type == R_BPF_64_NODYLD32
		  : place == P_TEXT ? width != 0
				    : type == R_BPF_64_ABS64 || type == R_BPF_64_ABS32;
	if (!ok)
		return oerr(o, "UnknownRelocation(%u) in %s", type, sec_name(o, s));
	if (type == SBPF_R_64_32)
		width = 8;
	if (off > s->size || width > s->size - off)
		return oerr(o, "relocation at %#llx of %s out of its section", (unsigned long long)off,
			    sec_name(o, s));
	struct target t;
	int rc = resolve(l, k, sym, &t);
	if (rc)
		return rc;
	uint64_t where = o->base[sec] + off;
	if (place == P_DEBUG)
		return reloc_debug(l, o, &t, l->out->debug.v[o->debug[sec]].bytes + where, type,
				   sec_name(o, s));
	uint8_t *at = (place == P_TEXT ? l->text : l->ro) + where;
	if (type == SBPF_R_64_32) {
		if (where % 8)
			return oerr(o, "R_BPF_64_32 outside an instruction");
		return reloc_call(l, o, &t, at, where / 8);
	}
	if (t.place != P_TEXT && t.place != P_RO)
		return oerr(o, "UnresolvedSymbol(\"%s\", %llu, %llu)", t.name ? t.name : "?",
			    (unsigned long long)(where / 8), (unsigned long long)where);
	if (type == SBPF_R_64_64)
		return reloc_lddw(l, &t, at, where);
	return reloc_word(l, o, &t, at, type, place == P_RO, where);
}

static int apply_relocations(struct link *l)
{
	for (uint32_t k = 0; k < l->nobjs; k++) {
		struct obj *o = &l->objs[k];
		for (size_t i = 0; i < o->e.nsh; i++) {
			const struct sbpf_elf_shdr *r = &o->e.sh[i];
			if (r->type != SHT_REL || r->info >= o->e.nsh || o->place[r->info] == P_NONE)
				continue;
			if (r->link >= o->e.nsh || &o->e.sh[r->link] != o->symtab)
				return oerr(o, "relocation section %s has no symbol table",
					    sec_name(o, r));
			struct cur c = cur_make(o->e.bytes, o->e.size, false);
			cur_seek(&c, r->offset);
			for (uint64_t n = r->size / 16; n; n--) {
				uint64_t off = cur_u64(&c), info = cur_u64(&c);
				if (!cur_ok(&c))
					return oerr(o, "relocation section %s runs past the end of the file",
						    sec_name(o, r));
				int rc = apply_one(l, k, r->info, off, (uint32_t)info,
						   (uint32_t)(info >> 32));
				if (rc)
					return rc;
			}
		}
	}
	return 0;
}

/*
 * Upstream LLVM writes `callx rN` as eBPF does, with N in the immediate. sBPF v3 reads the
 * register from the dst field instead (SIMD-0377; solana-sbpf's callx_uses_dst_reg), and
 * would call through r0: the link moves the register there. An instruction whose dst is
 * already set came from a compiler that knows v3 and is left alone.
 */
static void callx_register_to_dst(struct link *l)
{
	if (!sbpf_callx_uses_dst(l->p->version))
		return;
	for (uint64_t at = 0; at + 8 <= l->text_len; at += 8) {
		uint8_t *i = l->text + at;
		uint32_t reg = load_u32(i + 4, false);
		if (i[0] == OP_LDDW)
			at += 8;
		else if (i[0] == OP_CALL_REG && (i[1] & 0x0f) == 0 && reg < 10) {
			i[1] = (uint8_t)((i[1] & 0xf0) | reg);
			store_u32(i + 4, 0, false);
		}
	}
}

/* Function symbols become the program's names; the global "entrypoint" is where it starts. */
static int collect_functions(struct link *l)
{
	struct sbpf_program *p = l->p;
	size_t cap = 0;
	for (uint32_t k = 0; k < l->nobjs; k++) {
		struct obj *o = &l->objs[k];
		for (uint64_t n = 0; o->symtab && n < o->symtab->size / sizeof(Elf64_Sym); n++) {
			struct target t = { .obj = k };
			if (sbpf_elf_read_sym(o->e.bytes, o->e.size,
					      o->symtab->offset + n * sizeof(Elf64_Sym), &t.sym))
				break;
			const char *name = sym_name(o, &t.sym);
			if ((t.sym.info & 0xf) != STT_FUNC || !name || t.sym.shndx >= o->e.nsh ||
			    o->place[t.sym.shndx] != P_TEXT)
				continue;
			t.place = P_TEXT;
			uint64_t pc = target_off(l, &t) / 8;
			const char *copy = arena_strdup(&p->arena, name);
			struct sbpf_symbol *sym = copy ? sbpf_add_symbol(p, &cap) : NULL;
			if (!sym)
				return err_set(-ENOMEM, "%s: out of memory", o->name);
			*sym = (struct sbpf_symbol){ pc, pc + (t.sym.size + 7) / 8, copy };
		}
	}
	const struct global *entry = find_global(l, "entrypoint");
	struct target t = { .place = P_TEXT };
	if (entry) {
		t.obj = entry->obj;
		t.sym = entry->sym;
	}
	if (!entry || t.sym.shndx >= l->objs[t.obj].e.nsh ||
	    l->objs[t.obj].place[t.sym.shndx] != P_TEXT)
		return oerr(&l->objs[0], "no function named entrypoint");
	p->entry_pc = target_off(l, &t) / 8;
	sbpf_sort_symbols(p);
	if (!l->dynamic)
		return 0;
	struct global *g = find_global(l, "entrypoint");
	return g->dynsym ? 0
			 : add_dynsym(l, "entrypoint", STT_FUNC, SBPF_DYN_TEXT,
				      file_addr(l, target_vm(l, &t)), t.sym.size, &g->dynsym);
}

static void set_addresses(struct link *l)
{
	if (!l->dynamic) {
		l->text_vm = SBPF_MM_BYTECODE;
		l->ro_vm = SBPF_MM_RODATA;
		return;
	}
	l->text_vm = SBPF_MM_BYTECODE + SBPF_LINK_V0_TEXT;
	l->ro_vm = SBPF_MM_BYTECODE +
		   align_up(SBPF_LINK_V0_TEXT + l->text_len, l->ro_align > 8 ? l->ro_align : 8);
}

static void hand_over(struct link *l)
{
	struct sbpf_program *p = l->p;
	p->image = l->text;
	p->text = l->text;
	p->text_len = l->text_len;
	p->text_vaddr = l->text_vm;
	p->ro_owned = l->ro;
	p->ro = l->ro;
	p->ro_len = l->ro_len;
	p->ro_vaddr = l->ro_vm;
	p->ninsns = l->text_len / 8;
	l->text = l->ro = NULL;
}

int sbpf_link(const struct sbpf_object *objs, size_t n, const struct sbpf_syscalls *syscalls,
	      bool debug, struct sbpf_program *p, struct sbpf_linked *out)
{
	struct link l = { .nobjs = n, .syscalls = syscalls, .p = p, .out = out };
	l.dynamic = out && !sbpf_static_syscalls(p->version);
	l.debug = out && debug;
	if (!n)
		return err_set(-EINVAL, "no objects to link");
	l.objs = calloc(n, sizeof(*l.objs));
	if (!l.objs)
		return err_set(-ENOMEM, "out of memory");
	int rc = 0;
	for (size_t k = 0; !rc && k < n; k++) {
		l.objs[k].name = objs[k].name;
		l.objs[k].e.bytes = objs[k].bytes;
		l.objs[k].e.size = objs[k].size;
		rc = open_obj(&l.objs[k]);
	}
	if (!rc)
		rc = place_sections(&l);
	if (!rc)
		rc = collect_globals(&l);
	if (!rc) {
		set_addresses(&l);
		rc = apply_relocations(&l);
	}
	if (!rc)
		callx_register_to_dst(&l);
	if (!rc) {
		hand_over(&l);
		rc = collect_functions(&l);
	}
	free(l.text);
	free(l.ro);
	for (size_t k = 0; k < n; k++)
		close_obj(&l.objs[k]);
	free(l.objs);
	vec_free(&l.globals);
	return rc;
}

int sbpf_link_object(const char *name, const uint8_t *bytes, size_t size,
		     const struct sbpf_syscalls *syscalls, struct sbpf_program *p)
{
	const struct sbpf_object o = { name, bytes, size };
	return sbpf_link(&o, 1, syscalls, false, p, NULL);
}

void sbpf_linked_free(struct sbpf_linked *l)
{
	for (size_t i = 0; i < l->debug.n; i++)
		free(l->debug.v[i].bytes);
	vec_free(&l->debug);
	vec_free(&l->rels);
	vec_free(&l->dynsyms);
}

int sbpf_link_elf(const struct sbpf_object *objs, size_t n, const struct sbpf_syscalls *syscalls,
		  const struct sbpf_link_opts *opts, uint8_t **out, size_t *size)
{
	*out = NULL;
	if (!opts || opts->sz < sizeof(*opts) ||
	    (opts->version != SBPF_V0 && opts->version != SBPF_V3))
		return err_set(-EINVAL, "sbpf_link_elf: bad options");
	const char *name = opts->name ? opts->name : "linked program";
	struct sbpf_program *p = calloc(1, sizeof(*p));
	if (!p || !(p->name = arena_strdup(&p->arena, name))) {
		free(p);
		return err_set(-ENOMEM, "%s: out of memory", name);
	}
	p->version = opts->version;
	struct sbpf_linked l = { 0 };
	int rc = sbpf_link(objs, n, syscalls, !opts->no_debug, p, &l);
	if (!rc)
		rc = sbpf_link_write(p, &l, out, size);
	sbpf_linked_free(&l);
	sbpf_program_free(p);
	/* The deployment checks (verifier, relocations, syscalls) on what was written. */
	struct sbpf_load_options lo = { .reject_broken_elfs = true, .version = opts->version };
	struct sbpf_program *back = NULL;
	if (!rc && !(rc = sbpf_program_load(name, *out, *size, syscalls, &lo, &back)))
		sbpf_program_free(back);
	if (rc) {
		free(*out);
		*out = NULL;
	}
	return rc;
}
