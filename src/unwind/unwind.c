/*
 * The unwinder: one step at a time, CFI first (for Go code without CFI, Go's SP-delta
 * table) and frame pointers as the fallback (auto), or one of them only. Memory is the
 * copied stack and nothing else: a value outside it ends the walk as truncated rather than
 * guessed.
 *
 * One rule comes from measurement (perf/libunwind give up here, issue 4): in the first
 * frame, a register whose save slot lies below the stack pointer has already been restored
 * (the sample hit between `pop %rbp` and `ret`), so its current value is the caller's.
 */
#include "unwind/unwind_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/cursor.h"
#include "elf/elf.h"
#include "elf/gopclntab.h"

struct mem {
	const uint8_t *stack;
	uint64_t base, size; /* the copy holds [base, base + size) */
	const struct unw_stack *src; /* where the rest comes from, past a prefix */
	int fetch_err;
	struct memo_walk *notes; /* where reads are noted (memo.c), or NULL */
};

/* More of the copy, when only a prefix of it is at hand and [addr, addr + size) lies
 * past it. */
static bool mem_fetch(struct mem *m, uint64_t addr, unsigned size)
{
	const struct unw_stack *src = m->src;
	uint64_t need = addr - m->base + size;
	if (need > src->total || need < size || m->fetch_err)
		return false;
	const uint8_t *data = NULL;
	uint64_t have = 0;
	m->fetch_err = src->fetch(src->arg, need, &data, &have);
	if (m->fetch_err || !data || have < need)
		return false;
	m->stack = data;
	m->size = have;
	return true;
}

/* Inline: a step reads each saved register through it, half of them in a deep stack. */
static inline __attribute__((always_inline)) bool mem_load(struct mem *m, uint64_t addr,
							  unsigned size, uint64_t *val)
{
	if (addr < m->base)
		return false;
	if ((addr - m->base > m->size || m->size - (addr - m->base) < size) &&
	    !mem_fetch(m, addr, size))
		return false;
	const uint8_t *p = m->stack + (addr - m->base);
	uint64_t v = 0;
	if (size == 8) {
		v = load_u64(p, false);
	} else {
		for (unsigned i = 0; i < size; i++)
			v |= (uint64_t)p[i] << (8 * i);
	}
	*val = v;
	return true;
}

/* A read of the walk: noted for the memo. */
static inline __attribute__((always_inline)) int mem_read(struct mem *m, uint64_t addr,
							 unsigned size, uint64_t *val)
{
	bool ok = mem_load(m, addr, size, val);
	if (m->notes)
		unw_memo_read(m->notes, addr, size, ok ? *val : 0, ok);
	return ok ? 0 : -EFAULT;
}

/* The registers a call preserves carry over to the caller; the others are unknown there.
 * All values are copied (one block move, cheaper than picking), only the preserved ones
 * marked valid: nothing reads a register that is not. */
static void keep_callee_saved(const struct unw_arch *a, const struct unw_regs *cur,
			      struct unw_regs *next)
{
	memcpy(next->r, cur->r, sizeof(next->r));
	next->valid = cur->valid & a->callee_saved;
}

struct env {
	const struct unw_regs *regs;
	struct mem *mem;
};

static int env_reg(void *arg, unsigned regno, uint64_t *val)
{
	const struct env *e = arg;
	if (regno >= UNW_NREGS || !(e->regs->valid >> regno & 1))
		return -EINVAL;
	*val = e->regs->r[regno];
	return 0;
}

static int env_mem(void *arg, uint64_t addr, unsigned size, uint64_t *val)
{
	const struct env *e = arg;
	return mem_read(e->mem, addr, size, val);
}

int unw_ctx_new(enum unw_method method, struct unw_ctx **out)
{
	struct unw_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (slot_cache_init(&c->cache, UNW_CACHE_SIZE, sizeof(struct unw_cache_entry))) {
		free(c);
		return -ENOMEM;
	}
	c->method = method;
	c->arch = &unw_arch_x86_64;
	c->memo = unw_memo_new(); /* none (no memory): every walk goes all the way */
	*out = c;
	return 0;
}

