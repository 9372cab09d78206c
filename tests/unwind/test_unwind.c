/*
 * The unwinder on hand-made stacks over a program assembled here with explicit CFI
 * (_start marks the return address undefined, outer has a 32-byte frame, leaf pushes rbp
 * and uses it as the CFA register). Each test builds the registers and stack copy a
 * sample would carry and checks the frames and the ending.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "unwind/procs.h"
#include "unwind/unwind.h"

static const char asm_src[] =
	"\t.text\n\t.globl _start\n_start:\n\t.cfi_startproc\n\t.cfi_undefined rip\n"
	"\tcall outer\n\t.globl after_outer\nafter_outer:\n\tcall outer2\n"
	"\t.globl after_outer2\nafter_outer2:\n\thlt\n\t.cfi_endproc\n"
	"outer:\n\t.cfi_startproc\n\tsub $24, %rsp\n\t.cfi_def_cfa_offset 32\n\tcall leaf\n"
	"\t.globl after_leaf\nafter_leaf:\n\tadd $24, %rsp\n\t.cfi_def_cfa_offset 8\n\tret\n"
	"\t.cfi_endproc\n"
	"leaf:\n\t.cfi_startproc\n\tpush %rbp\n\t.cfi_def_cfa_offset 16\n\t.cfi_offset rbp, -16\n"
	"\tmov %rsp, %rbp\n\t.cfi_def_cfa_register rbp\n\tnop\n\t.globl leaf_body\nleaf_body:\n"
	"\tnop\n\tpop %rbp\n\t.cfi_def_cfa rsp, 8\n\t.globl leaf_ret\nleaf_ret:\n\tret\n"
	"\t.cfi_endproc\n"
	"outer2:\n\t.cfi_startproc\n\tsub $24, %rsp\n\t.cfi_def_cfa_offset 32\n\tcall fpfunc\n"
	"\t.globl after_fpfunc\nafter_fpfunc:\n\tadd $24, %rsp\n\t.cfi_def_cfa_offset 8\n\tret\n"
	"\t.cfi_endproc\n"
	/* no CFI at all: only its frame pointer tells where its caller is */
	"fpfunc:\n\tpush %rbp\n\tmov %rsp, %rbp\n\tcall leaf\n\t.globl after_fp_call\n"
	"after_fp_call:\n\tpop %rbp\n\tret\n"
	"\t.section .rodata\n\t.globl data\ndata:\n\t.quad 0\n";

static char dir[64], prog[128];
static uint64_t a_after_outer, a_after_leaf, a_leaf_body, a_leaf_ret, a_data;
static uint64_t a_after_outer2, a_after_fpfunc, a_after_fp_call;

static uint64_t sym(const char *name)
{
	char cmd[256], line[256];
	snprintf(cmd, sizeof(cmd), "nm %s", prog);
	FILE *p = popen(cmd, "r");
	uint64_t v = 0;
	while (p && fgets(line, sizeof(line), p)) {
		unsigned long long a;
		char t, n[64];
		if (sscanf(line, "%llx %c %63s", &a, &t, n) == 3 && !strcmp(n, name))
			v = a;
	}
	if (p)
		pclose(p);
	return v;
}

