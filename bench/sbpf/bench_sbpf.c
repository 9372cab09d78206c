/*
 * Interpreter speed in instructions per second on two compute-bound sBPF v3 programs,
 * plain, with profiling hooks attached (every run of executed instructions is reported to a
 * counter), and profiled (tally's profiler on the hooks, its profile built after the run, as
 * `tally sbpf run` does by default). The programs:
 *
 *   arith: a 64-bit arithmetic loop (add, xor, shifts, mul, a conditional branch)
 *   bytes: a byte load / add / store loop over a 4 KiB input buffer, repeated
 *   sysc:  a loop around the cheapest syscall, sol_get_stack_height (3 instructions
 *          and one syscall per iteration): what crossing the syscall boundary costs
 *
 * Usage: bench_sbpf [ROUNDS [PROGRAM [MODE]]]   prints one line per program and mode, the
 * hooked and profiled ones with their time as a multiple of the plain run's. PROGRAM and
 * MODE pick one (to count instructions under callgrind, say).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "cuprof/profiler.h"
#include "profile/profile.h"
#include "sbpf/isa.h"
#include "sbpf/program.h"
#include "sbpf/vm.h"
#include "solana/syscalls.h"

#define I(op, dst, src, off, imm)                                                            \
	(uint8_t)(op), (uint8_t)((src) << 4 | (dst)), (uint8_t)((off) & 0xff),               \
		(uint8_t)(((off) >> 8) & 0xff), (uint8_t)((imm) & 0xff),                     \
		(uint8_t)(((imm) >> 8) & 0xff), (uint8_t)(((imm) >> 16) & 0xff),            \
		(uint8_t)(((uint32_t)(imm) >> 24) & 0xff)

static const uint8_t arith[] = {
	I(0xb7, 1, 0, 0, 10000000), /* r1 = 10M */
	I(0xb7, 0, 0, 0, 1),        /* r0 = 1 */
	I(0x0f, 0, 1, 0, 0),        /* loop: r0 += r1 */
	I(0xbf, 2, 0, 0, 0),        /* r2 = r0 */
	I(0x67, 2, 0, 0, 13),       /* r2 <<= 13 */
	I(0xaf, 0, 2, 0, 0),        /* r0 ^= r2 */
	I(0x77, 2, 0, 0, 7),        /* r2 >>= 7 */
	I(0x27, 2, 0, 0, 3),        /* r2 *= 3 */
	I(0x0f, 0, 2, 0, 0),        /* r0 += r2 */
	I(0x17, 1, 0, 0, 1),        /* r1 -= 1 */
	I(0x55, 1, 0, -9, 0),       /* if r1 != 0 goto loop */
	I(0x95, 0, 0, 0, 0),
};

static const uint8_t bytes[] = {
	I(0xb7, 3, 0, 0, 2500),     /* r3 = rounds */
	I(0xbf, 2, 1, 0, 0),        /* outer: r2 = r1 (input) */
	I(0xb7, 4, 0, 0, 4096),     /* r4 = 4096 */
	I(0x71, 5, 2, 0, 0),        /* inner: r5 = *(u8 *)r2 */
	I(0x07, 5, 0, 0, 1),        /* r5 += 1 */
	I(0x73, 2, 5, 0, 0),        /* *(u8 *)r2 = r5 */
	I(0x07, 2, 0, 0, 1),        /* r2 += 1 */
	I(0x17, 4, 0, 0, 1),        /* r4 -= 1 */
	I(0x55, 4, 0, -6, 0),       /* if r4 != 0 goto inner */
	I(0x17, 3, 0, 0, 1),        /* r3 -= 1 */
	I(0x55, 3, 0, -10, 0),      /* if r3 != 0 goto outer */
	I(0xbf, 0, 5, 0, 0),
	I(0x95, 0, 0, 0, 0),
};

/* The call's imm is the syscall's murmur3 hash (v3 static syscalls), patched in main. */
static uint8_t sysc[] = {
	I(0xb7, 6, 0, 0, 10000000), /* r6 = 10M */
	I(0x85, 0, 0, 0, 0),        /* loop: call sol_get_stack_height */
	I(0x17, 6, 0, 0, 1),        /* r6 -= 1 */
	I(0x55, 6, 0, -3, 0),       /* if r6 != 0 goto loop */
	I(0x95, 0, 0, 0, 0),
};