void unw_ctx_free(struct unw_ctx *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nmods; i++)
		unw_module_free(c->mods[i]);
	for (size_t i = 0; i < c->nexpects; i++)
		free(c->expects[i].path);
	free(c->expects);
	free(c->mods);
	unw_jit_free_all(c);
	slot_cache_free(&c->cache);
	unw_memo_free(c->memo);
	free(c);
}

const struct unw_stats *unw_ctx_stats(const struct unw_ctx *c) { return &c->stats; }
const struct unw_arch *unw_ctx_arch(const struct unw_ctx *c) { return c->arch; }

size_t unw_ctx_modules(const struct unw_ctx *c, struct unw_module *const **mods)
{
	*mods = c->mods;
	return c->nmods;
}

void unw_ctx_bound_unused(struct unw_ctx *c, size_t max)
{
	c->max_unused = max;
}

const char *unw_end_name(enum unw_end e)
{
	static const char *const names[UNW_END_COUNT] = {
		"outermost frame", "pc outside executable mappings", "no CFI and no frame pointer",
		"value outside the copied stack", "step failed validation", "frame limit",
		"no user registers", "frame-pointer chain ended early",
	};
	return e < UNW_END_COUNT ? names[e] : "?";
}

/* The registers a CFI step with this row reads: the CFA's and a register rule's source;
 * all of them where an expression may read any. */
static uint64_t row_uses(const struct unw_arch *a, const struct dwarf_cfi_row *row,
			 uint64_t rules)
{
	if (row->cfa.kind == DWARF_CFA_EXPR)
		return ~0ull;
	uint64_t uses = row->cfa.reg < 64 ? 1ull << row->cfa.reg : 0;
	uint64_t visit = (rules | 1ull << row->ra_reg) & ((1ull << a->nregs) - 1);
	for (; visit; visit &= visit - 1) {
		const struct dwarf_rule *r = &row->regs[__builtin_ctzll(visit)];
		if (r->kind == DWARF_RULE_EXPR || r->kind == DWARF_RULE_VAL_EXPR)
			return ~0ull;
		if (r->kind == DWARF_RULE_REGISTER && r->reg < 64)
			uses |= 1ull << r->reg;
	}
	return uses;
}

/* The registers a successful CFI step with this row hands up unchanged: callee-saved ones
 * without a rule, and those whose rule says they keep their value. */
static uint64_t row_passes(const struct unw_arch *a, const struct dwarf_cfi_row *row,
			   uint64_t rules)
{
	uint64_t visit = (rules | 1ull << row->ra_reg) & ((1ull << a->nregs) - 1), same = 0;
	for (uint64_t v = visit; v; v &= v - 1) {
		unsigned i = (unsigned)__builtin_ctzll(v);
		if (row->regs[i].kind == DWARF_RULE_SAME)
			same |= 1ull << i;
	}
	return ((a->callee_saved & ~visit) | same) & ~(1ull << a->sp | 1ull << a->pc);
}

/* One CFI step: the caller's registers from the row. 1 when the row marks the outermost
 * frame, 0 on success, or -1 with the reason the step failed in *why. */
