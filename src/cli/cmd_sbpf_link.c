/*
 * `tally sbpf link OBJECT.o -o PROGRAM.so [--version v3]`: an eBPF object from upstream
 * `clang -target bpf -mcpu=v3 -c`, linked as `tally sbpf run` links it in memory, written
 * as a deployable sBPF v3 ELF (sbpf/elf_write.c) that the Solana runtime loads.
 */
#include "cli/cmd_sbpf_link.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/file.h"
#include "cli/cli.h"
#include "cli/profile_input.h"
#include "sbpf/program.h"
#include "solana/runtime.h"
#include "solana/syscalls.h"

struct elf_bytes {
	const uint8_t *bytes;
	size_t size;
};

static int write_elf(FILE *f, void *ctx)
{
	const struct elf_bytes *e = ctx;
	return fwrite(e->bytes, 1, e->size, f) == e->size ? 0 : err_set(-EIO, "write failed");
}

int sbpf_cli_link(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "version", required_argument, NULL, 'V' },
		{ 0 },
	};
	const char *out = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
		if (c == 'o')
			out = optarg;
		else if (c == 'V' && strcmp(optarg, "v3"))
			return cli_usage(&cli_cmd_sbpf, "link writes sBPF v3 only (--version v3)");
		else if (c != 'V')
			return cli_usage(&cli_cmd_sbpf, "unknown option");
	}
	if (optind != argc - 1 || !out)
		return cli_usage(&cli_cmd_sbpf, "link expects one OBJECT.o and -o PROGRAM.so");
	/* The runtime's syscalls: a call the program makes to any other fails the link. */
	struct sbpf_syscalls sys = { 0 };
	struct sbpf_program *prog = NULL;
	struct sbpf_load_options opt = { .version = SBPF_V3 };
	uint8_t *elf = NULL;
	struct elf_bytes e = { 0 };
	int rc = sol_syscalls_standard(&sys, 0);
	if (!rc)
		rc = sol_syscalls_cpi(&sys);
	if (rc)
		err_set(rc, "out of memory");
	uint8_t *obj = NULL;
	size_t obj_size = 0;
	if (!rc)
		rc = file_read(argv[optind], &obj, &obj_size);
	if (!rc && (obj_size < 18 || memcmp(obj, "\x7f" "ELF", 4) || obj[16] != 1 || obj[17]))
		rc = err_set(-EINVAL, "%s: not a relocatable ELF object", argv[optind]);
	if (!rc)
		rc = sbpf_program_load(argv[optind], obj, obj_size, &sys, &opt, &prog);
	free(obj);
	if (!rc)
		rc = sbpf_program_write_v3(prog, &elf, &e.size);
	e.bytes = elf;
	if (!rc)
		rc = cli_write_output(out, argv[optind], write_elf, &e);
	free(elf);
	sbpf_program_free(prog);
	sbpf_syscalls_free(&sys);
	return rc ? cli_fail_err() : CLI_OK;
}
