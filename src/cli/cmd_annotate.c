/*
 * tally annotate: per-instruction weights of one function, with disassembly and source.
 * A JIT function's code comes from the jitdump that named it (the frame's module), an
 * interpreter's bytecode from the agent's listing (--listing).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "cli/cli.h"
#include "cli/profile_cmd.h"
#include "profile/profile.h"
#include "replay/sources/jitdump/jitdump.h"
#include "report/annotate.h"

static const char help[] =
	"usage: tally annotate [options] [FILE]\n"
	"\n"
	"Shows where in one function the cost landed: its machine code, disassembled (x86-64,\n"
	"i386, aarch64), each instruction with its share of the function's weight, source lines\n"
	"interleaved where the debug information knows them, the hottest instructions\n"
	"highlighted. FILE is a profile (pprof, folded stacks or perf.data; '-' for stdin;\n"
	"default perf.data) whose frames carry addresses; the module's file must be readable\n"
	"(or given with --binary).\n"
	"sBPF programs are disassembled by tally's own sBPF disassembler. An interpreter's\n"
	"function (a frame of the agent, include/tally/agent.h) is listed by bytecode pc,\n"
	"each instruction's text taken from the listing the agent wrote (--listing).\n"
	"\n"
	"options:\n"
	"  --function NAME     the function, as the report names it, or a part of its name\n"
	"                      that only one function has; default: the one with the most\n"
	"                      self weight. An inlined function shows the function it was\n"
	"                      inlined into.\n"
	"  --html              one self-contained HTML page instead of text\n"
	"  -o, --output FILE   write there instead of stdout\n"
	"  --listing FILE      the agent's listing of the interpreter's bytecode (its option\n"
	"                      listing), for its functions; without it, their pcs that carry\n"
	"                      weight are listed without instructions\n"
	"  --binary FILE       read the machine code from FILE instead of the module path in\n"
	"                      the profile (its build-id is then not checked)\n"
	"  --debug-dir DIR     also look for separate debug files in DIR\n"
	"  --metric TYPE       which metric to show (e.g. samples, cpu, cu)\n"
	"  --color WHEN        auto (default: on a terminal, unless NO_COLOR is set), always,\n"
	"                      never\n"
	"  --unwind METHOD     perf.data input: how stacks are recovered: auto (DWARF CFI,\n"
	"                      frame pointers as fallback; the default), cfi or fp (frame\n"
	"                      pointers only), for stack copies (stacks tally record\n"
	"                      unwound while recording are read as stored); a function that\n"
	"                      is only ever a caller is in the profile, and --function finds\n"
	"                      it, only when stacks reach it\n";

enum { OPT_FUNCTION = 256, OPT_HTML, OPT_BINARY, OPT_DEBUG_DIR, OPT_COLOR, OPT_LISTING };

static const struct option options[] = {
	{ "function", required_argument, NULL, OPT_FUNCTION },
	{ "html", no_argument, NULL, OPT_HTML },
	{ "binary", required_argument, NULL, OPT_BINARY },
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
	{ "color", required_argument, NULL, OPT_COLOR },
	{ "listing", required_argument, NULL, OPT_LISTING },
	{ NULL, 0, NULL, 0 },
};

struct annotate_args {
	struct rep_annot_opts o;
	const char *when; /* --color */
};

static int option(int c, const char *arg, void *ctx)
{
	struct annotate_args *a = ctx;
	switch (c) {
	case OPT_FUNCTION: a->o.function = arg; return 0;
	case OPT_HTML: a->o.html = true; return 0;
	case OPT_BINARY: a->o.binary = arg; return 0;
	case OPT_DEBUG_DIR: a->o.debug_dir = arg; return 0;
	case OPT_LISTING: a->o.listing = arg; return 0;
	default: /* OPT_COLOR */
		if (strcmp(arg, "auto") && strcmp(arg, "always") && strcmp(arg, "never"))
			return cli_usage(&cli_cmd_annotate, "--color: auto, always or never, not %s", arg);
		a->when = arg;
		return 0;
	}
}

static bool colour_wanted(const char *when, const char *output)
{
	if (!strcmp(when, "always"))
		return true;
	if (!strcmp(when, "never") || (output && strcmp(output, "-")))
		return false;
	const char *term = getenv("TERM");
	return isatty(fileno(stdout)) && !getenv("NO_COLOR") && !(term && !strcmp(term, "dumb"));
}

struct jit_code {
	struct replay_jitdump *d;
	const struct replay_jit_code *c;
};

static bool jit_line(void *self, uint64_t addr, const char **file, uint32_t *line)
{
	const struct jit_code *j = self;
	const struct replay_jit_line *l = replay_jitdump_line(j->d, j->c, addr - j->c->addr);
	if (l) {
		*file = l->file;
		*line = l->line;
	}
	return l != NULL;
}

static void jit_release(void *self)
{
	struct jit_code *j = self;
	replay_jitdump_free(j->d);
	free(j);
}

/* The last code the dump loaded at start that holds pc (annotate has no moment). */
static int jit_find(const char *module, uint64_t start, uint64_t pc, struct rep_annot_jit *out)
{
	struct jit_code *j = calloc(1, sizeof(*j));
	if (!j)
		return err_set(-ENOMEM, "out of memory");
	int rc = replay_jitdump_read(module, &j->d);
	if (rc) {
		free(j);
		return rc;
	}
	j->c = replay_jitdump_find(j->d, start, 0, false);
	if (!j->c || pc - j->c->addr >= j->c->size || !j->c->bytes) {
		jit_release(j);
		return err_set(-ENOENT, "%s: no code with its bytes at %#llx", module,
			       (unsigned long long)pc);
	}
	*out = (struct rep_annot_jit){ j->c->addr, j->c->addr + j->c->size, j->c->bytes,
				       (uint16_t)j->d->elf_mach, jit_line, j };
	return 0;
}

static const struct rep_annot_jit_ops jit_ops = { jit_find, jit_release };

static int write_annotation(FILE *f, const struct prof *p, int metric, void *ctx)
{
	struct rep_annot_opts o = *(const struct rep_annot_opts *)ctx;
	o.metric = metric;
	return rep_annotate(f, p, &o) ? -EINVAL : 0;
}

static int run(int argc, char **argv)
{
	struct annotate_args aa = { .o = { .metric = -1, .jit = &jit_ops }, .when = "auto" };
	const struct cli_profile_cmd pc = {
		.cmd = &cli_cmd_annotate, .shortopts = "", .options = options,
		.option = option, .ctx = &aa,
	};
	struct cli_profile_args a;
	int rc = cli_profile_args(&pc, argc, argv, &a);
	if (rc)
		return rc;
	aa.o.color = !aa.o.html && colour_wanted(aa.when, a.output);
	return cli_profile_write(&a, write_annotation, &aa.o);
}

const struct cli_cmd cli_cmd_annotate = {
	.name = "annotate",
	.summary = "per-instruction weights of a function, with disassembly and source",
	.help = help,
	.run = run,
};
