/*
 * `tally sbpf`: run an sBPF program in tally's VM (result, compute units, logs, return
 * data, as text or one JSON object) and disassemble it. A bare ELF may call the reference
 * VM's test syscall `log` (0 CU) besides the standard syscalls.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/file.h"
#include "base/json.h"
#include "cli/cli.h"
#include "cli/cmd_sbpf_link.h"
#include "cli/cmd_sbpf_test.h"
#include "cli/sbpf_out.h"
#include "cuprof/profiler.h"
#include "cuprof/sample.h"
#include "cuprof/size.h"
#include "profile/profile.h"
#include "sbpf/disasm.h"
#include "sbpf/program.h"
#include "sbpf/vm.h"
#include "solana/syscalls.h"

static const char help[] =
	"usage: tally sbpf run PROGRAM [--input FILE] [--version VER] [--budget CU] [--json]\n"
	"                      [--reject-broken-elfs] [--raw] [--no-profile] [--sample[=HZ]]\n"
	"                      [-o PROFILE.pb.gz] [--flamegraph SVG] [--folded FILE] [--annotate HTML]\n"
	"       tally sbpf run FIXTURE.json [--json] [-o PROFILE.pb.gz] [--flamegraph SVG] ...\n"
	"       tally sbpf test DIR [--bench FILE.md [--bench-threshold N|N%]]\n"
	"       tally sbpf disasm PROGRAM [--version VER] [--raw]\n"
	"       tally sbpf size PROGRAM [--version VER] [--raw] [-o PROFILE.pb.gz] [--flamegraph SVG]\n"
	"                       [--folded FILE]\n"
	"       tally sbpf link OBJECT.o... -o PROGRAM.so [--version v0|v3] [--no-debug]\n\n"
	"Runs an sBPF program (an ELF .so of sBPF v0 to v4, an eBPF object from\n"
	"`clang -target bpf -mcpu=v3 -c`, linked in memory, or raw bytecode) in tally's VM and\n"
	"prints how it ended, the compute units (CU) it consumed, its logs and return data.\n"
	"CU are metered exactly as the Solana runtime meters them: 1 per instruction, syscalls\n"
	"charge their own cost on top.\n\n"
	"  --input FILE          bytes mapped at 0x400000000 (r1 points there); default none\n"
	"  --version VER         v0..v4: the version the ELF must have, or the version raw\n"
	"                        bytecode runs as (default v3)\n"
	"  --raw                 PROGRAM is bytecode (8-byte instructions), not an ELF file\n"
	"  --budget CU           compute budget (default 200000)\n"
	"  --json                one JSON object: result (\"success\" or the reference VM's\n"
	"                        error name), return_value, compute_units, logs, return_data\n"
	"  --reject-broken-elfs  the deployment checks: a call to a syscall the Solana runtime\n"
	"                        lacks (the test syscall `log` included) fails the load\n\n"
	"Profiling (on unless --no-profile): an exact calling-context tree of the CU, with\n"
	"inlined functions from DWARF (else .symtab names) and syscalls as `syscall:NAME` leaves\n"
	"holding their own cost. Its total always equals the CU consumed. Outputs (any number):\n"
	"  -o, --output FILE     pprof (gzipped profile.proto; `go tool pprof` reads it)\n"
	"  --flamegraph FILE     interactive SVG flame graph\n"
	"  --folded FILE         folded stacks (`a;b;c CU` lines)\n"
	"  --annotate FILE       HTML: CU per instruction of the hottest named function, with\n"
	"                        its sBPF disassembly and source lines\n"
	"  --no-profile          run without the profiler's hooks\n"
	"  --sample[=HZ]         profile by sampling instead (HZ default 999): the VM\n"
	"                        publishes its pc and call stack and the agent's sampler\n"
	"                        (docs/agent.md) reads them; samples/count per function,\n"
	"                        no inline frames, into -o, --flamegraph and --folded. For\n"
	"                        runs long enough to sample (a large --budget); not for\n"
	"                        fixtures\n\n"
	"`link` links the objects (globals resolved across them, a call to an undefined\n"
	"function a syscall by name) into a deployable ELF the Solana runtime loads: sBPF v3\n"
	"(default, static), or v0 with the dynamic relocations agave's loader applies (objects\n"
	"from -mcpu=v2, DWARF 4); the objects' DWARF comes along unless --no-debug.\n\n"
	"`size` counts the instructions of each function and inline frame (a binary-size\n"
	"view): a report on stdout, or the outputs above.\n\n"
	"Syscalls: sol_log_, sol_log_64_, sol_log_compute_units_, sol_log_pubkey, sol_log_data,\n"
	"sol_memcpy_, sol_memmove_, sol_memset_, sol_memcmp_, and `log` (the reference VM's test\n"
	"syscall, 0 CU, for bare ELF runs only).\n\n"
	"A FIXTURE.json is one Solana instruction with its programs and accounts (see\n"
	"docs/sbpf.md); `run` executes it in tally's runtime and checks its `expect`,\n"
	"printing every difference; `test` runs every *.json below DIR. --bench FILE.md\n"
	"keeps their CU in a table of Mollusk's compute_units.md layout and fails when one\n"
	"grew past --bench-threshold (N CU or N%, default 0) since the file's newest table.\n\n"
	"Exit status: 0 when the program succeeded, 1 when it failed or could not be loaded.\n";

static void print_hex(FILE *f, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", p[i]);
}

/* "pc 12 (entrypoint+0x3)" */
static void describe_pc(const struct sbpf_program *p, uint64_t pc, char *buf, size_t size)
{
	const struct sbpf_symbol *s = sbpf_program_symbol_at(p, pc);
	if (s)
		snprintf(buf, size, "pc %" PRIu64 " (%s+%#" PRIx64 ")", pc, s->name, pc - s->pc);
	else
		snprintf(buf, size, "pc %" PRIu64, pc);
}

