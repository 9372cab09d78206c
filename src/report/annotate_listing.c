/*
 * Builds an annotated listing. The function is found through a pc where it has weight (or
 * its start address): the ELF symbol holding that pc gives the address range (in a
 * stripped module, the unwind tables' function holding it), so asking for an inlined
 * function annotates the function it was inlined into. Weights are the
 * per-pc self weights of every node of the same module whose pc lies in that range, which
 * is exactly the cost that landed on these instructions, whichever stack it came with.
 */
#include "base/hex.h"
#include "base/search.h"
#include "report/annotate_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/file.h"
#include "elf/elf.h"
#include "profile/profile.h"
#include "report/flamegraph_xml.h"
#include "tally/tally.h"

struct pcw { uint64_t pc; int64_t w; uint32_t line; };

/* How a frame's label matches the name asked for: 2 exactly, 1 as a part ("crunch" in
 * "ns::crunch(char const*)"), 0 not. */
static int name_match(const char *label, const char *name)
{
	return !strcmp(label, name) ? 2 : strstr(label, name) ? 1 : 0;
}

/* An interpreter's function as the agent names it: bytecode pcs, no module. */
static bool is_bytecode(const struct prof_frame *f)
{
	return f->kind == PROF_VM && f->module == PROF_NONE;
}

/* The language of an interpreter's frames, whose functions have no machine code; NULL for
 * other kinds. */
static const char *interpreted(enum prof_kind kind)
{
	return kind == PROF_PYTHON ? "Python" : kind == PROF_RUBY ? "Ruby" : NULL;
}

/* Whether a frame has code of its own: a module, and not an interpreter's frame (whose
 * module is the interpreter that ran it); or bytecode. */
static bool has_code(const struct prof_frame *f)
{
	return (f->module != PROF_NONE && !interpreted((enum prof_kind)f->kind)) || is_bytecode(f);
}

/* The error for a name that an interpreter's frame matches better than any frame with
 * code. */
static int interpreted_only(const struct prof *p, const struct prof_funcs *fs, const char *name,
			    int level)
{
	for (size_t i = 0; i < fs->n; i++) {
		const struct prof_frame *f = prof_frame_at(p, fs->frame[i]);
		const char *lang = interpreted((enum prof_kind)f->kind);
		if (lang && name_match(prof_str(p, f->label), name) > level)
			return err_set(-ENOENT, "'%s' is a %s function: it has no machine code to "
						"annotate (tally report shows its lines)",
				       name, lang);
	}
	return 0;
}

/* The frame to annotate: by label (exact matches first, else a part of one function's
 * label), else the one with the most self weight. Among frames sharing a label (different
 * modules or kinds), the heaviest wins. */
static int pick_frame(const struct prof *p, const char *name, int metric, uint32_t *out)
{
	struct prof_funcs fs;
	int rc = prof_func_stats(p, &fs);
	if (rc)
		return rc;
	size_t nm = prof_nmetrics(p);
	int level = name ? 0 : 2; /* the best match any frame with a module reaches */
	for (size_t i = 0; i < fs.n && name; i++) {
		const struct prof_frame *f = prof_frame_at(p, fs.frame[i]);
		int m = name_match(prof_str(p, f->label), name);
		if (has_code(f) && m > level)
			level = m;
	}
	rc = name ? interpreted_only(p, &fs, name, level) : 0;
	int64_t best = -1;
	const char *first = NULL, *other = NULL; /* two different labels matching as well */
	*out = PROF_NONE;
	for (size_t i = 0; i < fs.n && level && !rc; i++) {
		const struct prof_frame *f = prof_frame_at(p, fs.frame[i]);
		const char *label = prof_str(p, f->label);
		if (!has_code(f) || (name && name_match(label, name) != level))
			continue;
		if (!first)
			first = label;
		else if (strcmp(label, first))
			other = label;
		int64_t self = fs.self[i * nm + (size_t)metric];
		if (self > best) {
			best = self;
			*out = fs.frame[i];
		}
	}
	if (level == 1 && other)
		rc = err_set(-EINVAL, "'%s' names several functions, e.g. '%s' and '%s': give the whole name",
			     name, first, other);
	prof_funcs_free(&fs);
	if (rc)
		return rc;
	if (*out == PROF_NONE && !name)
		return err_set(-ENOENT, "the profile has no addresses in modules (folded stacks have "
					"none: annotate needs pprof or perf.data)");
	if (*out == PROF_NONE)
		return err_set(-ENOENT, "no function '%s' with a module in the profile", name);
	return 0;
}