static int setup(void **state)
{
	strcpy(dir, "/tmp/tally-unwind.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	char src[128], cmd[512];
	snprintf(src, sizeof(src), "%s/t.S", dir);
	snprintf(prog, sizeof(prog), "%s/t", dir);
	FILE *f = fopen(src, "w");
	if (!f)
		return -1;
	fputs(asm_src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "gcc -nostdlib -static -no-pie -o %s %s", prog, src);
	if (system(cmd))
		return -1;
	a_after_outer = sym("after_outer");
	a_after_leaf = sym("after_leaf");
	a_leaf_body = sym("leaf_body");
	a_leaf_ret = sym("leaf_ret");
	a_data = sym("data");
	a_after_outer2 = sym("after_outer2");
	a_after_fpfunc = sym("after_fpfunc");
	a_after_fp_call = sym("after_fp_call");
	return a_after_outer && a_after_leaf && a_leaf_body && a_leaf_ret && a_data &&
			       a_after_outer2 && a_after_fpfunc && a_after_fp_call
		       ? 0
		       : -1;
}

static int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

/* The process: text executable, .rodata not, both mapped where the static link put them
 * (one page each, as non-PIE static links lay them out). */
struct fixture {
	struct unw_ctx *ctx;
	struct unw_space space;
	uint64_t stack[32]; /* the copy starts at S = STACK_BASE */
	struct unw_regs regs;
	struct unw_frame frames[16];
};

#define STACK_BASE 0x7ffd0000ull

static void map_program_with(struct fixture *fx, enum unw_method method)
{
	assert_int_equal(unw_ctx_new(method, &fx->ctx), 0);
	uint64_t text = a_after_outer & ~0xfffull, ro = a_data & ~0xfffull;
	assert_int_equal(unw_space_map(fx->ctx, &fx->space, text, text + 0x1000, text - 0x400000,
				       PROT_READ | PROT_EXEC, prog), 0);
	assert_int_equal(unw_space_map(fx->ctx, &fx->space, ro, ro + 0x1000, ro - 0x400000,
				       PROT_READ, prog), 0);
}

static void map_program(struct fixture *fx) { map_program_with(fx, UNW_AUTO); }

static void set(struct unw_regs *r, unsigned reg, uint64_t v)
{
	r->r[reg] = v;
	r->valid |= 1u << reg;
}

/* Inside leaf after its prologue: [S] saved rbp, [S+8] return into outer, outer's frame of
 * 24 bytes, then its return into _start at S+40. */
static void in_leaf_body(struct fixture *fx)
{
	memset(fx->stack, 0, sizeof(fx->stack));
	fx->stack[0] = 0x1234;
	fx->stack[1] = a_after_leaf;
	fx->stack[5] = a_after_outer;
	memset(&fx->regs, 0, sizeof(fx->regs));
	set(&fx->regs, UNW_X86_RIP, a_leaf_body);
	set(&fx->regs, UNW_X86_RSP, STACK_BASE);
	set(&fx->regs, UNW_X86_RBP, STACK_BASE);
}

static size_t unwind(struct fixture *fx, uint64_t sp, size_t copy, enum unw_end *end)
{
	const uint8_t *bytes = (const uint8_t *)fx->stack + (sp - STACK_BASE);
	return unw_unwind(fx->ctx, &fx->space, &fx->regs, bytes, copy, fx->frames, 16, end);
}

static void done(struct fixture *fx)
{
	unw_space_clear(&fx->space);
	unw_ctx_free(fx->ctx);
}

static void unwind_reaches_outermost_frame_through_cfi(void **state)
{
	struct fixture fx = { 0 };
	map_program(&fx);
	in_leaf_body(&fx);
	enum unw_end end;
	size_t n = unwind(&fx, STACK_BASE, sizeof(fx.stack), &end);
	assert_int_equal(end, UNW_END_OUTERMOST);
	assert_int_equal(n, 3);
	assert_int_equal(fx.frames[0].pc, a_leaf_body);
	assert_int_equal(fx.frames[1].pc, a_after_leaf);
	assert_int_equal(fx.frames[2].pc, a_after_outer);
	assert_int_equal(unw_ctx_stats(fx.ctx)->complete, 1);
	done(&fx);
}

/* On `ret` after `pop %rbp` the CFI still says rbp is saved at CFA-16, which is now below
 * the stack pointer and outside the copy: the register already holds the caller's value. */
static void unwind_register_saved_below_sp_in_first_frame_is_current(void **state)
{
	struct fixture fx = { 0 };
	map_program(&fx);
	in_leaf_body(&fx);
	fx.regs.r[UNW_X86_RIP] = a_leaf_ret;
	fx.regs.r[UNW_X86_RSP] = STACK_BASE + 8;
	fx.regs.r[UNW_X86_RBP] = 0x1234;
	enum unw_end end;
	size_t n = unwind(&fx, STACK_BASE + 8, sizeof(fx.stack) - 8, &end);
	assert_int_equal(end, UNW_END_OUTERMOST);
	assert_int_equal(n, 3);
	done(&fx);
}

/* A partial copy (as perf.data samples are read): the walk asks for more where it reads
 * past the prefix and ends as a walk over the whole copy does. */
struct partial {
	const uint8_t *all;
	uint64_t total;
	int calls, fail;
	uint64_t needs[4];
};

static int fetch_more(void *arg, uint64_t need, const uint8_t **data, uint64_t *size)
{
	struct partial *p = arg;
	if (p->calls < 4)
		p->needs[p->calls] = need;
	p->calls++;
	if (p->fail)
		return p->fail;
	*data = p->all;
	*size = need; /* no more than asked for: the walk may ask again */
	return 0;
}

static void unwind_partial_copy_fetches_what_the_walk_reads(void **state)
{
	struct fixture fx = { 0 };
	map_program(&fx);
	in_leaf_body(&fx);
	struct partial p = { (const uint8_t *)fx.stack, sizeof(fx.stack), 0, 0, { 0 } };
	struct unw_stack st = { p.all, 8, p.total, fetch_more, &p };
	enum unw_end end;
	int err;
	size_t n = unw_unwind_stack(fx.ctx, &fx.space, &fx.regs, &st, fx.frames, 16, &end, &err);
	assert_int_equal(err, 0);
	assert_int_equal(end, UNW_END_OUTERMOST);
	assert_int_equal(n, 3);
	assert_int_equal(fx.frames[1].pc, a_after_leaf);
	assert_int_equal(fx.frames[2].pc, a_after_outer);
	/* leaf's return address at S+8, then outer's at S+40 */
	assert_int_equal(p.calls, 2);
	assert_int_equal(p.needs[0], 16);
	assert_int_equal(p.needs[1], 48);
	assert_int_equal(unw_ctx_stats(fx.ctx)->complete, 1);
	done(&fx);
}

/* Past the valid bytes nothing is fetched: the walk is truncated as with a whole copy. */
static void unwind_partial_copy_never_fetches_past_its_total(void **state)
{
	struct fixture fx = { 0 };
	map_program(&fx);
	in_leaf_body(&fx);
	struct partial p = { (const uint8_t *)fx.stack, 24, 0, 0, { 0 } };
	struct unw_stack st = { p.all, 8, p.total, fetch_more, &p };
	enum unw_end end;
	int err;
	size_t n = unw_unwind_stack(fx.ctx, &fx.space, &fx.regs, &st, fx.frames, 16, &end, &err);
	assert_int_equal(err, 0);
	assert_int_equal(end, UNW_END_STACK);
	assert_int_equal(n, 2);
	assert_int_equal(p.calls, 1);
	done(&fx);
}

/* A copy that cannot be read ends the walk with the reader's error, counted nowhere. */
static void unwind_partial_copy_fetch_error_is_returned(void **state)
{
	struct fixture fx = { 0 };
	map_program(&fx);
	in_leaf_body(&fx);
	struct partial p = { (const uint8_t *)fx.stack, sizeof(fx.stack), 0, -5, { 0 } };
	struct unw_stack st = { p.all, 8, p.total, fetch_more, &p };
	enum unw_end end;
	int err;
	unw_unwind_stack(fx.ctx, &fx.space, &fx.regs, &st, fx.frames, 16, &end, &err);
	assert_int_equal(err, -5);
	assert_int_equal(p.calls, 1);
	assert_int_equal(unw_ctx_stats(fx.ctx)->samples, 0);
	done(&fx);
}

/* A stack copy that ends before outer's return address: the walk ends, marked truncated,
 * not completed with a guess. */
static void unwind_past_copied_stack_is_truncated(void **state)
{
	struct fixture fx = { 0 };
	map_program(&fx);
	in_leaf_body(&fx);
	enum unw_end end;
	size_t n = unwind(&fx, STACK_BASE, 24, &end);
	assert_int_equal(end, UNW_END_STACK);
	assert_int_equal(n, 2);
	assert_int_equal(unw_ctx_stats(fx.ctx)->truncated, 1);
	done(&fx);
}

/* A return address into data fails validation under CFI and under the frame pointer: one
 * frame, truncated, and counted as single-frame rather than as a success. */
static void unwind_return_into_non_executable_mapping_fails(void **state)
{
	struct fixture fx = { 0 };
	map_program(&fx);
	in_leaf_body(&fx);
	fx.stack[1] = a_data;
	enum unw_end end;
	size_t n = unwind(&fx, STACK_BASE, sizeof(fx.stack), &end);
	assert_int_equal(n, 1);
	assert_int_equal(end, UNW_END_BAD_STEP);
	const struct unw_stats *st = unw_ctx_stats(fx.ctx);
	assert_int_equal(st->complete, 0);
	assert_int_equal(st->single, 1);
	done(&fx);
}

/* rbp (the CFA register in leaf's body) below the stack pointer would move the CFA down. */
static void unwind_cfa_must_move_up(void **state)
{
	struct fixture fx = { 0 };
	map_program(&fx);
	in_leaf_body(&fx);
	fx.regs.r[UNW_X86_RBP] = STACK_BASE - 64;
	enum unw_end end;
	size_t n = unwind(&fx, STACK_BASE, sizeof(fx.stack), &end);
	assert_int_equal(n, 1);
	assert_int_not_equal(end, UNW_END_OUTERMOST);
	done(&fx);
}

/* A pc in no mapping at all (JIT code, a stale sample) ends at once. */
static void unwind_pc_outside_mappings_ends_there(void **state)
{
	struct fixture fx = { 0 };
	map_program(&fx);
	in_leaf_body(&fx);
	fx.regs.r[UNW_X86_RIP] = 0x10;
	enum unw_end end;
	size_t n = unwind(&fx, STACK_BASE, sizeof(fx.stack), &end);
	assert_int_equal(n, 1);
	assert_int_equal(end, UNW_END_NO_MAPPING);
	done(&fx);
}

/* A walk stored as a chain (tally record --stacks=unwound) reads back as the walk found
 * it: the same frames, and complete exactly when the walk was; a first frame in no mapping
 * is kept, as the walk keeps it; with the walk's note it ends as the walk did. Walks: to _start, from a pc in no mapping, cut short by
 * the end of the copy. */
static void unwound_chain_is_judged_as_its_walk(void **state)
{
	for (int k = 0; k < 3; k++) {
		struct fixture fx = { 0 };
		map_program(&fx);
		in_leaf_body(&fx);
		if (k == 1)
			fx.regs.r[UNW_X86_RIP] = 0x10;
		enum unw_end end, cend;
		size_t n = unwind(&fx, STACK_BASE, k == 2 ? 16 : sizeof(fx.stack), &end);
		assert_true(n >= 1);
		uint64_t ips[16];
		for (size_t i = 0; i < n; i++)
			ips[i] = fx.frames[i].pc;
		struct unw_frame out[16];
		size_t m = unw_from_unwound_chain(fx.ctx, &fx.space, ips, n, NULL, out, 16, &cend);
		assert_int_equal(m, n);
		for (size_t i = 0; i < n; i++) {
			assert_int_equal(out[i].pc, fx.frames[i].pc);
			assert_ptr_equal(out[i].mod, fx.frames[i].mod);
			assert_false(out[i].by_fp);
		}
		assert_int_equal(cend == UNW_END_OUTERMOST, end == UNW_END_OUTERMOST);
		assert_int_equal(k == 0, end == UNW_END_OUTERMOST);
		if (k == 1)
			assert_int_equal(cend, UNW_END_NO_MAPPING);
		/* With the walk's note, the chain ends exactly as the walk did (a copy cut
		 * short: UNW_END_STACK, which the chain alone cannot tell). */
		uint32_t note = unw_walk_note(end, fx.frames, n);
		assert_int_equal(unw_from_unwound_chain(fx.ctx, &fx.space, ips, n, &note, out, 16,
							&cend), n);
		assert_int_equal(cend, end);
		/* The kernel's chains drop such a first frame. */
		if (k == 1)
			assert_int_equal(unw_from_callchain(fx.ctx, &fx.space, ips, n, out, 16, &cend), 0);
		done(&fx);
	}
}

/* leaf called from fpfunc, which has no CFI but a frame pointer, called from outer2:
 * [S] fpfunc's rbp F=S+16, [S+8] into fpfunc, [F] a junk rbp, [F+8] into outer2, outer2's
 * 24 bytes, [S+56] into _start. */
static size_t through_fpfunc(enum unw_method method, enum unw_end *end, struct unw_frame *out)
{
	struct fixture fx = { 0 };
	map_program_with(&fx, method);
	memset(fx.stack, 0, sizeof(fx.stack));
	fx.stack[0] = STACK_BASE + 16;
	fx.stack[1] = a_after_fp_call;
	fx.stack[2] = 0x1234;
	fx.stack[3] = a_after_fpfunc;
	fx.stack[7] = a_after_outer2;
	set(&fx.regs, UNW_X86_RIP, a_leaf_body);
	set(&fx.regs, UNW_X86_RSP, STACK_BASE);
	set(&fx.regs, UNW_X86_RBP, STACK_BASE);
	size_t n = unwind(&fx, STACK_BASE, sizeof(fx.stack), end);
	memcpy(out, fx.frames, n * sizeof(*out));
	done(&fx);
	return n;
}

/* auto: CFI where there is some, the frame pointer where there is none. */
static void unwind_auto_falls_back_to_frame_pointer_without_cfi(void **state)
{
	struct unw_frame f[16];
	enum unw_end end;
	size_t n = through_fpfunc(UNW_AUTO, &end, f);
	assert_int_equal(end, UNW_END_OUTERMOST);
	assert_int_equal(n, 4);
	assert_int_equal(f[1].pc, a_after_fp_call);
	assert_int_equal(f[2].pc, a_after_fpfunc);
	assert_int_equal(f[3].pc, a_after_outer2);
	assert_true(f[1].by_fp);
}

/* cfi: the frame without CFI ends the stack, marked. */
static void unwind_cfi_only_stops_where_cfi_ends(void **state)
{
	struct unw_frame f[16];
	enum unw_end end;
	size_t n = through_fpfunc(UNW_CFI, &end, f);
	assert_int_equal(n, 2);
	assert_int_equal(end, UNW_END_NO_CFI);
}

/* fp: fine through the functions that keep a frame pointer, lost at outer2 (which does
 * not: rbp holds junk there). */
static void unwind_fp_only_stops_at_code_without_frame_pointer(void **state)
{
	struct unw_frame f[16];
	enum unw_end end;
	size_t n = through_fpfunc(UNW_FP, &end, f);
	assert_int_equal(n, 3);
	assert_int_not_equal(end, UNW_END_OUTERMOST);
}

/* Memo of the last walk (memo.c): a second sample whose frames above the first are the
 * first sample's. Sampled on leaf's ret, rbp already popped: frame 1 (outer) has the
 * registers it had when sampled in leaf's body. */
static void in_leaf_ret(struct fixture *fx)
{
	in_leaf_body(fx);
	fx->regs.r[UNW_X86_RIP] = a_leaf_ret;
	fx->regs.r[UNW_X86_RSP] = STACK_BASE + 8;
	fx->regs.r[UNW_X86_RBP] = 0x1234;
}

/* The walk of the second sample by fx's context (after the first's) and by a fresh one. */
static size_t walk_after(struct fixture *fx, void (*second)(struct fixture *),
			 struct unw_frame *fresh, size_t *nfresh, enum unw_end *end)
{
	enum unw_end e;
	in_leaf_body(fx);
	unwind(fx, STACK_BASE, sizeof(fx->stack), &e);
	second(fx);
	uint64_t sp = fx->regs.r[UNW_X86_RSP];
	size_t n = unwind(fx, sp, sizeof(fx->stack) - (sp - STACK_BASE), end);
	struct fixture other = { 0 };
	map_program(&other);
	memcpy(other.stack, fx->stack, sizeof(other.stack));
	other.regs = fx->regs;
	*nfresh = unwind(&other, sp, sizeof(other.stack) - (sp - STACK_BASE), &e);
	assert_int_equal(e, *end);
	memcpy(fresh, other.frames, sizeof(other.frames));
	done(&other);
	return n;
}

static void assert_same_frames(const struct unw_frame *a, const struct unw_frame *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(a[i].pc, b[i].pc);
		assert_int_equal(a[i].rel, b[i].rel);
		assert_int_equal(a[i].by_fp, b[i].by_fp);
		assert_int_equal(a[i].mod != NULL, b[i].mod != NULL);
	}
}