static const char *result_name(const struct sbpf_result *r)
{
	if (r->error == SBPF_OK)
		return "success";
	if (r->error == SBPF_E_SYSCALL_ERROR)
		return r->syscall_error;
	return sbpf_error_name(r->error);
}

static void print_json(const struct sbpf_vm *vm, const struct sbpf_result *r)
{
	char desc[SBPF_DESCRIBE_MAX], where[300];
	printf("{\"result\": ");
	json_print_string(stdout, result_name(r));
	printf(", \"return_value\": %" PRIu64 ", \"compute_units\": %" PRIu64 ", \"logs\": [",
	       r->error == SBPF_OK ? r->r0 : 0, r->cu_used);
	for (size_t i = 0; i < sbpf_vm_log_count(vm); i++) {
		if (i)
			fputs(", ", stdout);
		cli_sbpf_log_print(stdout, sbpf_vm_log_at(vm, i), true);
	}
	size_t rlen;
	const uint8_t *rdata = sbpf_vm_return_data(vm, &rlen);
	printf("], \"return_data\": \"");
	print_hex(stdout, rdata, rlen);
	printf("\"");
	if (r->error != SBPF_OK) {
		sbpf_result_describe(r, desc, sizeof(desc));
		describe_pc(sbpf_vm_program(vm), r->pc, where, sizeof(where));
		printf(", \"error\": ");
		json_print_string(stdout, desc);
		printf(", \"pc\": %" PRIu64 ", \"location\": ", r->pc);
		json_print_string(stdout, where);
	}
	printf("}\n");
}

static void print_text(const struct sbpf_vm *vm, const struct sbpf_result *r)
{
	for (size_t i = 0; i < sbpf_vm_log_count(vm); i++) {
		fputs("log: ", stdout);
		cli_sbpf_log_print(stdout, sbpf_vm_log_at(vm, i), false);
		putchar('\n');
	}
	if (r->error == SBPF_OK) {
		printf("result: success\nreturn value: %" PRIu64 " (%#" PRIx64 ")\n", r->r0, r->r0);
	} else {
		char desc[SBPF_DESCRIBE_MAX], where[300];
		sbpf_result_describe(r, desc, sizeof(desc));
		describe_pc(sbpf_vm_program(vm), r->pc, where, sizeof(where));
		printf("result: %s at %s: %s\n", result_name(r), where, desc);
	}
	printf("compute units: %" PRIu64 "\n", r->cu_used);
	size_t rlen;
	const uint8_t *rdata = sbpf_vm_return_data(vm, &rlen);
	printf("return data: ");
	if (rlen)
		print_hex(stdout, rdata, rlen);
	else
		printf("(none)");
	printf("\n");
}

struct run_opts {
	const char *program, *input;
	struct sbpf_load_options load;
	uint64_t budget;
	bool json, no_profile;
	uint32_t sample_hz; /* 0: exact profile */
	struct cli_sbpf_outputs out;
};

