/*
 * Frames of sBPF pcs (see frames.h). Each pc is symbolized once, on first use, and
 * its chain kept. Frames are cached by (kind, name, start address) rather than by their
 * whole description, so that a function whose lines come from several files stays one
 * frame: the first description met (in a deterministic order) wins.
 */
#include "cuprof/frames.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/hex.h"
#include "elf/elf.h"
#include "profile/profile.h"
#include "sbpf/program.h"
#include "tally/tally.h"

enum { MAX_INLINE = 32 };

/* The file address of pc 0 and the build-id, from the program's file. A relocatable object
 * is addressed by offsets into its first executable section (which starts the bytecode);
 * a v0-v2 ELF maps its text at 0x1_0000_0000 plus its file address, a v3+ ELF at its own
 * vaddr. */
static void file_facts(const struct sbpf_program *prog, const char *path, uint64_t *base,
		       char *build_id, size_t size)
{
	struct elf_file *f = NULL;
	*base = 0;
	build_id[0] = 0;
	if (!path || elf_open(path, &f))
		return;
	if (f->type != ET_REL)
		*base = sbpf_strict_elf(prog->version) ? prog->text_vaddr
						       : prog->text_vaddr - SBPF_REGION_SIZE;
	const uint8_t *id;
	size_t len;
	if (size && !elf_build_id(f, &id, &len))
		hex_encode(id, len < (size - 1) / 2 ? len : (size - 1) / 2, build_id);
	elf_close(f);
}

int cuprof_frames_init(struct cuprof_frames *s, const struct sbpf_program *prog,
		       const char *path, struct prof *p)
{
	memset(s, 0, sizeof(*s));
	s->prog = prog;
	s->p = p;
	char build_id[128];
	file_facts(prog, path, &s->base, build_id, sizeof(build_id));
	s->module = prof_module(p, path ? path : prog->name, build_id, 0);
	if (s->module == PROF_NONE)
		return err_set(-ENOMEM, "out of memory");
	if (path) {
		struct tally_symbolizer_opts o = { .sz = sizeof(o) };
		if (tally_symbolizer_open(path, &o, &s->sym))
			s->sym = NULL; /* raw bytecode, or not an ELF the symbolizer takes */
	}
	s->pcs = calloc(prog->ninsns ? prog->ninsns : 1, sizeof(*s->pcs));
	if (!s->pcs) {
		cuprof_frames_free(s);
		return err_set(-ENOMEM, "out of memory");
	}
	return 0;
}

void cuprof_frames_free(struct cuprof_frames *s)
{
	if (s->sym)
		tally_symbolizer_close(s->sym);
	free(s->pcs);
	vec_free(&s->chain);
	free(s->keys);
	memset(s, 0, sizeof(*s));
}

static size_t key_slot(const struct cuprof_frames *s, uint32_t kind, uint32_t name, uint64_t addr)
{
	uint64_t h = (addr ^ ((uint64_t)name << 8) ^ kind) * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h ^ (h >> 29)) & (s->capkeys - 1);
	while (s->keys[i].frame1) {
		const struct cuprof_frame_key *k = &s->keys[i];
		if (k->kind == kind && k->name == name && k->addr == addr)
			break;
		i = (i + 1) & (s->capkeys - 1);
	}
	return i;
}