static void memo_copies_the_frames_a_fresh_walk_finds(void **state)
{
	struct fixture fx = { 0 };
	map_program(&fx);
	struct unw_frame fresh[16];
	size_t nfresh;
	enum unw_end end;
	size_t n = walk_after(&fx, in_leaf_ret, fresh, &nfresh, &end);
	assert_int_equal(end, UNW_END_OUTERMOST);
	assert_int_equal(n, 3);
	assert_int_equal(nfresh, 3);
	assert_same_frames(fx.frames, fresh, n);
	assert_int_equal(unw_ctx_stats(fx.ctx)->reused, 2); /* outer's frame and _start's */
	done(&fx);
}

/* A callee-saved register no step reads (rbx), different in the second sample: the frames
 * are still the first's. */
static void in_leaf_ret_other_rbx(struct fixture *fx)
{
	in_leaf_ret(fx);
	fx->regs.r[UNW_X86_RBX] = 0x5555;
	fx->regs.valid |= 1u << UNW_X86_RBX;
}

static void memo_ignores_registers_no_step_reads(void **state)
{
	struct fixture fx = { 0 };
	map_program(&fx);
	struct unw_frame fresh[16];
	size_t nfresh;
	enum unw_end end;
	size_t n = walk_after(&fx, in_leaf_ret_other_rbx, fresh, &nfresh, &end);
	assert_int_equal(n, nfresh);
	assert_same_frames(fx.frames, fresh, n);
	assert_int_equal(unw_ctx_stats(fx.ctx)->reused, 2);
	done(&fx);
}

