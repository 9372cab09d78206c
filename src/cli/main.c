/*
 * tally's entry point: global options, subcommand dispatch and `tally help`.
 */
#include "cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/bulk.h"
#include "base/err.h"
#include "base/file.h"
#include "elf/elf.h"
#include "tally/tally.h"

/* One line per command, in the order `tally --help` lists them; NULL ends the list. */
static const struct cli_cmd *const commands[] = {
	&cli_cmd_record,
	&cli_cmd_report,
	&cli_cmd_flamegraph,
	&cli_cmd_annotate,
	&cli_cmd_export,
	&cli_cmd_diff,
	&cli_cmd_sbpf,
	&cli_cmd_symbolize,
	&cli_cmd_probes,
	NULL,
};

/* A write that failed because its reader is gone (`tally report F | head`) ends tally as
 * SIGPIPE's default action does, quietly and with the same status, also when tally
 * inherited SIGPIPE ignored: the error it caused is not printed. git does the same;
 * coreutils print "write error: Broken pipe" and exit 1, perf exits 0. */
void cli_end_if_reader_gone(FILE *f, int fd)
{
	if (ferror(f) && file_reader_gone(fd))
		file_die_of_sigpipe();
}

static void vmsg(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
static void vmsg(const char *fmt, va_list ap)
{
	cli_end_if_reader_gone(stdout, STDOUT_FILENO);
	fputs("tally: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int cli_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	return CLI_FAIL;
}

int cli_fail_err(void)
{
	return cli_fail("%s", err_msg());
}

int cli_usage(const struct cli_cmd *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	if (cmd)
		fprintf(stderr, "Run 'tally help %s' for usage.\n", cmd->name);
	else
		fputs("Run 'tally --help' for usage.\n", stderr);
	return CLI_USAGE;
}

int cli_bad_option(const struct cli_cmd *cmd, int c, char **argv)
{
	/* getopt names the option only by optopt: 0 for an unknown long option, the letter
	 * for a short one (which may sit in a group, "-kx", so argv[optind - 1] can be an
	 * earlier word), the option's code for a long one given a value it does not take. */
	const char *arg = argv[optind - 1];
	bool is_long = !strncmp(arg, "--", 2) &&
		       (c == ':' || !optopt || optopt > 0xff || strchr(arg, '='));
	char letter[3] = { '-', (char)optopt, 0 };
	const char *name = is_long ? arg : letter;
	int len = (int)strcspn(name, "=");
	if (c == ':')
		return cli_usage(cmd, "%.*s needs a value", len, name);
	if (is_long && optopt)
		return cli_usage(cmd, "%.*s takes no value", len, name);
	return cli_usage(cmd, "unknown option: %.*s", len, name);
}

int cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return 1;
	return 0;
}

static void print_main_help(FILE *f)
{
	fputs("usage: tally [--version] [--help] COMMAND [ARGS...]\n\n"
	      "tally is a profiler whose stacks are right: native sampling with its own DWARF\n"
	      "unwinder, deterministic sBPF profiling, symbolization with inline frames, and\n"
	      "reports in the formats other tools read.\n\n"
	      "Quick start (README.md shows the same lines):\n"
	      "  native       tally record -- ./prog ARGS\n"
	      "  Python       tally record -- python3 app.py\n"
	      "  Ruby         tally record -- ruby3.1 app.rb\n"
	      "  Lua          tally record -- lua5.4 script.lua\n"
	      "  JIT, Node    tally record -- node --perf-basic-prof app.js\n"
	      "  Go           tally record -- ./goprog\n"
	      "  Solana sBPF  tally sbpf run fixture.json --flamegraph cu.svg\n"
	      "  tracepoints  tally probes count -- ./prog ARGS\n"
	      "tally record writes perf.data: read it with tally report [--tree], tally\n"
	      "flamegraph -o flame.svg, or tally export -f pprof|speedscope|firefox|folded.\n\n"
	      "Commands:\n",
	      f);
	for (size_t i = 0; commands[i]; i++)
		fprintf(f, "  %-12s %s\n", commands[i]->name, commands[i]->summary);
	fputs("  help         show the help of a command: tally help COMMAND\n\n"
	      "Errors are printed as 'tally: FILE: what went wrong'. Exit status: 0 on success,\n"
	      "1 on failure, 2 on bad usage; output into a pipe that closes (| head) ends\n"
	      "tally quietly, as SIGPIPE does (141), also when SIGPIPE is ignored.\n\n"
	      "Environment:\n"
	      "  TALLY_CACHE  tally's cache directory (default $XDG_CACHE_HOME/tally, else\n"
	      "               ~/.cache/tally; 'off' for none). Commands that symbolize, and\n"
	      "               record for the modules it recorded, keep there, under\n"
	      "               debug/.build-id/, a decompressed copy of each compressed\n"
	      "               separate debug file (libc6-dbg's: 10 MB): later runs skip\n"
	      "               inflating it. Deleting it is always safe.\n"
	      "  TALLY_CACHE_STORE  'wait': store such a copy before the command exits. By\n"
	      "               default a process detached at exit stores it in the background\n"
	      "               (nice 19, output to /dev/null) and the command does not wait.\n"
	      "  DEBUGINFOD_URLS  debuginfod servers (space-separated URLs) asked for the\n"
	      "               separate debug file of a module that has none on disk, by\n"
	      "               commands that symbolize; unset: nothing is asked. Downloads are\n"
	      "               kept under $TALLY_CACHE/debuginfod ($DEBUGINFOD_CACHE_PATH if\n"
	      "               set). A server that does not answer costs at most 5 s per run\n"
	      "               and one warning; tally then asks nothing more.\n"
	      "  TALLY_DEBUGINFOD  'off': no debuginfod lookups even with DEBUGINFOD_URLS.\n",
	      f);
}

static const struct cli_cmd *find_command(const char *name)
{
	for (size_t i = 0; commands[i]; i++)
		if (!strcmp(commands[i]->name, name))
			return commands[i];
	return NULL;
}

static int help_command(int argc, char **argv)
{
	if (argc < 2) {
		print_main_help(stdout);
		return CLI_OK;
	}
	const struct cli_cmd *cmd = find_command(argv[1]);
	if (!cmd)
		return cli_usage(NULL, "no such command: %s", argv[1]);
	fputs(cmd->help, stdout);
	return CLI_OK;
}

/* Every command is one short process that builds large tables (line tables, unit
 * indexes, profiles) and frees many of them on the way. By default glibc serves blocks over
 * 128 KiB with mmap and trims the heap on free, so each such table is faulted in afresh,
 * page by page, zeroed by the kernel; kept in the heap, freed memory is reused as it is.
 * 32 MiB is the largest threshold glibc accepts. The heap's first 64 MiB are on huge
 * pages (base/bulk.h): a report of 1,000 samples, its debug cache filled, took 1,850 page
 * faults, 545 so. */
static void tune_heap(void)
{
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	heap_on_huge_pages((size_t)64 << 20);
}

/* What stdio still holds is written before tally exits, and a command that succeeded but
 * could not write its output fails (coreutils' close_stdout). */
static int finish_stdout(int rc)
{
	errno = 0;
	if (!fflush(stdout) && !ferror(stdout))
		return rc;
	cli_end_if_reader_gone(stdout, STDOUT_FILENO);
	if (rc != CLI_OK)
		return rc; /* the command said what failed */
	return errno ? cli_fail("stdout: write error: %s", strerror(errno))
		     : cli_fail("stdout: write error");
}

static int dispatch(int argc, char **argv)
{
	if (argc < 2)
		return print_main_help(stderr), CLI_USAGE;
	const char *name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h"))
		return print_main_help(stdout), CLI_OK;
	if (!strcmp(name, "--version") || !strcmp(name, "-V")) {
		printf("tally %s\n", TALLY_VERSION);
		return CLI_OK;
	}
	if (!strcmp(name, "help"))
		return help_command(argc - 1, argv + 1);
	const struct cli_cmd *cmd = find_command(name);
	if (!cmd)
		return cli_usage(NULL, "no such command: %s", name);
	if (cli_wants_help(argc - 1, argv + 1)) {
		fputs(cmd->help, stdout);
		return CLI_OK;
	}
	tune_heap();
	elf_debug_cache_detach_stores();
	return cmd->run(argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
	return finish_stdout(dispatch(argc, argv));
}
