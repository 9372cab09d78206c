/*
 * A small stack-bytecode interpreter, the worked example of docs/agent.md: a dozen
 * opcodes, calls with arguments and locals, and a loop-heavy program (main calls hot,
 * warm and cold, whose loops have the same body and differ in length, and a recursive
 * fib). It counts the instructions each function executes itself, whatever the build:
 * those counts are what the agent's exact profile must equal.
 *
 *   stackvm [-n SCALE] [--sample FILE [--hz HZ] [--sample-pprof FILE]] [--exact FILE]
 *           [--listing FILE] [--mixed DIR] [--helper] [--calls] [--stats] [--lines]
 *           [--disasm]
 *
 * Built with -DTALLY_AGENT_DISABLE it needs no libtally and takes no profiling option;
 * otherwise it links libtally and uses the agent: --sample streams folded stacks to FILE
 * (--sample-pprof: also the samples with their pcs and lines, as pprof),
 * --exact writes the exact profile (metric "instructions") as pprof to FILE, --listing
 * the disassembly of the registered functions (for tally annotate --listing), --stats
 * prints the agent's figures (tally_agent_stats) on stderr. --mixed keeps the VM state
 * in the loop's own native frame (struct tally_agent_loop) and writes the registry to DIR,
 * for `tally record` (mixed mode). --helper adds a function mix to main's loop that calls
 * a C helper (helper_sum, which calls memset) through the CALLC opcode; --calls prints
 * "CALLER CALLEE" for every call edge the program took, "CALLER [C]" for CALLC. It prints
 * "FUNCTION COUNT" per function (with --lines, "FUNCTION:LINE COUNT" per instruction
 * before it: an instruction's line is its function's plus its index), then the result.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdbool.h>

/* The header is all a TALLY_AGENT_DISABLE build uses: macros that compile to nothing. */
#include <tally/agent.h>

enum op { PUSH, LOAD, STORE, ADD, SUB, MUL, XOR, LT, JZ, JMP, CALL, RET, DROP, HALT, CALLC };
static const char *const op_names[] = { "push", "load", "store", "add", "sub", "mul", "xor",
					"lt", "jz", "jmp", "call", "ret", "drop", "halt",
					"callc" };

struct insn {
	uint8_t op;
	int32_t arg; /* PUSH: value; LOAD/STORE: local; JZ/JMP: target pc; CALL: function;
			CALLC: none (the helper pops its argument and pushes its result) */
};

/* A function: its code at pcs [start, end) of the program, its arguments (the first
 * locals, popped from the caller's stack) and locals. */
struct function {
	const char *name;
	uint32_t start, end, nargs, nlocals, line;
};

enum { F_MAIN, F_HOT, F_WARM, F_COLD, F_FIB, F_MIX, NFUNCS };

#define MAX_CODE 256
static struct insn code[MAX_CODE];
static uint32_t ncode;
static struct function funcs[NFUNCS];

static void emit(enum op op, int32_t arg)
{
	code[ncode++] = (struct insn){ (uint8_t)op, arg };
}

/* loop(n): acc = 0; i = n; while (0 < i) { acc = acc * 3 ^ i; i = i - 1 } return acc.
 * Locals: 0 = n (argument), 1 = acc, 2 = i. */
static void emit_loop(int f, const char *name, uint32_t line)
{
	funcs[f] = (struct function){ name, ncode, 0, 1, 3, line };
	emit(PUSH, 0), emit(STORE, 1);
	emit(LOAD, 0), emit(STORE, 2);
	uint32_t top = ncode;
	emit(PUSH, 0), emit(LOAD, 2), emit(LT, 0);
	uint32_t jz = ncode;
	emit(JZ, 0);
	emit(LOAD, 1), emit(PUSH, 3), emit(MUL, 0), emit(LOAD, 2), emit(XOR, 0), emit(STORE, 1);
	emit(LOAD, 2), emit(PUSH, 1), emit(SUB, 0), emit(STORE, 2);
	emit(JMP, (int32_t)top);
	code[jz].arg = (int32_t)ncode;
	emit(LOAD, 1), emit(RET, 0);
	funcs[f].end = ncode;
}