/* The return address into _start differs: outer's frame has the same registers, but a
 * read above it does not read the same, so nothing is copied. */
static void in_leaf_ret_other_caller(struct fixture *fx)
{
	in_leaf_ret(fx);
	fx->stack[5] = a_after_outer2;
}

static void memo_not_used_when_a_read_differs(void **state)
{
	struct fixture fx = { 0 };
	map_program(&fx);
	struct unw_frame fresh[16];
	size_t nfresh;
	enum unw_end end;
	size_t n = walk_after(&fx, in_leaf_ret_other_caller, fresh, &nfresh, &end);
	assert_int_equal(n, nfresh);
	assert_same_frames(fx.frames, fresh, n);
	assert_int_equal(fx.frames[2].pc, a_after_outer2);
	assert_int_equal(unw_ctx_stats(fx.ctx)->reused, 0);
	done(&fx);
}

/* The address space changed between the samples (a new mapping): the walk is not reused,
 * even with every byte the same. */
static void memo_not_used_after_the_space_changes(void **state)
{
	struct fixture fx = { 0 };
	map_program(&fx);
	enum unw_end end;
	in_leaf_body(&fx);
	unwind(&fx, STACK_BASE, sizeof(fx.stack), &end);
	assert_int_equal(unw_space_map(fx.ctx, &fx.space, 0x10000000, 0x10001000, 0, PROT_READ,
				       ""), 0);
	in_leaf_ret(&fx);
	size_t n = unwind(&fx, STACK_BASE + 8, sizeof(fx.stack) - 8, &end);
	assert_int_equal(n, 3);
	assert_int_equal(end, UNW_END_OUTERMOST);
	assert_int_equal(unw_ctx_stats(fx.ctx)->reused, 0);
	done(&fx);
}