static int parse_opts(const struct cli_cmd *cmd, int argc, char **argv, struct run_opts *o)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "version", required_argument, NULL, 'V' },
		{ "budget", required_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "reject-broken-elfs", no_argument, NULL, 'r' },
		{ "raw", no_argument, NULL, 'R' },
		{ "output", required_argument, NULL, 'o' },
		{ "flamegraph", required_argument, NULL, 'F' },
		{ "folded", required_argument, NULL, 'f' },
		{ "annotate", required_argument, NULL, 'A' },
		{ "no-profile", no_argument, NULL, 'N' },
		{ "sample", optional_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	memset(o, 0, sizeof(*o));
	o->load.version = SBPF_VRESERVED;
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'i': o->input = optarg; break;
		case 'V':
			if (sbpf_version_parse(optarg, &o->load.version))
				return cli_usage(cmd, "unknown sBPF version: %s (v0..v4)", optarg);
			break;
		case 'b':
			errno = 0;
			o->budget = strtoull(optarg, &end, 0);
			if (errno || *end || !o->budget)
				return cli_usage(cmd, "bad compute budget: %s", optarg);
			break;
		case 'j': o->json = true; break;
		case 'r': o->load.reject_broken_elfs = true; break;
		case 'R': o->load.raw = true; break;
		case 'N': o->no_profile = true; break;
		case 'S': {
			unsigned long hz = 999;
			errno = 0;
			if (optarg)
				hz = strtoul(optarg, &end, 10);
			if (optarg && (errno || *end || !hz || hz > 100000))
				return cli_usage(cmd, "bad --sample rate: %s (1..100000 Hz)", optarg);
			o->sample_hz = (uint32_t)hz;
			break;
		}
		default:
			if (cli_sbpf_outputs_option(&o->out, c, optarg))
				break;
			return cli_usage(cmd, "unknown option: %s", argv[optind - 1]);
		}
	}
	if (optind + 1 != argc)
		return cli_usage(cmd, "expected one PROGRAM");
	o->program = argv[optind];
	o->out.title = o->program;
	if (o->no_profile && cli_sbpf_outputs_any(&o->out))
		return cli_usage(cmd, "--no-profile leaves no profile to write");
	if (o->no_profile && o->sample_hz)
		return cli_usage(cmd, "--no-profile and --sample: choose one");
	if (o->sample_hz && o->out.annotate)
		return cli_usage(cmd, "--annotate needs the exact profile (per-pc CU), not --sample");
	return 0;
}

static bool is_fixture(const char *path)
{
	size_t n = strlen(path);
	return n > 5 && !strcmp(path + n - 5, ".json");
}

static int run_program(int argc, char **argv)
{
	struct run_opts o;
	int rc = parse_opts(&cli_cmd_sbpf, argc, argv, &o);
	if (rc)
		return rc;
	if (is_fixture(o.program) && o.sample_hz)
		return cli_usage(&cli_cmd_sbpf, "--sample: only for programs, not fixtures");
	if (is_fixture(o.program))
		return cli_sbpf_run_fixture(o.program, o.json, &o.out);
	struct sbpf_syscalls sys = { 0 };
	struct sbpf_program *prog = NULL;
	struct sbpf_vm *vm = NULL;
	struct cuprof *profiler = NULL;
	struct prof *profile = NULL;
	uint8_t *input = NULL;
	size_t input_len = 0;
	int status = CLI_FAIL;
	if (sol_syscalls_standard(&sys, o.load.reject_broken_elfs ? 0 : SOL_SYSCALLS_TEST_LOG)) {
		cli_fail("out of memory");
		goto out;
	}
	if ((o.input && file_read(o.input, &input, &input_len)) ||
	    sbpf_program_load_file(o.program, &sys, &o.load, &prog)) {
		cli_fail_err();
		goto out;
	}
	struct sbpf_vm_config cfg = { .compute_budget = o.budget };
	struct sbpf_result res;
	if (sbpf_vm_create(prog, &cfg, &vm)) {
		cli_fail_err();
		goto out;
	}
	sbpf_vm_set_input(vm, input, input_len, true);
	if (o.sample_hz) {
		if (cuprof_sample_run(vm, o.program, o.sample_hz, &res, &profile) ||
		    cli_sbpf_outputs_write(&o.out, profile)) {
			cli_fail_err();
			goto out;
		}
	} else if ((!o.no_profile && cuprof_new(prog, &profiler))) {
		cli_fail_err();
		goto out;
	}
	if (profiler)
		sbpf_vm_set_hooks(vm, cuprof_hooks(profiler));
	if ((!o.sample_hz && sbpf_vm_run(vm, &res)) ||
	    (profiler && (cuprof_build(profiler, o.program, res.cu_used, &profile) ||
			  cli_sbpf_outputs_write(&o.out, profile)))) {
		cli_fail_err();
		goto out;
	}
	if (o.json)
		print_json(vm, &res);
	else
		print_text(vm, &res);
	status = res.error == SBPF_OK ? CLI_OK : CLI_FAIL;
out:
	prof_free(profile);
	cuprof_free(profiler);
	sbpf_vm_free(vm);
	sbpf_program_free(prog);
	sbpf_syscalls_free(&sys);
	free(input);
	return status;
}