/* A pc of the frame: where it has the most self weight, else its start address. */
static int frame_pc(const struct prof *p, uint32_t frame, int metric, uint64_t *pc)
{
	int64_t best = 0;
	*pc = 0;
	for (uint32_t n = 1; n < prof_nnodes(p); n++) {
		const struct prof_node *node = prof_node_at(p, n);
		if (node->frame != frame)
			continue;
		for (uint32_t e = node->first_pc; e != PROF_NONE; e = prof_pcw_at(p, e)->next) {
			int64_t w = prof_pcw_weights(p, e)[metric];
			if (prof_pcw_at(p, e)->pc && w > best) {
				best = w;
				*pc = prof_pcw_at(p, e)->pc;
			}
		}
	}
	if (!*pc)
		*pc = prof_frame_at(p, frame)->addr;
	if (!*pc)
		return err_set(-ENOENT, "%s: no address known for it in the profile",
			       prof_frame_label(p, frame));
	return 0;
}

static int cmp_pcw(const void *a, const void *b)
{
	const struct pcw *x = a, *y = b;
	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* Self weights at pcs in [lo, hi) of frames in module (PROF_NONE: of the frame bytecode
 * alone, whose pcs are its interpreter's own), sorted by pc. */
static int collect(const struct prof *p, uint32_t module, uint32_t bytecode, int metric,
		   uint64_t lo, uint64_t hi, struct pcw **out, size_t *n)
{
	VEC(struct pcw) v = { 0 };
	for (uint32_t id = 1; id < prof_nnodes(p); id++) {
		const struct prof_node *node = prof_node_at(p, id);
		if (module != PROF_NONE ? prof_frame_at(p, node->frame)->module != module
					: node->frame != bytecode)
			continue;
		for (uint32_t e = node->first_pc; e != PROF_NONE; e = prof_pcw_at(p, e)->next) {
			uint64_t pc = prof_pcw_at(p, e)->pc;
			int64_t w = prof_pcw_weights(p, e)[metric];
			if (pc < lo || pc >= hi || !w)
				continue;
			struct pcw *slot = vec_push(&v);
			if (!slot) {
				vec_free(&v);
				return err_set(-ENOMEM, "out of memory");
			}
			slot->pc = pc;
			slot->w = w;
			slot->line = prof_pcw_at(p, e)->line;
		}
	}
	if (v.n)
		qsort(v.v, v.n, sizeof(*v.v), cmp_pcw);
	*out = v.v;
	*n = v.n;
	return 0;
}

/* The symbol holding pc: the last one starting at or before it that covers it, or, for a
 * symbol without size, runs up to the next symbol. */
static const struct elf_symbol *symbol_at(const struct elf_symtab *t, uint64_t pc, uint64_t *end)
{
	size_t lo = UPPER_BOUND(t->syms, t->n, .addr, pc);
	/* Walk back a little: symbols may nest (aliases, local labels with sizes). */
	for (size_t i = lo, steps = 0; i-- > 0 && steps < 64; steps++) {
		const struct elf_symbol *s = &t->syms[i];
		if (s->size) {
			if (pc < s->addr + s->size) {
				*end = s->addr + s->size;
				return s;
			}
			continue;
		}
		size_t k = i + 1;
		while (k < t->n && t->syms[k].addr == s->addr)
			k++;
		if (k == t->n || t->syms[k].addr > pc) {
			*end = k < t->n ? t->syms[k].addr : pc + 1;
			return s;
		}
	}
	return NULL;
}

/* A stripped module's function, as the unwind tables give its range (the symbolizer's
 * from_cfi), in the guise of a symbol named name without a section. */
static bool cfi_function(const char *path, const char *debug_dir, uint64_t pc, const char *name,
			 struct elf_symbol *out)
{
	struct tally_symbolizer_opts so = { .sz = sizeof(so), .debug_dir = debug_dir,
					    .debug_cache = true };
	struct tally_symbolizer *sym;
	if (tally_symbolizer_open(path, &so, &sym)) {
		err_clear();
		return false;
	}
	struct tally_frame fr[16];
	int n = tally_symbolize(sym, pc, fr, 16);
	n = n > 16 ? 16 : n;
	bool ok = n > 0 && fr[n - 1].from_cfi;
	if (ok)
		*out = (struct elf_symbol){ .name = name, .addr = fr[n - 1].sym_start,
					    .size = fr[n - 1].sym_end - fr[n - 1].sym_start };
	tally_symbolizer_close(sym);
	return ok;
}

static int check_build_id(struct elf_file *f, const char *want, const char *path)
{
	const uint8_t *id;
	size_t len;
	if (!want || !*want || elf_build_id(f, &id, &len))
		return 0;
	char hex[2 * 64 + 1];
	if (strcmp(hex_encode(id, len < 64 ? len : 64, hex), want))
		return err_set(-EINVAL, "%s: build-id %s is not the profile's %s (use --binary)",
			       path, hex, want);
	return 0;
}

/* Source position of each instruction; the listing keeps the symbolizer for its strings. */
static void add_sources(struct annot_listing *l, const char *path, const char *debug_dir)
{
	struct tally_symbolizer_opts so = { .sz = sizeof(so), .debug_dir = debug_dir,
					    .debug_cache = true };
	if (tally_symbolizer_open(path, &so, &l->sym))
		return;
	struct tally_frame fr[16];
	for (size_t i = 0; i < l->insns.n; i++) {
		struct annot_insn *in = &l->insns.v[i];
		int n = tally_symbolize(l->sym, in->addr, fr, 16);
		if (n <= 0)
			continue;
		in->file = fr[0].file;
		in->line = fr[0].line;
		if (fr[0].inlined && n > 1)
			in->func = fr[0].function;
		l->has_source |= fr[0].file && fr[0].line;
	}
}

struct annot_insn *annot_add_insn(struct annot_listing *l, uint64_t addr, uint32_t size,
				  const char *text)
{
	struct annot_insn *in = vec_push(&l->insns);
	if (!in)
		return NULL;
	in->addr = addr;
	in->size = size;
	in->text = arena_strdup(&l->arena, text);
	return in->text ? in : NULL;
}

/* Disassembles code (the bytes of [lo, hi)) into instructions. */
static int disassemble(struct annot_listing *l, struct annot_disasm *d, const uint8_t *code)
{
	uint64_t addr = l->lo;
	char text[160];
	l->arch = annot_disasm_arch(d);
	while (addr < l->hi) {
		size_t off = addr - l->lo, left = l->hi - addr;
		size_t len = annot_disasm_one(d, code + off, left, addr, text, sizeof(text));
		if (!len) {
			len = annot_disasm_granule(d);
			if (len > left)
				len = left;
			int k = snprintf(text, sizeof(text), "(bad)");
			for (size_t i = 0; i < len && k < (int)sizeof(text) - 4; i++)
				k += snprintf(text + k, sizeof(text) - (size_t)k, " %02x", code[off + i]);
		}
		if (!annot_add_insn(l, addr, (uint32_t)len, text))
			return err_set(-ENOMEM, "out of memory");
		addr += len;
	}
	return 0;
}

/* Gives each instruction the weights of the pcs it covers (pcs are sorted). */
static void assign(struct annot_listing *l, const struct pcw *w, size_t nw)
{
	size_t j = 0;
	for (size_t i = 0; i < l->insns.n; i++) {
		struct annot_insn *in = &l->insns.v[i];
		uint64_t end = in->addr + (in->size ? in->size : 1);
		while (j < nw && w[j].pc < in->addr)
			j++;
		for (; j < nw && w[j].pc < end; j++)
			in->weight += w[j].w;
		l->weight += in->weight;
		if (in->weight > l->max_weight)
			l->max_weight = in->weight;
	}
}

/* Without a disassembler: an empty instruction at each pc with weight (err_msg says why). */
static int weighed_pcs_only(struct annot_listing *l, const struct pcw *w, size_t nw)
{
	l->no_disasm = arena_strdup(&l->arena, err_msg());
	for (size_t i = 0; i < nw; i++)
		if ((!i || w[i].pc != w[i - 1].pc) && !annot_add_insn(l, w[i].pc, 0, ""))
			return err_set(-ENOMEM, "out of memory");
	return 0;
}

static int code_of(struct elf_file *f, const struct elf_symbol *s, struct annot_listing *l,
		   const uint8_t **code)
{
	struct elf_section *sec = s->shndx && s->shndx < f->nsections ? &f->sections[s->shndx]
								       : elf_section_at(f, l->lo);
	const uint8_t *data;
	size_t size;
	if (!sec)
		return err_set(-EINVAL, "%s: no section holds 0x%" PRIx64, l->module, l->lo);
	int rc = elf_section_data(f, sec, &data, &size);
	if (rc)
		return rc;
	if (l->lo < sec->addr || l->hi - sec->addr > size)
		return err_set(-EINVAL, "%s: [0x%" PRIx64 ", 0x%" PRIx64 ") runs outside %s",
			       l->module, l->lo, l->hi, sec->name);
	*code = data + (l->lo - sec->addr);
	return 0;
}

static int build(const struct prof *p, const struct rep_annot_opts *o, int metric,
		 struct annot_listing *l, struct elf_file *f, uint32_t frame, uint64_t pc)
{
	const struct prof_frame *fr = prof_frame_at(p, frame);
	struct elf_symtab syms = { 0 };
	struct annot_disasm *d = NULL;
	struct pcw *w = NULL;
	size_t nw = 0;
	int rc = elf_symbols(f, ELF_SYMS_BOTH, false, &syms);
	if (rc)
		return rc;
	const struct elf_symbol *s = symbol_at(&syms, pc, &l->hi);
	struct elf_symbol from_cfi;
	if (!s && cfi_function(l->module, o->debug_dir, pc, prof_str(p, fr->label), &from_cfi)) {
		s = &from_cfi;
		l->hi = from_cfi.addr + from_cfi.size;
	}
	if (!s) {
		rc = err_set(-ENOENT, "%s: no function symbol holds 0x%" PRIx64 " (%s)", l->module,
			     pc, prof_str(p, fr->label));
		goto out;
	}
	l->lo = s->addr;
	if (l->hi - l->lo > (64u << 20)) {
		rc = err_set(-EINVAL, "%s: function %s is implausibly large", l->module, s->name);
		goto out;
	}
	l->name = fr->kind == PROF_INLINE ? arena_strdup(&l->arena, s->name)
					  : prof_str(p, fr->label);
	if (fr->kind == PROF_INLINE)
		l->asked = prof_str(p, fr->label);
	if ((rc = collect(p, fr->module, PROF_NONE, metric, l->lo, l->hi, &w, &nw)))
		goto out;
	/* an eBPF object (clang -target bpf -c) runs as sBPF v3 once tally links it */
	uint32_t flags = f->type == 1 /* ET_REL */ && f->machine == ELF_EM_BPF ? 3 : f->flags;
	const uint8_t *code = NULL;
	if (annot_disasm_open(f->machine, flags, &d))
		rc = weighed_pcs_only(l, w, nw);
	else if (!(rc = code_of(f, s, l, &code)))
		rc = disassemble(l, d, code);
	if (rc)
		goto out;
	assign(l, w, nw);
	add_sources(l, l->module, o->debug_dir);
out:
	annot_disasm_close(d);
	free(w);
	elf_symtab_free(&syms);
	return rc;
}

/* A JIT function: its code and source positions from the caller's lookup. */
static int build_jit(const struct prof *p, const struct rep_annot_opts *o, int metric,
		     struct annot_listing *l, uint32_t frame, uint64_t pc)
{
	const struct prof_frame *fr = prof_frame_at(p, frame);
	struct rep_annot_jit j;
	int rc = o->jit->find(l->module, fr->addr ? fr->addr : pc, pc, &j);
	if (rc)
		return rc;
	struct annot_disasm *d = NULL;
	struct pcw *w = NULL;
	size_t nw = 0;
	l->lo = j.lo;
	l->hi = j.hi;
	l->name = prof_str(p, fr->label);
	if (!(rc = collect(p, fr->module, PROF_NONE, metric, l->lo, l->hi, &w, &nw))) {
		if (annot_disasm_open(j.machine, 0, &d))
			rc = weighed_pcs_only(l, w, nw);
		else
			rc = disassemble(l, d, j.code);
	}
	if (!rc)
		assign(l, w, nw);
	for (size_t i = 0; !rc && i < l->insns.n; i++) {
		struct annot_insn *in = &l->insns.v[i];
		const char *file;
		if (j.line(j.self, in->addr, &file, &in->line) && file &&
		    !(in->file = arena_strdup(&l->arena, file)))
			rc = err_set(-ENOMEM, "out of memory");
		l->has_source |= in->file && in->line;
	}
	annot_disasm_close(d);
	free(w);
	o->jit->release(j.self);
	return rc;
}

/* Without the listing: the pcs with weight, at the lines the profile gives them. */
static int bytecode_pcs(struct annot_listing *l, const struct prof_frame *fr,
			const struct prof *p, const struct pcw *w, size_t nw)
{
	err_set(-ENOENT, "no listing of its instructions (--listing FILE, which the agent writes "
			 "with opts.listing)");
	int rc = weighed_pcs_only(l, w, nw);
	const char *file = prof_str(p, fr->file);
	for (size_t i = 0, k = 0; !rc && i < l->insns.n; i++) {
		struct annot_insn *in = &l->insns.v[i];
		while (k < nw && w[k].pc < in->addr)
			k++;
		in->file = *file && k < nw && w[k].line ? file : NULL;
		in->line = in->file ? w[k].line : 0;
		l->has_source |= in->file != NULL;
		l->hi = in->addr < UINT64_MAX ? in->addr + 1 : in->addr;
	}
	return rc;
}

/* An interpreter's function, as the agent registered it: the weights of its pcs, next to
 * its instructions when the agent's listing is given. */
static int build_bytecode(const struct prof *p, const struct rep_annot_opts *o, int metric,
			  struct annot_listing *l, uint32_t frame)
{
	const struct prof_frame *fr = prof_frame_at(p, frame);
	struct pcw *w = NULL;
	size_t nw = 0;
	uint8_t *text = NULL;
	size_t len = 0;
	l->name = prof_str(p, fr->label);
	l->bytecode = true;
	l->lo = l->hi = fr->addr;
	int rc = collect(p, PROF_NONE, frame, metric, 0, UINT64_MAX, &w, &nw);
	if (!rc && o->listing) {
		l->module = o->listing;
		l->arch = "bytecode";
		if (!(rc = file_read(o->listing, &text, &len)))
			rc = annot_bytecode_parse(o->listing, (const char *)text, len, l->name,
						  fr->addr ? fr->addr : nw ? w[0].pc : 0, l);
	} else if (!rc) {
		l->module = *prof_str(p, fr->file) ? prof_str(p, fr->file) : "bytecode";
		rc = bytecode_pcs(l, fr, p, w, nw);
	}
	if (!rc)
		assign(l, w, nw);
	free(text);
	free(w);
	return rc;
}

int annot_build(const struct prof *p, const struct rep_annot_opts *o, struct annot_listing *l)
{
	memset(l, 0, sizeof(*l));
	int metric = o->metric >= 0 ? o->metric : prof_info(p)->default_metric;
	if (metric < 0 || (size_t)metric >= prof_nmetrics(p))
		return err_set(-EINVAL, "the profile has no metric %d", metric);
	uint32_t frame;
	uint64_t pc = 0;
	int rc = pick_frame(p, o->function, metric, &frame);
	bool bytecode = !rc && is_bytecode(prof_frame_at(p, frame));
	if (!rc && !bytecode)
		rc = frame_pc(p, frame, metric, &pc);
	if (rc)
		return rc;
	char unit[32];
	rep_unit_word(p, metric, unit, sizeof(unit));
	l->unit = arena_strdup(&l->arena, unit);
	int64_t *totals = malloc(prof_nmetrics(p) * sizeof(int64_t));
	if (!totals || !l->unit) {
		free(totals);
		return err_set(-ENOMEM, "out of memory");
	}
	prof_grand_total(p, totals);
	l->total = totals[metric];
	free(totals);
	if (bytecode)
		return build_bytecode(p, o, metric, l, frame);
	const struct prof_module *m = prof_module_at(p, prof_frame_at(p, frame)->module);
	l->module = o->binary ? o->binary : prof_str(p, m->path);
	if (prof_frame_at(p, frame)->kind == PROF_JIT && o->jit && !o->binary)
		return build_jit(p, o, metric, l, frame, pc);
	struct elf_file *f;
	if ((rc = elf_open(l->module, &f)))
		return rc;
	/* A stripped file's static functions have their bounds in its MiniDebugInfo; a damaged
	 * one leaves .dynsym's (the profile's frames were named, and warned of, without it). */
	if (elf_attach_minidebuginfo(f) < 0)
		err_clear();
	rc = check_build_id(f, o->binary ? NULL : prof_str(p, m->build_id), l->module);
	if (!rc)
		rc = build(p, o, metric, l, f, frame, pc);
	elf_close(f);
	return rc;
}

void annot_free(struct annot_listing *l)
{
	vec_free(&l->insns);
	if (l->sym)
		tally_symbolizer_close(l->sym);
	arena_free(&l->arena);
}

int annot_heat(int64_t weight, int64_t max_weight)
{
	if (weight <= 0 || max_weight <= 0)
		return 0;
	double r = (double)weight / (double)max_weight;
	return r >= 0.75 ? 4 : r >= 0.4 ? 3 : r >= 0.15 ? 2 : 1;
}