/* fib(n): n < 2 ? n : fib(n - 1) + fib(n - 2). */
static void emit_fib(void)
{
	funcs[F_FIB] = (struct function){ "fib", ncode, 0, 1, 1, 40 };
	emit(LOAD, 0), emit(PUSH, 2), emit(LT, 0);
	uint32_t jz = ncode;
	emit(JZ, 0);
	emit(LOAD, 0), emit(RET, 0);
	code[jz].arg = (int32_t)ncode;
	emit(LOAD, 0), emit(PUSH, 1), emit(SUB, 0), emit(CALL, F_FIB);
	emit(LOAD, 0), emit(PUSH, 2), emit(SUB, 0), emit(CALL, F_FIB);
	emit(ADD, 0), emit(RET, 0);
	funcs[F_FIB].end = ncode;
}

/* mix(n): the C helper's result for n. */
static void emit_mix(void)
{
	funcs[F_MIX] = (struct function){ "mix", ncode, 0, 1, 1, 50 };
	emit(LOAD, 0), emit(CALLC, 0), emit(RET, 0);
	funcs[F_MIX].end = ncode;
}

/* main: for (r = rounds; 0 < r; r--) acc ^= hot(3n) ^ warm(2n) ^ cold(n) ^ fib(12), and
 * ^ mix(n) with the helper. Locals: 0 = r, 1 = acc. */
static void emit_main(int32_t rounds, int32_t n, bool helper)
{
	funcs[F_MAIN] = (struct function){ "main", ncode, 0, 0, 2, 1 };
	emit(PUSH, rounds), emit(STORE, 0);
	uint32_t top = ncode;
	emit(PUSH, 0), emit(LOAD, 0), emit(LT, 0);
	uint32_t jz = ncode;
	emit(JZ, 0);
	emit(PUSH, 3 * n), emit(CALL, F_HOT);
	emit(PUSH, 2 * n), emit(CALL, F_WARM), emit(XOR, 0);
	emit(PUSH, n), emit(CALL, F_COLD), emit(XOR, 0);
	emit(PUSH, 12), emit(CALL, F_FIB), emit(XOR, 0);
	if (helper)
		emit(PUSH, n), emit(CALL, F_MIX), emit(XOR, 0);
	emit(LOAD, 1), emit(XOR, 0), emit(STORE, 1);
	emit(LOAD, 0), emit(PUSH, 1), emit(SUB, 0), emit(STORE, 0);
	emit(JMP, (int32_t)top);
	code[jz].arg = (int32_t)ncode;
	emit(LOAD, 1), emit(HALT, 0);
	funcs[F_MAIN].end = ncode;
}

/* The functions of the program: mix only with the helper (nfuncs says how many). */
static int nfuncs;

static void assemble(int32_t rounds, int32_t n, bool helper)
{
	emit_main(rounds, n, helper);
	emit_loop(F_HOT, "hot", 10);
	emit_loop(F_WARM, "warm", 20);
	emit_loop(F_COLD, "cold", 30);
	emit_fib();
	nfuncs = F_FIB + 1;
	if (helper) {
		emit_mix();
		nfuncs = F_MIX + 1;
	}
	for (int f = 0; f < nfuncs; f++)
		funcs[f].nargs = f == F_MAIN ? 0 : 1;
}

/* The native code a VM instruction calls (CALLC): kept out of the loop (noinline) so that
 * a native sample shows it above the loop's frame, and through libc's memset. */
static __attribute__((noinline)) int64_t helper_sum(int64_t n)
{
	static volatile uint8_t buf[1 << 14];
	int64_t sum = 0;
	for (int64_t r = 0; r < n / 8 + 1; r++) {
		memset((uint8_t *)buf, (int)(r + n) & 0xff, sizeof(buf));
		sum += buf[(size_t)r % sizeof(buf)];
	}
	return sum;
}

/* --calls: the edges taken, caller by callee (the oracle of the call structure). */
static bool seen_call[NFUNCS][NFUNCS + 1];

/* The profiling side of the interpreter: nothing at all when the agent is compiled out. */
struct profiling {
	struct tally_agent *agent;
	struct tally_agent_thread *t;
	uint32_t ids[NFUNCS];
	bool exact, mixed;
};

#ifdef TALLY_AGENT_DISABLE
#define EXACT_COST(pr, pc) ((void)0)
#define EXACT_ENTER(pr, f, call_pc) ((void)0)
#define EXACT_EXIT(pr) ((void)0)
#else
/* Exact mode's hooks cost a call each. `exact` is a constant in each of interpret's two
 * copies (run_plain, run_exact), so the copy without them tests nothing per instruction. */
#define EXACT_COST(pr, pc) (exact ? (void)tally_agent_cost((pr)->t, (pc), 1) : (void)0)
#define EXACT_ENTER(pr, f, call_pc) \
	(exact ? (void)tally_agent_enter((pr)->t, (pr)->ids[f], (call_pc)) : (void)0)