/* mmap over the middle of a mapping splits it; file offsets of the tail follow. */
static void space_map_splits_overlapped_mapping(void **state)
{
	struct unw_ctx *c;
	struct unw_space s = { 0 };
	assert_int_equal(unw_ctx_new(UNW_AUTO, &c), 0);
	assert_int_equal(unw_space_map(c, &s, 0x1000, 0x5000, 0, PROT_READ, ""), 0);
	assert_int_equal(unw_space_map(c, &s, 0x2000, 0x3000, 0, PROT_READ | PROT_EXEC, ""), 0);
	assert_int_equal(s.n, 3);
	const struct unw_mapping *m = unw_space_find(&s, 0x3800);
	assert_non_null(m);
	assert_int_equal(m->start, 0x3000);
	assert_int_equal(m->pgoff, 0x2000);
	assert_true(unw_space_find(&s, 0x2800)->prot & PROT_EXEC);
	assert_null(unw_space_find(&s, 0x5000));
	unw_space_clear(&s);
	unw_ctx_free(c);
}

/* A context bounded to 2 unused modules (a recording's, unw_ctx_bound_unused): files
 * mapped one after another at one address, as a program that maps ever new files does,
 * leave the modules mapped now, at most 2 others and the one just unmapped; a module still mapped (here, and in a
 * copy of the space) is never closed, and one split in two stays named by both parts. */