static int grow_keys(struct cuprof_frames *s)
{
	struct cuprof_frame_key *old = s->keys;
	size_t n = s->capkeys;
	s->capkeys = n ? n * 2 : 256;
	s->keys = calloc(s->capkeys, sizeof(*s->keys));
	if (!s->keys) {
		s->keys = old;
		s->capkeys = n;
		return err_set(-ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		if (old[i].frame1)
			s->keys[key_slot(s, old[i].kind, old[i].name, old[i].addr)] = old[i];
	free(old);
	return 0;
}

/* The frame for (kind, function, addr), created from the description on first use. */
static uint32_t frame_of(struct cuprof_frames *s, enum prof_kind kind, const char *function,
			 const char *file, uint64_t addr)
{
	uint32_t name = prof_intern_cstr(s->p, function);
	if (name == PROF_NONE)
		return PROF_NONE;
	if (2 * (s->nkeys + 1) > s->capkeys && grow_keys(s))
		return PROF_NONE;
	size_t i = key_slot(s, kind, name, addr);
	if (s->keys[i].frame1)
		return s->keys[i].frame1 - 1;
	struct prof_frame_desc d = {
		.kind = kind, .function = function, .file = file, .module = s->module, .addr = addr,
	};
	uint32_t f = prof_frame(s->p, &d);
	if (f == PROF_NONE)
		return PROF_NONE;
	s->keys[i] = (struct cuprof_frame_key){ kind, name, addr, f + 1 };
	s->nkeys++;
	return f;
}

/* A function frame from the program's own symbols (.symtab/.dynsym, the registry), or an
 * unnamed one at the function's address. */
static uint32_t symtab_function(struct cuprof_frames *s, uint64_t pc, bool entered)
{
	const struct sbpf_symbol *sym = sbpf_program_symbol_at(s->prog, pc);
	if (sym)
		return frame_of(s, PROF_VM, sym->name, NULL, cuprof_frames_addr(s, sym->pc));
	if (!entered)
		return PROF_NONE;
	return frame_of(s, PROF_VM, NULL, NULL, cuprof_frames_addr(s, pc));
}

static int push_loc(struct cuprof_frames *s, uint32_t frame, uint32_t line)
{
	if (frame == PROF_NONE)
		return -ENOMEM;
	struct cuprof_frames_loc *loc = vec_push(&s->chain);
	if (!loc)
		return err_set(-ENOMEM, "out of memory");
	*loc = (struct cuprof_frames_loc){ frame, line };
	return 0;
}

static int resolve(struct cuprof_frames *s, uint64_t pc, struct cuprof_frames_pc *e)
{
	struct tally_frame fr[MAX_INLINE];
	int n = s->sym ? tally_symbolize(s->sym, cuprof_frames_addr(s, pc), fr, MAX_INLINE) : 0;
	if (n > MAX_INLINE)
		n = MAX_INLINE;
	e->first = (uint32_t)s->chain.n;
	if (n <= 0 || !fr[n - 1].function) {
		uint32_t f = symtab_function(s, pc, false);
		if (f != PROF_NONE && push_loc(s, f, 0))
			return -ENOMEM;
		e->n = f != PROF_NONE;
		return 0;
	}
	/* The outermost frame is the function symbol holding pc when there is one: the
	 * symbolizer, like llvm-symbolizer, names code after local labels (LBB1_2) in
	 * objects. */
	const struct sbpf_symbol *fn = sbpf_program_symbol_at(s->prog, pc);
	for (int i = 0; i < n; i++) {
		uint32_t f;
		if (i < n - 1)
			f = frame_of(s, PROF_INLINE, fr[i].function, fr[i].file, 0);
		else if (fn)
			f = frame_of(s, PROF_VM, fn->name, fr[i].file, cuprof_frames_addr(s, fn->pc));
		else
			f = frame_of(s, PROF_VM, fr[i].function, fr[i].file, fr[i].sym_start);
		if (push_loc(s, f, fr[i].line))
			return -ENOMEM;
	}
	e->n = (uint16_t)n;
	return 0;
}

int cuprof_frames_chain(struct cuprof_frames *s, uint64_t pc,
			const struct cuprof_frames_loc **chain, size_t *n)
{
	*n = 0;
	*chain = NULL;
	if (pc >= s->prog->ninsns)
		return 0;
	struct cuprof_frames_pc *e = &s->pcs[pc];
	if (!e->done) {
		int rc = resolve(s, pc, e);
		if (rc)
			return rc;
		e->done = 1;
	}
	*n = e->n;
	*chain = e->n ? s->chain.v + e->first : NULL;
	return 0;
}

uint32_t cuprof_frames_function(struct cuprof_frames *s, uint64_t pc)
{
	size_t n;
	const struct cuprof_frames_loc *c;
	if (cuprof_frames_chain(s, pc, &c, &n))
		return PROF_NONE;
	return n ? c[n - 1].frame : symtab_function(s, pc, true);
}

static uint32_t named_frame(struct cuprof_frames *s, enum prof_kind kind, const char *prefix,
			    const char *name)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s:%s", prefix, name);
	struct prof_frame_desc d = { .kind = kind, .function = buf, .module = PROF_NONE };
	return prof_frame(s->p, &d);
}

uint32_t cuprof_frames_syscall(struct cuprof_frames *s, const char *name)
{
	return named_frame(s, PROF_SYSCALL, "syscall", name);
}

uint32_t cuprof_frames_program(struct cuprof_frames *s, const char *name)
{
	return named_frame(s, PROF_PROGRAM, "program", name);
}

uint32_t cuprof_frames_inline_node(struct cuprof_frames *s, uint32_t fnode, uint64_t pc,
				   uint32_t *line)
{
	size_t n;
	const struct cuprof_frames_loc *c;
	*line = 0;
	if (cuprof_frames_chain(s, pc, &c, &n))
		return PROF_NONE;
	if (!n)
		return fnode;
	uint32_t node = fnode;
	for (size_t i = n - 1; i-- > 0 && node != PROF_NONE;)
		node = prof_child(s->p, node, c[i].frame, 0, c[i + 1].line);
	*line = c[0].line;
	return node;
}