#define EXACT_EXIT(pr) (exact ? (void)tally_agent_exit((pr)->t) : (void)0)
#endif

#define STACK_MAX 4096
#define FRAMES_MAX 256

struct vm_frame {
	uint32_t func, ret_pc, locals; /* locals: index of local 0 in the locals array */
};

/* The interpreter's loop, compiled twice (run_plain, run_exact): the copy every mode but
 * exact runs tests nothing per instruction for exact mode. In one function, or with both
 * copies inlined into one, that test and the register pressure cost the publishing build
 * 70% of its speed. */
static inline __attribute__((always_inline)) int64_t
interpret(struct profiling *pr, struct tally_agent_thread *t, uint64_t *counts, const bool exact)
{
	static int64_t stack[STACK_MAX], locals[FRAMES_MAX * 4];
	static struct vm_frame frames[FRAMES_MAX];
	uint32_t sp = 0, depth = 0;
	uint32_t pc = funcs[F_MAIN].start, fn = F_MAIN;
	memset(locals, 0, sizeof(locals));
	frames[0] = (struct vm_frame){ F_MAIN, 0, 0 };
	int64_t *loc = locals;
	(void)pr, (void)t, (void)exact; /* their uses are macros, which TALLY_AGENT_DISABLE empties */
	TALLY_AGENT_PUSH(t, pr->ids[F_MAIN], 0);
	EXACT_ENTER(pr, F_MAIN, 0);
	for (;;) {
		TALLY_AGENT_PC(t, pc);
		EXACT_COST(pr, pc);
		counts[pc]++;
		const struct insn *in = &code[pc];
		switch ((enum op)in->op) {
		case PUSH: stack[sp++] = in->arg; pc++; break;
		case LOAD: stack[sp++] = loc[in->arg]; pc++; break;
		case STORE: loc[in->arg] = stack[--sp]; pc++; break;
		case ADD: sp--; stack[sp - 1] += stack[sp]; pc++; break;
		case SUB: sp--; stack[sp - 1] -= stack[sp]; pc++; break;
		case MUL: sp--; stack[sp - 1] = (int64_t)((uint64_t)stack[sp - 1] * (uint64_t)stack[sp]); pc++; break;
		case XOR: sp--; stack[sp - 1] ^= stack[sp]; pc++; break;
		case LT: sp--; stack[sp - 1] = stack[sp - 1] < stack[sp]; pc++; break;
		case DROP: sp--; pc++; break;
		case JZ: pc = stack[--sp] ? pc + 1 : (uint32_t)in->arg; break;
		case JMP: pc = (uint32_t)in->arg; break;
		case CALL: {
			const struct function *callee = &funcs[in->arg];
			uint32_t base = frames[depth].locals + funcs[fn].nlocals;
			if (depth + 1 == FRAMES_MAX || base + callee->nlocals > FRAMES_MAX * 4) {
				fprintf(stderr, "stackvm: call depth exceeded at pc %" PRIu32 "\n", pc);
				exit(1);
			}
			frames[++depth] = (struct vm_frame){ (uint32_t)in->arg, pc + 1, base };
			loc = &locals[base];
			memset(loc, 0, callee->nlocals * sizeof(*loc));
			for (uint32_t a = callee->nargs; a-- > 0;)
				loc[a] = stack[--sp];
			TALLY_AGENT_PUSH(t, pr->ids[in->arg], pc);
			EXACT_ENTER(pr, in->arg, pc);
			seen_call[fn][in->arg] = true;
			fn = (uint32_t)in->arg;
			pc = callee->start;
			break;
		}
		case CALLC:
			seen_call[fn][NFUNCS] = true;
			stack[sp - 1] = helper_sum(stack[sp - 1]);
			pc++;
			break;
		case RET:
			TALLY_AGENT_POP(t);
			EXACT_EXIT(pr);
			pc = frames[depth].ret_pc;
			fn = frames[--depth].func;
			loc = &locals[frames[depth].locals];
			break;
		case HALT:
			TALLY_AGENT_POP(t);
			EXACT_EXIT(pr);
			return stack[sp - 1];
		}
	}
}

/* Mixed mode: the loop record lives in the loop's own native frame, which the replay
 * replaces with the VM frames, and the frames in run's (main's), just below it, where a native
 * sampler's copy of the stack finds both (docs/agent.md). One array, whichever loop runs. */