static int cfi_step(const struct unw_arch *a, const struct dwarf_cfi_row *row, uint64_t rules,
		    const struct unw_regs *cur, struct mem *mem, bool first,
		    struct unw_regs *next, enum unw_end *why)
{
	struct env e = { cur, mem };
	struct dwarf_expr_env x = { env_reg, env_mem, &e, 8, false };
	uint64_t cfa;
	if (row->cfa.kind == DWARF_CFA_EXPR) {
		if (dwarf_expr_eval(row->cfa.expr, row->cfa.expr_len, &x, false, 0, &cfa)) {
			*why = UNW_END_STACK;
			return -1;
		}
	} else {
		if (row->cfa.reg >= a->nregs || !(cur->valid >> row->cfa.reg & 1)) {
			*why = UNW_END_BAD_STEP;
			return -1;
		}
		cfa = cur->r[row->cfa.reg] + (uint64_t)row->cfa.off;
	}
	if (row->ra_reg >= a->nregs || row->regs[row->ra_reg].kind == DWARF_RULE_UNDEFINED)
		return 1;
	uint64_t sp = cur->r[a->sp];
	keep_callee_saved(a, cur, next);
	next->r[a->sp] = cfa;
	next->valid |= 1ull << a->sp;
	/* Registers without a rule keep what keep_callee_saved gave them, except the return
	 * address, which must have one: visit those with a rule and it, in order. */
	uint64_t visit = (rules | 1ull << row->ra_reg) & ((1ull << a->nregs) - 1);
	for (; visit; visit &= visit - 1) {
		unsigned i = (unsigned)__builtin_ctzll(visit);
		const struct dwarf_rule *r = &row->regs[i];
		uint64_t addr, v;
		switch (r->kind) {
		case DWARF_RULE_UNSET:
			if (i == row->ra_reg)
				goto fail_bad;
			continue;
		case DWARF_RULE_SAME:
			next->r[i] = cur->r[i];
			next->valid |= cur->valid & (1ull << i);
			continue;
		case DWARF_RULE_UNDEFINED:
			next->valid &= ~(1ull << i);
			continue;
		case DWARF_RULE_OFFSET:
			addr = cfa + (uint64_t)r->off;
			if (first && addr < sp && i != row->ra_reg) {
				/* Already popped: see the top of the file. */
				next->r[i] = cur->r[i];
				next->valid |= cur->valid & (1ull << i);
				continue;
			}
			if (mem_read(mem, addr, 8, &v))
				goto fail_stack;
			break;
		case DWARF_RULE_VAL_OFFSET:
			v = cfa + (uint64_t)r->off;
			break;
		case DWARF_RULE_REGISTER:
			if (r->reg >= a->nregs || !(cur->valid >> r->reg & 1))
				goto fail_bad;
			v = cur->r[r->reg];
			break;
		case DWARF_RULE_EXPR:
			if (dwarf_expr_eval(r->expr, r->expr_len, &x, true, cfa, &addr) ||
			    mem_read(mem, addr, 8, &v))
				goto fail_stack;
			break;
		case DWARF_RULE_VAL_EXPR:
			if (dwarf_expr_eval(r->expr, r->expr_len, &x, true, cfa, &v))
				goto fail_stack;
			break;
		default:
			goto fail_bad;
		}
		next->r[i] = v;
		next->valid |= 1ull << i;
	}
	next->r[a->pc] = next->r[row->ra_reg];
	next->valid |= (next->valid >> row->ra_reg & 1) << a->pc;
	return 0;
fail_stack:
	*why = UNW_END_STACK;
	return -1;
fail_bad:
	*why = UNW_END_BAD_STEP;
	return -1;
}

/* One frame-pointer step: fp points at the saved fp, the return address above it. */
static int fp_step(const struct unw_arch *a, const struct unw_regs *cur, struct mem *mem,
		   struct unw_regs *next, enum unw_end *why)
{
	uint64_t bp = cur->r[a->fp], ra, saved;
	if (!(cur->valid >> a->fp & 1) || bp < cur->r[a->sp] || bp & 7) {
		*why = UNW_END_NO_CFI;
		return -1;
	}
	if (mem_read(mem, bp, 8, &saved) || mem_read(mem, bp + 8, 8, &ra)) {
		*why = UNW_END_STACK;
		return -1;
	}
	keep_callee_saved(a, cur, next);
	next->valid |= 1ull << a->sp | 1ull << a->pc;
	next->r[a->fp] = saved;
	next->r[a->sp] = bp + 16;
	next->r[a->pc] = ra;
	return 0;
}

/* The caller's frame must be above ours and return into code: *map (on entry the callee's
 * mapping) becomes that code's, for the next step. A caller is mostly in the callee's
 * module: that mapping is tried before searching the space. */
static bool valid_step(const struct unw_arch *a, const struct unw_space *s,
		       const struct unw_regs *cur, const struct unw_regs *next, bool first,
		       const struct unw_mapping **map)
{
	if (!(next->valid >> a->pc & 1) || !(next->valid >> a->sp & 1))
		return false;
	uint64_t sp = cur->r[a->sp], nsp = next->r[a->sp];
	if (first ? nsp < sp : nsp <= sp)
		return false;
	uint64_t pc = next->r[a->pc];
	const struct unw_mapping *hint = *map;
	*map = hint && pc >= hint->start && pc < hint->end ? hint : unw_space_find(s, pc);
	return *map && ((*map)->prot & PROT_EXEC);
}