static void bounded_context_closes_unmapped_modules_only(void **state)
{
	(void)state;
	struct unw_ctx *c;
	struct unw_space s = { 0 }, copy = { 0 };
	assert_int_equal(unw_ctx_new(UNW_AUTO, &c), 0);
	unw_ctx_bound_unused(c, 2);
	assert_int_equal(unw_space_map(c, &s, 0x100000, 0x104000, 0, PROT_READ, "/kept/one"), 0);
	assert_int_equal(unw_space_map(c, &s, 0x101000, 0x102000, 0, PROT_READ, ""), 0);
	assert_int_equal(unw_space_copy(&copy, &s), 0);
	assert_int_equal(unw_space_map(c, &s, 0x200000, 0x201000, 0, PROT_READ, "/copied/two"), 0);
	assert_int_equal(unw_space_copy(&copy, &s), 0);
	for (int i = 0; i < 50; i++) {
		char path[64];
		snprintf(path, sizeof(path), "/churn/file-%d", i);
		assert_int_equal(unw_space_map(c, &s, 0x200000, 0x201000, 0, PROT_READ, path), 0);
		struct unw_module *const *mods;
		/* Closing comes before a new module opens, the one it replaces unmapped after:
		 * 3 mapped, 2 kept, the one just unmapped. */
		assert_true(unw_ctx_modules(c, &mods) <= 3 + 2 + 1);
	}
	struct unw_module *const *mods;
	size_t n = unw_ctx_modules(c, &mods);
	bool one = false, two = false;
	for (size_t i = 0; i < n; i++) {
		one |= !strcmp(mods[i]->path, "/kept/one");
		two |= !strcmp(mods[i]->path, "/copied/two");
	}
	assert_true(one && two);
	assert_string_equal(unw_space_find(&s, 0x100800)->mod->path, "/kept/one");
	assert_string_equal(unw_space_find(&s, 0x103800)->mod->path, "/kept/one");
	assert_string_equal(unw_space_find(&copy, 0x200800)->mod->path, "/copied/two");
	assert_int_equal(unw_space_find(&s, 0x103800)->mod->refs, 4); /* two parts, twice */
	unw_space_clear(&copy);
	unw_space_clear(&s);
	unw_ctx_free(c);
}

/* A process gone (unw_procs_exit): its space freed and its modules no longer named by it,
 * the others still found by pid (the last one takes its place), and a later record of the
 * pid starts an empty space. */