static inline __attribute__((always_inline)) int64_t
run_loop(struct profiling *pr, struct tally_agent_frame *vm_frames, uint64_t *counts,
	 const bool exact)
{
	struct tally_agent_thread *t = pr->t;
#ifndef TALLY_AGENT_DISABLE
	struct tally_agent_loop loop;
	if (pr->mixed)
		t = tally_agent_loop_begin(pr->agent, &loop, vm_frames, FRAMES_MAX);
#endif
	(void)vm_frames;
	int64_t result = interpret(pr, t, counts, exact);
#ifndef TALLY_AGENT_DISABLE
	if (pr->mixed)
		tally_agent_loop_end(&loop);
#endif
	return result;
}

static __attribute__((noinline)) int64_t
run_plain(struct profiling *pr, struct tally_agent_frame *vm_frames, uint64_t *counts)
{
	return run_loop(pr, vm_frames, counts, false);
}

static __attribute__((noinline)) int64_t
run_exact(struct profiling *pr, struct tally_agent_frame *vm_frames, uint64_t *counts)
{
	return run_loop(pr, vm_frames, counts, true);
}

/* Runs main; counts[pc] gets the times the instruction at pc ran. Inlined into main, so
 * that a mixed stack reads main;[VM] main;... */
static inline __attribute__((always_inline)) int64_t run(struct profiling *pr, uint64_t *counts)
{
	struct tally_agent_frame vm_frames[FRAMES_MAX];
	return (pr->exact ? run_exact : run_plain)(pr, vm_frames, counts);
}

/* Jump targets in hex, as the pcs of tally annotate's column and of --disasm. */
static void insn_text(uint32_t pc, char *text, size_t size)
{
	const struct insn *in = &code[pc];
	if (in->op == JZ || in->op == JMP)
		snprintf(text, size, "%s %#" PRIx32, op_names[in->op], (uint32_t)in->arg);
	else
		snprintf(text, size, "%s %" PRId32, op_names[in->op], in->arg);
}

static void disasm(void)
{
	char text[32];
	for (int f = 0; f < nfuncs; f++) {
		printf("%s:\n", funcs[f].name);
		for (uint32_t pc = funcs[f].start; pc < funcs[f].end; pc++) {
			insn_text(pc, text, sizeof(text));
			printf("%6" PRIx32 ":  %s\n", pc, text);
		}
	}
}

/* What to profile into: the files of the options. */
struct outputs {
	const char *sample, *sample_pprof, *exact, *listing, *mixed;
};

#ifndef TALLY_AGENT_DISABLE
static int fail(const char *what)
{
	fprintf(stderr, "stackvm: %s: %s\n", what, tally_errmsg());
	return 1;
}

/* Registers every function (with its bytecode, one line per instruction, the function's
 * line plus the instruction's index, and each instruction's text) and this thread. */
static int profile_start(struct profiling *pr, const struct outputs *out, unsigned hz)
{
	const char *sample = out->sample, *exact = out->exact, *mixed = out->mixed;
	TALLY_OPTS(tally_agent_opts, o, .freq_hz = hz, .omit_thread = true,
		   .sample_pprof = out->sample_pprof, .listing = out->listing, .jit_dir = mixed);
	o.mode = (sample ? TALLY_AGENT_SAMPLE : 0) | (exact ? TALLY_AGENT_EXACT : 0) |
		 (mixed ? TALLY_AGENT_MIXED : 0);
	o.output = sample;
	o.exact_output = exact;
	pr->exact = exact != NULL;
	pr->mixed = mixed != NULL;
	if (tally_agent_new(&o, &pr->agent))
		return fail("agent");
	static struct tally_agent_line lines[MAX_CODE];
	static struct tally_agent_insn insns[MAX_CODE];
	static char texts[MAX_CODE][32];
	for (int f = 0; f < nfuncs; f++) {
		const struct function *fn = &funcs[f];
		for (uint32_t pc = fn->start; pc < fn->end; pc++) {
			lines[pc] = (struct tally_agent_line){ pc, fn->line + (pc - fn->start) };
			insn_text(pc, texts[pc], sizeof(texts[pc]));
			insns[pc] = (struct tally_agent_insn){ pc, texts[pc] };
		}
		struct tally_agent_function d = {
			.sz = sizeof(d), .name = fn->name, .file = "stackvm.program", .line = fn->line,
			.start = fn->start, .end = fn->end,
			.code = (const uint8_t *)&code[fn->start],
			.code_size = (fn->end - fn->start) * sizeof(struct insn),
			.lines = &lines[fn->start], .nlines = fn->end - fn->start,
			.insns = &insns[fn->start], .ninsns = fn->end - fn->start,
		};
		if (tally_agent_register(pr->agent, &d, &pr->ids[f]))
			return fail(fn->name);
	}
	if (tally_agent_thread_register(pr->agent, &pr->t) || tally_agent_start(pr->agent))
		return fail("agent");
	return 0;
}