static void on_insns(void *ctx, const struct sbpf_insn_run *runs, size_t nruns)
{
	for (size_t i = 0; i < nruns; i++)
		*(uint64_t *)ctx += runs[i].n;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: steadier on a shared machine */
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

enum mode { PLAIN, HOOKED, PROFILED };
static const char *const mode_names[] = { "plain", "hooked", "profiled" };

/* One run; the profiled mode includes building the profile from the recorded tree. */
static int run_once(struct sbpf_vm *vm, const struct sbpf_program *p, enum mode mode,
		    struct sbpf_result *res, double *dt)
{
	static uint8_t input[4096];
	uint64_t seen = 0;
	struct sbpf_hooks h = { .ctx = &seen, .on_insns = on_insns };
	struct cuprof *pr = NULL;
	struct prof *prof = NULL;
	if (mode == PROFILED && cuprof_new(p, &pr))
		return 1;
	sbpf_vm_set_input(vm, input, sizeof(input), true);
	sbpf_vm_set_hooks(vm, mode == HOOKED ? &h : mode == PROFILED ? cuprof_hooks(pr) : NULL);
	double t0 = now();
	int rc = sbpf_vm_run(vm, res) || (pr && cuprof_build(pr, NULL, res->cu_used, &prof));
	*dt = now() - t0;
	prof_free(prof);
	cuprof_free(pr);
	return rc || res->error != SBPF_OK || (mode == HOOKED && seen != res->insns);
}

struct program {
	const char *name;
	const uint8_t *code;
	size_t len;
};

/* Each round runs the modes one after another, so that all three see the same machine; a
 * mode's figure is its best round. */
static int bench(const struct program *prog, int only_mode, int rounds)
{
	struct sbpf_syscalls sys = { 0 };
	struct sbpf_program *p;
	struct sbpf_load_options opt = { false, SBPF_V3, true };
	if (sol_syscalls_standard(&sys, 0) ||
	    sbpf_program_load(prog->name, prog->code, prog->len, &sys, &opt, &p)) {
		fprintf(stderr, "%s\n", err_msg());
		return 1;
	}
	double best[PROFILED + 1] = { 0 };
	uint64_t insns = 0;
	for (int r = 0; r < rounds; r++) {
		for (enum mode m = PLAIN; m <= PROFILED; m++) {
			if (only_mode >= 0 && m != (enum mode)only_mode)
				continue;
			struct sbpf_vm_config cfg = { .compute_budget = UINT64_MAX / 2 };
			struct sbpf_vm *vm;
			struct sbpf_result res;
			double dt;
			if (sbpf_vm_create(p, &cfg, &vm))
				return 1;
			if (run_once(vm, p, m, &res, &dt)) {
				fprintf(stderr, "%s: run failed (%s; %s)\n", prog->name,
					sbpf_error_name(res.error), err_msg());
				return 1;
			}
			insns = res.insns;
			double rate = (double)res.insns / dt;
			if (rate > best[m])
				best[m] = rate;
			sbpf_vm_free(vm);
		}
	}
	for (enum mode m = PLAIN; m <= PROFILED; m++) {
		if (only_mode >= 0 && m != (enum mode)only_mode)
			continue;
		printf("%-6s %-9s %11llu instructions  %7.1f M instructions/s (best of %d)",
		       prog->name, mode_names[m], (unsigned long long)insns, best[m] / 1e6, rounds);
		if (m != PLAIN && only_mode < 0)
			printf("  %.3fx plain's time", best[PLAIN] / best[m]);
		printf("\n");
	}
	sbpf_program_free(p);
	sbpf_syscalls_free(&sys);
	return 0;
}

static int index_of(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return (int)i;
	return -1;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	if (rounds < 1)
		rounds = 1;
	const char *sc = "sol_get_stack_height";
	uint32_t h = sbpf_hash(sc, strlen(sc));
	memcpy(&sysc[12], &h, 4);
	const struct program progs[] = {
		{ "arith", arith, sizeof(arith) },
		{ "bytes", bytes, sizeof(bytes) },
		{ "sysc", sysc, sizeof(sysc) },
	};
	const char *prog_names[] = { "arith", "bytes", "sysc" };
	int only_prog = argc > 2 ? index_of(prog_names, 3, argv[2]) : -1;
	int only_mode = argc > 3 ? index_of(mode_names, 3, argv[3]) : -1;
	if ((argc > 2 && only_prog < 0) || (argc > 3 && only_mode < 0)) {
		fprintf(stderr, "usage: bench_sbpf [ROUNDS [arith|bytes|sysc [plain|hooked|profiled]]]\n");
		return 2;
	}
	for (int i = 0; i < 3; i++)
		if ((only_prog < 0 || i == only_prog) && bench(&progs[i], only_mode, rounds))
			return 1;
	return 0;
}
