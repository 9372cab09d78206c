/*
 * The ELF frame source, the one every stack ends with (sources/source.h): a native
 * frame named through tally_symbolize (one symbolizer per module, opened on first use on
 * the file the unwinder read, so a build-id cache copy when the path was rebuilt) with its
 * inline frames, a PLT stub as "[plt]", a function no symbol names but the unwind tables
 * place (tally_frame's from_cfi) as "MODULE!fn_START" (sym_cfi_name(), MODULE the base name
 * of the path as mapped, so that all of its samples add up under one frame), and a frame
 * nothing covers as its module and address. It names every frame it is given.
 */
#include "replay/sources/sources.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/search.h"
#include "base/slot_cache.h"
#include "base/err.h"
#include "base/vec.h"
#include "elf/elf.h"
#include "symbolize/symbolize.h"
#include "tally/tally.h"

#define MAX_INLINE 32
/* Samples repeat a few hundred return addresses: their names are kept in a direct-mapped
 * memo of 4096 slots, each holding up to 4 frames (deeper inline chains are looked up each
 * time), so a symbolizer lookup runs once per address rather than once per frame. Its
 * entries are allocated as slots are first used (base/slot_cache.h). */
#define MEMO_BITS 12
#define MEMO_FRAMES 4

struct symcache {
	const struct unw_module *mod;
	struct tally_symbolizer *s; /* NULL when the module could not be opened */
};

/* What a module address is: a PLT stub, or up to MEMO_FRAMES frames (innermost first). */
struct named {
	bool plt;
	int n; /* frames; 0 when unknown (more than MEMO_FRAMES: not kept in the memo) */
	struct tally_frame tf[MEMO_FRAMES];
};

struct memo {
	const struct unw_module *mod; /* NULL: an empty slot */
	uint64_t addr;
	struct named named;
};

/* The name of a function from the unwind tables: made once per function (the memo holds
 * addresses, and misses its colliding ones again). */
struct cfi_name {
	uint64_t key; /* the function's start, mixed with its module (see cfi_key) */
	const struct unw_module *mod;
	uint64_t start;
	const char *name; /* in the source's arena */
};

struct elf_source {
	struct slot_cache memo; /* of struct memo, 1 << MEMO_BITS slots */
	VEC(struct symcache) syms;
	VEC(struct cfi_name) cfi_names; /* sorted by key */
	struct arena arena;
};

static struct tally_symbolizer *symbolizer(struct elf_source *y, const struct unw_module *m)
{
	for (size_t i = 0; i < y->syms.n; i++)
		if (y->syms.v[i].mod == m)
			return y->syms.v[i].s;
	struct symcache *c = vec_push(&y->syms);
	if (!c)
		return NULL;
	c->mod = m;
	c->s = NULL;
	struct tally_symbolizer_opts o = { .sz = sizeof(o), .debug_cache = true };
	if (m->file && tally_symbolizer_open(m->file, &o, &c->s))
		err_clear();
	return c->s;
}

static uint64_t cfi_key(const struct unw_module *mod, uint64_t start)
{
	return start ^ (uint64_t)(uintptr_t)mod * 0x9e3779b97f4a7c15ull;
}

/* "MODULE!fn_START" for the function of mod starting at start; NULL out of memory. */
static const char *cfi_name(struct elf_source *y, const struct unw_module *mod, uint64_t start)
{
	uint64_t key = cfi_key(mod, start);
	size_t i = LOWER_BOUND(y->cfi_names.v, y->cfi_names.n, .key, key);
	for (size_t k = i; k < y->cfi_names.n && y->cfi_names.v[k].key == key; k++)
		if (y->cfi_names.v[k].mod == mod && y->cfi_names.v[k].start == start)
			return y->cfi_names.v[k].name;
	char buf[256];
	const char *name = arena_strdup(&y->arena, sym_cfi_name(mod->path, start, buf,
								 sizeof(buf)));
	if (!name || !vec_push(&y->cfi_names))
		return name;
	memmove(&y->cfi_names.v[i + 1], &y->cfi_names.v[i],
		(y->cfi_names.n - 1 - i) * sizeof(*y->cfi_names.v));
	y->cfi_names.v[i] = (struct cfi_name){ key, mod, start, name };
	return name;
}