static int profile_stop(struct profiling *pr, bool stats)
{
	if (!pr->agent)
		return 0;
	int rc = tally_agent_stop(pr->agent) ? fail("agent") : 0;
	struct tally_agent_stats s = { .sz = sizeof(s) };
	if (stats && !tally_agent_stats(pr->agent, &s))
		fprintf(stderr, "agent: %" PRIu64 " samples, %" PRIu64 " dropped, %" PRIu64
				" deadlines missed, %" PRIu64 " off CPU, sampler CPU %" PRIu64 " ns\n",
			s.samples, s.dropped, s.missed, s.off_cpu, s.sampler_cpu_ns);
	tally_agent_free(pr->agent);
	return rc;
}
#endif

int main(int argc, char **argv)
{
	long scale = 100;
	struct outputs out = { 0 };
	unsigned hz = 0;
	bool show = false, per_line = false, stats = false, helper = false, calls = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			scale = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--sample") && i + 1 < argc)
			out.sample = argv[++i];
		else if (!strcmp(argv[i], "--sample-pprof") && i + 1 < argc)
			out.sample_pprof = argv[++i];
		else if (!strcmp(argv[i], "--exact") && i + 1 < argc)
			out.exact = argv[++i];
		else if (!strcmp(argv[i], "--listing") && i + 1 < argc)
			out.listing = argv[++i];
		else if (!strcmp(argv[i], "--mixed") && i + 1 < argc)
			out.mixed = argv[++i];
		else if (!strcmp(argv[i], "--helper"))
			helper = true;
		else if (!strcmp(argv[i], "--calls"))
			calls = true;
		else if (!strcmp(argv[i], "--hz") && i + 1 < argc)
			hz = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--stats"))
			stats = true;
		else if (!strcmp(argv[i], "--lines"))
			per_line = true;
		else if (!strcmp(argv[i], "--disasm"))
			show = true;
		else {
			fprintf(stderr, "usage: stackvm [-n SCALE] [--sample FILE [--hz HZ] "
					"[--sample-pprof FILE]] [--exact FILE] [--listing FILE] "
					"[--mixed DIR] [--helper] [--calls] [--stats] [--lines] "
					"[--disasm]\n");
			return 2;
		}
	}
	if (scale < 1 || scale > 1000000)
		scale = 100;
	assemble((int32_t)scale, 1000, helper);
	if (show) {
		disasm();
		return 0;
	}
	struct profiling pr = { 0 };
#ifndef TALLY_AGENT_DISABLE
	/* With the agent in and no profiling asked for, the macros write to a thread state
	 * nobody reads: the cost of publishing, without a sampler. */
	static struct tally_agent_frame spare[FRAMES_MAX];
	static struct tally_agent_thread unread = { .max_depth = FRAMES_MAX, .frames = spare };
	pr.t = &unread;
	if ((out.sample || out.exact || out.mixed) && profile_start(&pr, &out, hz))
		return 1;
#else
	(void)hz;
	(void)stats;
	if (out.sample || out.exact || out.listing || out.mixed) {
		fprintf(stderr, "stackvm: built with TALLY_AGENT_DISABLE: no profiling\n");
		return 2;
	}
#endif
	static uint64_t counts[MAX_CODE];
	int64_t result = run(&pr, counts);
#ifndef TALLY_AGENT_DISABLE
	if (profile_stop(&pr, stats))
		return 1;
#endif
	for (int f = 0; f < nfuncs && calls; f++)
		for (int g = 0; g <= NFUNCS; g++)
			if (seen_call[f][g])
				printf("%s %s\n", funcs[f].name, g == NFUNCS ? "[C]" : funcs[g].name);
	for (int f = 0; f < nfuncs; f++) {
		uint64_t n = 0;
		for (uint32_t pc = funcs[f].start; pc < funcs[f].end; pc++) {
			n += counts[pc];
			if (per_line && counts[pc])
				printf("%s:%" PRIu32 " %" PRIu64 "\n", funcs[f].name,
				       funcs[f].line + pc - funcs[f].start, counts[pc]);
		}
		printf("%s %" PRIu64 "\n", funcs[f].name, n);
	}
	printf("result %" PRId64 "\n", result);
	return 0;
}
