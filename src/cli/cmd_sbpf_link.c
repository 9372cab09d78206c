/*
 * `tally sbpf link OBJECT.o... -o PROGRAM.so [--version v0|v3] [--no-debug]`: eBPF objects
 * from upstream `clang -target bpf -c` linked into one deployable sBPF program
 * (sbpf/linker.h): v3 static, v0 with the dynamic relocations agave's loader applies;
 * the objects' DWARF carried along for the linked addresses.
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
#include "sbpf/linker.h"
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

static int read_objects(char **paths, size_t n, struct sbpf_object *objs)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t *b = NULL;
		size_t size = 0;
		int rc = file_read(paths[i], &b, &size);
		objs[i] = (struct sbpf_object){ paths[i], b, size };
		if (rc)
			return rc;
		if (size < 18 || memcmp(b, "\x7f" "ELF", 4) || b[16] != 1 || b[17])
			return err_set(-EINVAL, "%s: not a relocatable ELF object", paths[i]);
	}
	return 0;
}

static int link_objects(char **paths, size_t n, const struct sbpf_link_opts *opt,
			const char *out)
{
	/* The runtime's syscalls: a call the program makes to any other fails the link. */
	struct sbpf_syscalls sys = { 0 };
	struct sbpf_object *objs = calloc(n, sizeof(*objs));
	struct elf_bytes e = { 0 };
	uint8_t *elf = NULL;
	int rc = objs ? sol_syscalls_standard(&sys, 0) : -ENOMEM;
	if (!rc)
		rc = sol_syscalls_cpi(&sys);
	if (rc)
		err_set(rc, "out of memory");
	if (!rc)
		rc = read_objects(paths, n, objs);
	if (!rc)
		rc = sbpf_link_elf(objs, n, &sys, opt, &elf, &e.size);
	e.bytes = elf;
	if (!rc)
		rc = cli_write_output(out, paths[0], write_elf, &e);
	free(elf);
	for (size_t i = 0; objs && i < n; i++)
		free((void *)objs[i].bytes);
	free(objs);
	sbpf_syscalls_free(&sys);
	return rc;
}

int cli_sbpf_link(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "version", required_argument, NULL, 'V' },
		{ "no-debug", no_argument, NULL, 'G' },
		{ 0 },
	};
	struct sbpf_link_opts opt = { .sz = sizeof(opt), .version = SBPF_V3 };
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
		if (c == 'o')
			opt.name = optarg;
		else if (c == 'G')
			opt.no_debug = true;
		else if (c == 'V' && (!strcmp(optarg, "v0") || !strcmp(optarg, "v3")))
			opt.version = optarg[1] == '0' ? SBPF_V0 : SBPF_V3;
		else if (c == 'V')
			return cli_usage(&cli_cmd_sbpf, "link writes sBPF v0 or v3 (--version v0|v3)");
		else
			return cli_usage(&cli_cmd_sbpf, "unknown option");
	}
	if (optind >= argc || !opt.name)
		return cli_usage(&cli_cmd_sbpf, "link expects OBJECT.o... and -o PROGRAM.so");
	int rc = link_objects(argv + optind, (size_t)(argc - optind), &opt, opt.name);
	return rc ? cli_fail_err() : CLI_OK;
}