static void count_end(struct unw_ctx *c, enum unw_end end, size_t n, const struct unw_frame *f)
{
	struct unw_stats *st = &c->stats;
	st->samples++;
	st->frames += n;
	st->ends[end]++;
	if (end == UNW_END_OUTERMOST)
		st->complete++;
	else
		st->truncated++;
	if (n <= 1)
		st->single++;
	if (end != UNW_END_OUTERMOST && n && f[n - 1].mod)
		((struct unw_module *)f[n - 1].mod)->stops++;
}

/* Past the first frame: when the last walk had this frame with these registers, in this
 * unchanged space, and what it read from here on reads the same, its frames from here are
 * this walk's (memo.c). Copies them after the n frames of out and says so. */
static bool reuse(struct unw_ctx *c, const struct unw_space *s, const struct unw_regs *cur,
		  bool signal, struct mem *mem, struct memo_walk *notes, struct unw_frame *out,
		  size_t max, size_t *n, enum unw_end *end)
{
	size_t at;
	const struct memo_walk *last = unw_memo_match(c->memo, c->arch, s, cur, signal, &at);
	if (!last || *n + last->n - at > max)
		return false;
	/* Every read the last walk made from that frame on must read the same now. */
	for (size_t i = last->steps[at].first_read; i < last->reads.n; i++) {
		const struct memo_read *r = &last->reads.v[i];
		uint64_t v;
		bool ok = mem_load(mem, r->addr, r->size, &v);
		if (ok != r->ok || (ok && v != r->value))
			return false;
	}
	if (mem->fetch_err)
		return false;
	size_t copied = unw_memo_copy(last, at, notes, out + *n, &c->stats, end);
	*n += copied;
	c->stats.reused += copied;
	return true;
}

size_t unw_unwind(struct unw_ctx *c, const struct unw_space *s, const struct unw_regs *regs,
		  const uint8_t *stack, uint64_t stack_size, struct unw_frame *out, size_t max,
		  enum unw_end *end)
{
	struct unw_stack whole = { stack, stack_size, stack_size, NULL, NULL };
	int err;
	return unw_unwind_stack(c, s, regs, &whole, out, max, end, &err);
}

/* One step of the walk, between step() and the walk: what the frame below says about this
 * one, and what the step tells the walk and the memo. */
struct step {
	bool first;  /* in: the sampled frame */
	bool signal; /* in: the frame below is a signal frame; out: this one is */
	/* out: the registers the step read, and those it passed up unchanged (for the memo) */
	uint64_t uses, passes;
	enum unw_end end; /* out: why the walk ends at this frame, when it does */
};

/* The CFI row for vaddr in mod, or NULL. */
static const struct dwarf_cfi_row *row_for(struct unw_ctx *c, struct unw_module *mod,
					   uint64_t vaddr, bool first, uint64_t *rules)
{
	const struct dwarf_cfi_row *row;
	if (c->method == UNW_FP)
		return NULL;
	if (!unw_rule_lookup(c, mod, vaddr, &row, rules))
		return row;
	/* Sampled in a syscall that ends its function (__restore_rt: mov, syscall), the pc is
	 * the end of the FDE: the instruction before it has the same row. */
	if (first && vaddr > 0 && !unw_rule_lookup(c, mod, vaddr - 1, &row, rules))
		return row;
	return NULL;
}

/* A return address just after an entry point without CFI (ld.so's _start is
 * `mov %rsp, %rdi; call _dl_start`, returning to entry + 8): the first code the kernel
 * ran, the outermost frame. A wider window would take calls in functions placed after a
 * small _start for it (tests/unwind). */
static bool returns_to_entry(const struct unw_module *mod, uint64_t vaddr)
{
	return mod->elf && vaddr - mod->elf->entry < 16;
}