static void name_of(struct elf_source *y, const struct unw_frame *fr, uint64_t addr,
		    struct named *out, struct tally_frame *tf)
{
	out->plt = false;
	out->n = 0;
	if (fr->mod->elf) {
		/* PLT stubs have no symbol: a symbolizer would name the function before them. */
		struct elf_section *sec = elf_section_at(fr->mod->elf, fr->rel);
		out->plt = sec && !strncmp(sec->name, ".plt", 4);
	}
	struct tally_symbolizer *s = out->plt ? NULL : symbolizer(y, fr->mod);
	int n = s ? tally_symbolize(s, addr, tf, MAX_INLINE) : 0;
	out->n = n < 0 ? 0 : n > MAX_INLINE ? MAX_INLINE : n;
	struct tally_frame *outer = out->n ? &tf[out->n - 1] : NULL;
	if (outer && !outer->function && outer->from_cfi)
		outer->function = cfi_name(y, fr->mod, outer->sym_start);
	if (out->n <= MEMO_FRAMES)
		memcpy(out->tf, tf, (size_t)out->n * sizeof(*tf));
}

/* The name of a module address, from the memo when it was seen before; frames in *tf. */
static const struct named *lookup(struct elf_source *y, const struct unw_frame *fr,
				  uint64_t addr, struct tally_frame *tf, struct named *scratch,
				  int *n)
{
	uint64_t h = (addr ^ (uint64_t)(uintptr_t)fr->mod * 0x9e3779b97f4a7c15ull) *
		     0xff51afd7ed558ccdull;
	struct memo *m = slot_cache_entry(&y->memo, h >> (64 - MEMO_BITS));
	if (m && m->mod == fr->mod && m->addr == addr) {
		*n = m->named.n;
		return &m->named;
	}
	name_of(y, fr, addr, scratch, tf);
	*n = scratch->n;
	if (m && scratch->n <= MEMO_FRAMES) {
		m->mod = fr->mod;
		m->addr = addr;
		m->named = *scratch;
		return &m->named;
	}
	return scratch;
}

/* A frame of fr's module at fr's address: the caller adds the names. */
static struct replay_sym_frame *push_native(struct replay_frames *out,
					    enum prof_kind kind,
					    const struct unw_frame *fr)
{
	struct replay_sym_frame *f = replay_frames_push(out, kind);
	if (f) {
		f->module = fr->mod ? fr->mod->path : NULL;
		f->build_id = fr->mod ? fr->mod->build_id : NULL;
		f->addr = fr->rel;
	}
	return f;
}

static int name_frame(void *self, const struct replay_stack *st, size_t i,
		      struct replay_frames *out)
{
	struct elf_source *y = self;
	const struct unw_frame *fr = &st->frames[i];
	struct tally_frame buf[MAX_INLINE];
	struct named scratch;
	const struct named *nm = NULL;
	int n = 0;
	/* A return address points after its call: name the call. The sampled pc is exact. */
	if (fr->mod && fr->rel)
		nm = lookup(y, fr, i == 0 ? fr->rel : fr->rel - 1, buf, &scratch, &n);
	const struct tally_frame *tf = nm && n <= MEMO_FRAMES ? nm->tf : buf;
	if (nm && nm->plt) {
		struct replay_sym_frame *f = push_native(out, PROF_NATIVE, fr);
		if (f)
			f->function = "[plt]";
		return 1;
	}
	if (n <= 0) {
		struct replay_sym_frame *f = push_native(out, PROF_NATIVE, fr);
		if (f)
			f->pc = fr->pc;
		return 1;
	}
	for (int k = n; k > 0; k--) { /* outermost (the real function) first */
		struct replay_sym_frame *f =
			push_native(out, k == n ? PROF_NATIVE : PROF_INLINE, fr);
		if (!f)
			return 1;
		f->function = tf[k - 1].function;
		f->file = tf[k - 1].file;
		f->line = tf[k - 1].line;
		f->pc = fr->pc;
		f->sym_start = tf[k - 1].sym_start;
	}
	return 1;
}

static void close_source(void *self)
{
	struct elf_source *y = self;
	for (size_t i = 0; i < y->syms.n; i++)
		if (y->syms.v[i].s)
			tally_symbolizer_close(y->syms.v[i].s);
	vec_free(&y->syms);
	vec_free(&y->cfi_names);
	arena_free(&y->arena);
	slot_cache_free(&y->memo);
	free(y);
}

static const struct replay_frame_source_ops elf_ops = { .name_frame = name_frame,
							 .close = close_source };

int replay_elf_source_new(struct replay_frame_source *out)
{
	struct elf_source *y = calloc(1, sizeof(*y));
	if (y && slot_cache_init(&y->memo, (size_t)1 << MEMO_BITS, sizeof(struct memo))) {
		free(y);
		y = NULL;
	}
	if (!y)
		return err_set(-ENOMEM, "out of memory");
	*out = (struct replay_frame_source){ &elf_ops, y };
	return 0;
}