static void procs_exit_frees_the_space_only(void **state)
{
	(void)state;
	struct unw_ctx *c;
	struct unw_procs p = { 0 };
	assert_int_equal(unw_ctx_new(UNW_AUTO, &c), 0);
	for (uint32_t pid = 10; pid < 13; pid++) {
		char path[32];
		snprintf(path, sizeof(path), "/lib/of-%u", pid);
		assert_int_equal(unw_procs_map(c, &p, pid, 0x1000 * pid, 0x1000, 0, PROT_READ, path), 0);
	}
	assert_int_equal(unw_procs_fork(&p, 13, 10), 0);
	const struct unw_module *m10 = unw_space_find(&unw_procs_get(&p, 10)->space, 0xa000)->mod;
	assert_int_equal(m10->refs, 2); /* 10 and its child 13 */
	unw_procs_exit(&p, 10);
	assert_int_equal(m10->refs, 1);
	assert_int_equal(p.v.n, 3);
	for (uint32_t pid = 11; pid < 14; pid++) {
		struct unw_proc *e = unw_procs_get(&p, pid);
		assert_int_equal(e->pid, pid);
		assert_int_equal(e->space.n, 1);
	}
	assert_int_equal(unw_procs_get(&p, 10)->space.n, 0);
	unw_procs_exit(&p, 99); /* never seen: nothing */
	assert_int_equal(p.v.n, 4);
	unw_procs_free(&p);
	unw_ctx_free(c);
}

/* JIT code: 16 bytes at JIT_CODE in anonymous executable memory, called by outer (its
 * return address after_leaf) and calling leaf (return address JIT_CODE + 9); it keeps no
 * frame pointer. Its CFI, as a JIT writes it behind its code (the .eh_frame at offset 16):
 * CFA = rsp + 32 throughout, the return address at CFA - 8, rbp at CFA - 16. */
#define JIT_MAP 0x10000000ull
#define JIT_CODE (JIT_MAP + 0x100)

static const uint8_t jit_eh_frame[] = {
	/* CIE: length 20, id 0, version 1, "zR", code align 1, data align -8, ra 16,
	 * augmentation data: pcrel|sdata4; def_cfa rsp+8, ra at cfa-8; nops */
	20, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1, 0, 0,
	/* FDE at 24: length 20, CIE pointer 28 (back to offset 0), pc_begin pcrel: the field
	 * lies at 16 + 32 = 48 from the code, so -48; range 16; no augmentation data;
	 * def_cfa_offset 32, rbp at cfa-16; nops */
	20, 0, 0, 0, 28, 0, 0, 0, 0xd0, 0xff, 0xff, 0xff, 16, 0, 0, 0, 0, 0x0e, 32, 0x86, 2,
	0, 0, 0,
	0, 0, 0, 0, /* terminator */
};

static struct unw_jit_code *jit_code(struct fixture *fx)
{
	struct unw_jit_code *j;
	struct unw_jit_cfi_opts o = { .sz = sizeof(o), .name = "jit", .code_size = 16,
				      .eh_frame = jit_eh_frame,
				      .eh_frame_size = sizeof(jit_eh_frame) };
	assert_int_equal(unw_jit_code_new(fx->ctx, &o, &j), 0);
	return j;
}

/* leaf (after its prologue) called by the JIT code, called by outer: leaf's saved rbp is 0
 * (the JIT code used rbp as a scratch register), the JIT frame of 32 bytes with rbp's save
 * slot, outer's frame of 24, its return into _start. */
static void in_leaf_under_jit(struct fixture *fx, uint64_t code)
{
	memset(fx->stack, 0, sizeof(fx->stack));
	fx->stack[1] = code + 9;
	fx->stack[4] = 0x1234; /* the rbp the JIT code saved */
	fx->stack[5] = a_after_leaf;
	fx->stack[9] = a_after_outer;
	memset(&fx->regs, 0, sizeof(fx->regs));
	set(&fx->regs, UNW_X86_RIP, a_leaf_body);
	set(&fx->regs, UNW_X86_RSP, STACK_BASE);
	set(&fx->regs, UNW_X86_RBP, STACK_BASE);
	assert_int_equal(unw_space_map(fx->ctx, &fx->space, JIT_MAP, JIT_MAP + 0x1000, 0,
				       PROT_READ | PROT_EXEC, "//anon"), 0);
}

static void unwind_jit_code_is_stepped_by_its_cfi(void **state)
{
	struct fixture fx = { 0 };
	map_program(&fx);
	in_leaf_under_jit(&fx, JIT_CODE);
	assert_int_equal(unw_space_jit(&fx.space, JIT_CODE, JIT_CODE + 16, jit_code(&fx)), 0);
	enum unw_end end;
	size_t n = unwind(&fx, STACK_BASE, sizeof(fx.stack), &end);
	assert_int_equal(end, UNW_END_OUTERMOST);
	assert_int_equal(n, 4);
	assert_int_equal(fx.frames[1].pc, JIT_CODE + 9);
	assert_true(fx.frames[1].by_jit_cfi);
	assert_int_equal(fx.frames[1].rel, 0);
	assert_int_equal(fx.frames[2].pc, a_after_leaf);
	assert_int_equal(fx.frames[3].pc, a_after_outer);
	assert_int_equal(unw_ctx_stats(fx.ctx)->jit_cfi_steps, 1);
	done(&fx);
}