/* The common start of disasm and size: the program loaded with the standard syscalls (and
 * the conformance "log"), or a usage (2) or failure (1) status. */
static int load_for_inspection(int argc, char **argv, struct run_opts *o,
			       struct sbpf_syscalls *sys, struct sbpf_program **prog)
{
	int rc = parse_opts(&cli_cmd_sbpf, argc, argv, o);
	if (rc)
		return rc;
	if (sol_syscalls_standard(sys, SOL_SYSCALLS_TEST_LOG) ||
	    sbpf_program_load_file(o->program, sys, &o->load, prog)) {
		cli_fail_err();
		sbpf_syscalls_free(sys);
		return CLI_FAIL;
	}
	return 0;
}

static int disasm_program(int argc, char **argv)
{
	struct run_opts o;
	struct sbpf_syscalls sys = { 0 };
	struct sbpf_program *prog = NULL;
	int rc = load_for_inspection(argc, argv, &o, &sys, &prog);
	if (rc)
		return rc;
	char line[256];
	for (uint64_t pc = 0; pc < prog->ninsns; pc++) {
		const struct sbpf_symbol *s = sbpf_program_symbol_at(prog, pc);
		if (s && s->pc == pc)
			printf("%s:\n", s->name);
		sbpf_disasm(prog, pc, line, sizeof(line));
		printf("%6" PRIu64 ":  %s\n", pc, line);
		if (prog->code[pc].kind == SBPF_K_LDDW)
			pc++;
	}
	sbpf_program_free(prog);
	sbpf_syscalls_free(&sys);
	return CLI_OK;
}

/* `tally sbpf size`: static instruction counts, as a report or the profile outputs. */
static int size_program(int argc, char **argv)
{
	struct run_opts o;
	struct sbpf_syscalls sys = { 0 };
	struct sbpf_program *prog = NULL;
	struct prof *profile = NULL;
	int rc = load_for_inspection(argc, argv, &o, &sys, &prog);
	if (rc)
		return rc;
	if (!cli_sbpf_outputs_any(&o.out))
		o.out.report = "-";
	int status = CLI_FAIL;
	if (cuprof_size_profile(prog, o.program, &profile) ||
	    cli_sbpf_outputs_write(&o.out, profile))
		cli_fail_err();
	else
		status = CLI_OK;
	prof_free(profile);
	sbpf_program_free(prog);
	sbpf_syscalls_free(&sys);
	return status;
}

static int cmd_sbpf(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage(&cli_cmd_sbpf, "expected a subcommand: run, test, disasm, size, link");
	if (!strcmp(argv[1], "run"))
		return run_program(argc - 1, argv + 1);
	if (!strcmp(argv[1], "test"))
		return cli_sbpf_test(argc - 1, argv + 1);
	if (!strcmp(argv[1], "disasm"))
		return disasm_program(argc - 1, argv + 1);
	if (!strcmp(argv[1], "size"))
		return size_program(argc - 1, argv + 1);
	if (!strcmp(argv[1], "link"))
		return cli_sbpf_link(argc - 1, argv + 1);
	return cli_usage(&cli_cmd_sbpf, "unknown subcommand: %s", argv[1]);
}

const struct cli_cmd cli_cmd_sbpf = {
	.name = "sbpf",
	.summary = "run and disassemble sBPF (Solana) programs with exact compute units",
	.help = help,
	.run = cmd_sbpf,
};