/* Whether vaddr lies in a function a Go stack starts in (struct unw_module's go_top). */
static bool in_go_top(const struct unw_module *mod, uint64_t vaddr)
{
	for (unsigned i = 0; mod && i < mod->ngo_top; i++)
		if (vaddr >= mod->go_top[i][0] && vaddr < mod->go_top[i][1])
			return true;
	return false;
}

/* A step through Go code without CFI (a -ldflags='-s -w' build), from Go's own SP-delta
 * table: the return address lies delta bytes above the stack pointer, the caller's stack
 * pointer just above it. Once the frame is made (delta > 0), Go's prologue has saved the
 * frame pointer just below the return address (go1.19 amd64: SUBQ $n, SP; MOVQ BP,
 * n-8(SP); LEAQ n-8(SP), BP); a frameless function leaves it alone. 0, or -1 with *why. */
static int go_step(struct unw_ctx *c, const struct unw_space *s, const struct unw_regs *cur,
		   struct mem *mem, const struct unw_module *mod, uint64_t vaddr,
		   const struct unw_mapping **m, struct step *st, struct unw_regs *next,
		   enum unw_end *why)
{
	const struct unw_arch *a = c->arch;
	struct elf_gofunc fn;
	int32_t delta;
	uint64_t ra, bp = 0;
	if (!elf_gopclntab_find(mod->go, vaddr, &fn) ||
	    !elf_gopclntab_spdelta(mod->go, &fn, vaddr, &delta) || delta < 0 || delta & 7) {
		*why = UNW_END_NO_CFI;
		return -1;
	}
	uint64_t at = cur->r[a->sp] + (uint64_t)delta;
	if (mem_read(mem, at, 8, &ra) || (delta && mem_read(mem, at - 8, 8, &bp))) {
		*why = UNW_END_STACK;
		return -1;
	}
	keep_callee_saved(a, cur, next);
	next->r[a->sp] = at + 8;
	next->r[a->pc] = ra;
	next->valid |= 1ull << a->sp | 1ull << a->pc;
	if (delta) {
		next->r[a->fp] = bp;
		next->valid |= 1ull << a->fp;
	}
	if (!valid_step(a, s, cur, next, st->first, m)) {
		*why = UNW_END_BAD_STEP;
		return -1;
	}
	st->passes = a->callee_saved & ~(1ull << a->sp | 1ull << a->pc | (delta ? 1ull << a->fp : 0));
	return 0;
}

/* The frame-pointer step, where CFI gave none or a wrong one: 0, or -1 with *why. */
static int fp_fallback(struct unw_ctx *c, const struct unw_space *s, const struct unw_regs *cur,
		       struct mem *mem, const struct unw_mapping **m, struct unw_frame *f,
		       struct step *st, struct unw_regs *next, enum unw_end *why)
{
	const struct unw_arch *a = c->arch;
	st->uses |= 1ull << a->fp;
	if (fp_step(a, cur, mem, next, why))
		return -1;
	if (!valid_step(a, s, cur, next, false, m)) {
		*why = UNW_END_BAD_STEP;
		return -1;
	}
	f->by_fp = true;
	c->stats.fp_steps++;
	st->passes = a->callee_saved & ~(1ull << a->fp | 1ull << a->sp | 1ull << a->pc);
	return 0;
}

/* One step: from cur, the registers of the frame f (its mapping *m), the caller's registers
 * in next, and *m becomes the caller's mapping; CFI first, then frame pointers, each step
 * validated. True when next is the caller; false with st->end when the walk ends at f. */