static void unwind_jit_code_without_cfi_falls_back_to_frame_pointer(void **state)
{
	struct fixture fx = { 0 };
	map_program(&fx);
	in_leaf_under_jit(&fx, JIT_CODE);
	enum unw_end end;
	size_t n = unwind(&fx, STACK_BASE, sizeof(fx.stack), &end);
	assert_int_equal(end, UNW_END_NO_CFI); /* rbp is 0 there */
	assert_int_equal(n, 2);
	assert_int_equal(unw_ctx_stats(fx.ctx)->jit_cfi_steps, 0);
	done(&fx);
}

/* Code loaded over part of the old code's memory replaces it (here code without CFI):
 * the old CFI no longer applies to any of it. Moved code keeps its CFI. */
static void unwind_jit_cfi_ends_where_other_code_takes_its_memory(void **state)
{
	struct fixture fx = { 0 };
	map_program(&fx);
	in_leaf_under_jit(&fx, JIT_CODE);
	struct unw_jit_code *j = jit_code(&fx);
	assert_int_equal(unw_space_jit(&fx.space, JIT_CODE, JIT_CODE + 16, j), 0);
	assert_int_equal(unw_space_jit(&fx.space, JIT_CODE + 12, JIT_CODE + 40, NULL), 0);
	enum unw_end end;
	assert_int_equal(unwind(&fx, STACK_BASE, sizeof(fx.stack), &end), 2);
	assert_int_equal(end, UNW_END_NO_CFI);
	assert_int_equal(fx.space.njits, 0);
	assert_int_equal(unw_space_jit(&fx.space, JIT_CODE + 0x200, JIT_CODE + 0x210, j), 0);
	in_leaf_under_jit(&fx, JIT_CODE + 0x200);
	assert_int_equal(unwind(&fx, STACK_BASE, sizeof(fx.stack), &end), 4);
	assert_int_equal(end, UNW_END_OUTERMOST);
	done(&fx);
}

/* A fork's child has its parent's JIT code. */
static void space_copy_keeps_jit_code(void **state)
{
	struct fixture fx = { 0 };
	map_program(&fx);
	in_leaf_under_jit(&fx, JIT_CODE);
	assert_int_equal(unw_space_jit(&fx.space, JIT_CODE, JIT_CODE + 16, jit_code(&fx)), 0);
	struct unw_space child = { 0 };
	assert_int_equal(unw_space_copy(&child, &fx.space), 0);
	enum unw_end end;
	size_t n = unw_unwind(fx.ctx, &child, &fx.regs, (const uint8_t *)fx.stack,
			      sizeof(fx.stack), fx.frames, 16, &end);
	assert_int_equal(n, 4);
	assert_int_equal(end, UNW_END_OUTERMOST);
	unw_space_clear(&child);
	done(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unwind_reaches_outermost_frame_through_cfi),
		cmocka_unit_test(unwind_register_saved_below_sp_in_first_frame_is_current),
		cmocka_unit_test(unwind_past_copied_stack_is_truncated),
		cmocka_unit_test(unwind_partial_copy_fetches_what_the_walk_reads),
		cmocka_unit_test(unwind_partial_copy_never_fetches_past_its_total),
		cmocka_unit_test(unwind_partial_copy_fetch_error_is_returned),
		cmocka_unit_test(unwind_return_into_non_executable_mapping_fails),
		cmocka_unit_test(unwind_cfa_must_move_up),
		cmocka_unit_test(unwind_pc_outside_mappings_ends_there),
		cmocka_unit_test(unwound_chain_is_judged_as_its_walk),
		cmocka_unit_test(unwind_auto_falls_back_to_frame_pointer_without_cfi),
		cmocka_unit_test(unwind_cfi_only_stops_where_cfi_ends),
		cmocka_unit_test(unwind_fp_only_stops_at_code_without_frame_pointer),
		cmocka_unit_test(memo_copies_the_frames_a_fresh_walk_finds),
		cmocka_unit_test(memo_ignores_registers_no_step_reads),
		cmocka_unit_test(memo_not_used_when_a_read_differs),
		cmocka_unit_test(memo_not_used_after_the_space_changes),
		cmocka_unit_test(space_map_splits_overlapped_mapping),
		cmocka_unit_test(unwind_jit_code_is_stepped_by_its_cfi),
		cmocka_unit_test(unwind_jit_code_without_cfi_falls_back_to_frame_pointer),
		cmocka_unit_test(unwind_jit_cfi_ends_where_other_code_takes_its_memory),
		cmocka_unit_test(space_copy_keeps_jit_code),
		cmocka_unit_test(bounded_context_closes_unmapped_modules_only),
		cmocka_unit_test(procs_exit_frees_the_space_only),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