static bool step(struct unw_ctx *c, const struct unw_space *s, const struct unw_regs *cur,
		 struct mem *mem, const struct unw_mapping **m, struct unw_frame *f,
		 struct step *st, struct unw_regs *next)
{
	const struct unw_arch *a = c->arch;
	uint64_t pc = cur->r[a->pc];
	st->uses = 1ull << a->pc | 1ull << a->sp;
	st->passes = 0;
	if (!*m || !((*m)->prot & PROT_EXEC)) {
		st->end = UNW_END_NO_MAPPING;
		return false;
	}
	struct unw_module *mod = (*m)->mod;
	/* A return address points after the call: look up the call itself, except in the
	 * sampled frame and above a signal frame, where the pc is exact. */
	uint64_t lookup = st->first || st->signal ? pc : pc - 1, vaddr;
	bool have_vaddr = unw_file_vaddr(*m, lookup, &vaddr);
	if (have_vaddr)
		f->rel = vaddr + (pc - lookup);
	const struct unw_jit_range *jit = mod && mod->elf ? NULL : unw_jit_find(s, lookup);
	if (jit) {
		/* JIT code: its CFI counts from the code's start; the frame has no file. */
		mod = &jit->code->mod;
		vaddr = lookup - jit->start;
		have_vaddr = true;
	}
	if (have_vaddr && !jit && in_go_top(mod, vaddr)) {
		st->end = UNW_END_OUTERMOST;
		return false;
	}
	enum unw_end why = UNW_END_NO_CFI;
	int r = -1;
	uint64_t rules;
	const struct dwarf_cfi_row *row = have_vaddr ? row_for(c, mod, vaddr, st->first, &rules)
						     : NULL;
	if (row) {
		st->uses |= row_uses(a, row, rules);
		r = cfi_step(a, row, rules, cur, mem, st->first, next, &why);
		if (r == 1) {
			st->end = UNW_END_OUTERMOST;
			return false;
		}
		if (r == 0 && !valid_step(a, s, cur, next, st->first, m)) {
			r = -1;
			why = UNW_END_BAD_STEP;
		}
		if (r == 0) {
			st->passes = row_passes(a, row, rules);
			f->by_jit_cfi = jit != NULL;
			c->stats.jit_cfi_steps += jit != NULL;
		}
	} else if (have_vaddr && !st->first && returns_to_entry(mod, vaddr)) {
		st->end = UNW_END_OUTERMOST;
		return false;
	}
	if (r != 0 && !row && have_vaddr && !jit && mod && mod->go && c->method != UNW_FP)
		r = go_step(c, s, cur, mem, mod, vaddr, m, st, next, &why);
	if (r != 0 && c->method != UNW_CFI) {
		enum unw_end fwhy;
		r = fp_fallback(c, s, cur, mem, m, f, st, next, &fwhy);
		if (r && !row)
			why = fwhy;
	}
	if (r != 0) {
		st->end = why;
		return false;
	}
	st->signal = row && row->signal_frame;
	return true;
}

/* The walk: a frame per step from regs up, until a step ends it, max frames (then
 * UNW_END_DEPTH: truncated) or the memo gives the rest; each step is noted for the memo. */
size_t unw_unwind_stack(struct unw_ctx *c, const struct unw_space *s, const struct unw_regs *regs,
			const struct unw_stack *stack, struct unw_frame *out, size_t max,
			enum unw_end *end, int *fetch_err)
{
	const struct unw_arch *a = c->arch;
	*fetch_err = 0;
	if (!(regs->valid >> a->pc & 1) || !(regs->valid >> a->sp & 1)) {
		*end = UNW_END_NO_REGS;
		count_end(c, *end, 0, out);
		return 0;
	}
	struct memo_walk *notes = unw_memo_begin(c->memo, a, s);
	struct mem mem = { stack->data, regs->r[a->sp], stack->size, stack, 0, notes };
	/* Two register sets, the caller's and the callee's, swapped at each step. */
	struct unw_regs sets[2];
	struct unw_regs *cur = &sets[0], *next = &sets[1];
	*cur = *regs;
	const struct unw_mapping *m = unw_space_find(s, regs->r[a->pc]);
	struct step st = { .first = true, .signal = false };
	size_t n = 0;
	*end = UNW_END_DEPTH;
	while (n < max) {
		unw_memo_step(notes, cur, st.signal, n);
		if (n && reuse(c, s, cur, st.signal, &mem, notes, out, max, &n, end))
			break;
		struct unw_frame *f = &out[n++];
		memset(f, 0, sizeof(*f));
		f->pc = cur->r[a->pc];
		f->sp = cur->r[a->sp];
		f->mod = m ? m->mod : NULL;
		bool up = step(c, s, cur, &mem, &m, f, &st, next);
		unw_memo_stepped(notes, st.uses, up ? st.passes : 0);
		if (!up) {
			*end = st.end;
			break;
		}
		st.first = false;
		struct unw_regs *t = cur;
		cur = next;
		next = t;
	}
	*fetch_err = mem.fetch_err;
	if (!mem.fetch_err)
		count_end(c, *end, n, out);
	unw_memo_end(c->memo, notes, out, n, *end, mem.fetch_err != 0);
	return n;
}

/* A chain's frames and how it ended. walked: the chain is a walk of tally's own (tally
 * record, unwinding while recording), judged by the walk's rules: its first frame kept where no
 * mapping holds it, and a last frame without CFI that returns into the entry point
 * (ld.so's _start has no FDE) outermost, as the walk's step found them; with the walk's
 * note, ended as the walk did. */
static size_t chain_frames(struct unw_ctx *c, const struct unw_space *s, const uint64_t *ips,
			   size_t nips, struct unw_frame *out, size_t max, enum unw_end *end,
			   bool walked, const uint32_t *note)
{
	size_t n = 0;
	bool go_top = false, noted = note && (*note & 0xff) < UNW_END_COUNT;
	*end = UNW_END_FP_CHAIN;
	for (size_t i = 0; i < nips && n < max; i++) {
		const struct unw_mapping *m = unw_space_find(s, ips[i]);
		if (!m || !(m->prot & PROT_EXEC)) {
			if (walked && n == 0) {
				memset(&out[n++], 0, sizeof(*out));
				out[0].pc = ips[0];
			}
			*end = n && !walked ? UNW_END_FP_CHAIN : UNW_END_NO_MAPPING;
			break;
		}
		struct unw_frame *f = &out[n++];
		memset(f, 0, sizeof(*f));
		f->pc = ips[i];
		f->mod = m->mod;
		f->by_fp = i > 0 && !walked;
		uint64_t lookup = i == 0 ? ips[i] : ips[i] - 1, vaddr;
		if (!unw_file_vaddr(m, lookup, &vaddr))
			continue;
		f->rel = vaddr + (ips[i] - lookup);
		if (in_go_top(m->mod, vaddr)) {
			/* Go's stacks start here: whatever the chain has above is no frame. */
			*end = UNW_END_OUTERMOST;
			go_top = true;
			break;
		}
		const struct dwarf_cfi_row *row;
		if (i == nips - 1 && !noted) {
			bool has_row = unw_rule_lookup(c, m->mod, vaddr, &row, NULL) == 0;
			if (has_row ? row->ra_reg < DWARF_CFI_NREGS &&
					      row->regs[row->ra_reg].kind == DWARF_RULE_UNDEFINED
				    : walked && i > 0 && m->mod && returns_to_entry(m->mod, vaddr))
				*end = UNW_END_OUTERMOST;
		}
	}
	if (n >= 1 && n < nips && *end == UNW_END_OUTERMOST && !go_top)
		*end = UNW_END_FP_CHAIN;
	if (!walked)
		c->stats.fp_steps += n ? n - 1 : 0;
	if (noted) {
		*end = (enum unw_end)(*note & 0xff);
		c->stats.fp_steps += *note >> 16;
	}
	count_end(c, *end, n, out);
	return n;
}

size_t unw_from_callchain(struct unw_ctx *c, const struct unw_space *s, const uint64_t *ips,
			  size_t nips, struct unw_frame *out, size_t max, enum unw_end *end)
{
	return chain_frames(c, s, ips, nips, out, max, end, false, NULL);
}

uint32_t unw_walk_note(enum unw_end end, const struct unw_frame *f, size_t n)
{
	uint32_t fp = 0;
	for (size_t i = 0; i < n; i++)
		fp += f[i].by_fp;
	return (fp > 0xffff ? 0xffff : fp) << 16 | (uint32_t)end;
}

size_t unw_from_unwound_chain(struct unw_ctx *c, const struct unw_space *s,
			      const uint64_t *ips, size_t nips, const uint32_t *note,
			      struct unw_frame *out, size_t max, enum unw_end *end)
{
	return chain_frames(c, s, ips, nips, out, max, end, true, note);
}
