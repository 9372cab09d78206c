/*
 * tally symbolize: addresses to functions and source lines, with inline frames. Here: the
 * options, and the addresses, taken from the command line or read from standard input and
 * parsed; symbolize/print.h prints them (llvm-symbolizer --inlining's output byte for byte,
 * addr2line -f -i's with --output-style=GNU, one JSON object an address with --json).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "base/hex.h"
#include "symbolize/print.h"

struct options {
	const char *obj;
	enum sym_print_style style;
	struct sym_opts sym;
};

/* A hexadecimal address, 0x optional, blanks around it allowed. (strtoull cost 200
 * instructions an address, on the one thread that runs before a batch's lookups.) */
static int parse_addr(const char *s, uint64_t *addr)
{
	while (*s == ' ' || *s == '\t')
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	const char *start = s;
	while (*s == '0')
		s++;
	uint64_t v = 0;
	int digits = 0;
	for (int d; (d = hex_digit(*s)) >= 0; s++, digits++)
		v = v << 4 | (uint64_t)d;
	bool any = s > start;
	while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
		s++;
	if (!any || *s || digits > 16)
		return -EINVAL;
	*addr = v;
	return 0;
}

/* The texts of a batch, for reporting those that are not addresses where they stand. */
struct bad_texts {
	char **texts;
	int rc; /* CLI_FAIL once one was reported */
};

static void report_bad(size_t i, void *ctx)
{
	struct bad_texts *bad = ctx;
	fflush(stdout);
	fprintf(stderr, "tally: not an address: %s\n", bad->texts[i]);
	bad->rc = CLI_FAIL;
}

/* Whether a large batch is coming: that many addresses as arguments, or standard input
 * a file holding that many (an address is at least a digit and a newline). A pipe may
 * carry anything: the module then starts small (see sym_opts.many). */
static bool expect_many(int nargs)
{
	struct stat st;
	if (nargs)
		return nargs >= SYM_PRINT_MANY;
	return !fstat(STDIN_FILENO, &st) && S_ISREG(st.st_mode) &&
	       st.st_size >= 2 * SYM_PRINT_MANY;
}

/* A batch of address texts: parsed, then looked up and printed in order. A text that is
 * not an address is reported where it stands. */
static int batch(struct sym_module *m, const struct options *o, char **texts, size_t n)
{
	uint64_t *addrs = malloc((n ? n : 1) * sizeof(*addrs));
	bool *ok = malloc((n ? n : 1) * sizeof(*ok));
	struct bad_texts bad = { .texts = texts, .rc = CLI_OK };
	const struct sym_print_batch b = { .addrs = addrs, .ok = ok, .n = n,
					   .on_bad = report_bad, .ctx = &bad };
	for (size_t i = 0; addrs && ok && i < n; i++)
		ok[i] = !parse_addr(texts[i], &addrs[i]);
	int rc = addrs && ok ? sym_print_batch(stdout, m, o->style, &b) : -ENOMEM;
	fflush(stdout);
	free(addrs);
	free(ok);
	return rc ? cli_fail("out of memory") : bad.rc;
}

/* Standard input is read in chunks as they arrive: a file or a fast pipe gives large
 * batches (indexed in parallel), a program asking one address at a time gets each answer
 * as soon as its line arrives. */
static int from_stdin(struct sym_module *m, const struct options *o)
{
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap + 1);
	char **texts = malloc((cap / 2 + 1) * sizeof(*texts));
	int rc = buf && texts ? CLI_OK : cli_fail("out of memory");
	ssize_t got = 1;
	/* Until stdout fails too: what is left would not be written (main says why). */
	while (buf && texts && got > 0 && !ferror(stdout)) {
		got = read(STDIN_FILENO, buf + len, cap - len);
		if (got < 0 && errno == EINTR)
			continue;
		len += got > 0 ? (size_t)got : 0;
		size_t n = 0, start = 0;
		for (char *nl; start < len; start = (size_t)(nl - buf) + 1) {
			nl = memchr(buf + start, '\n', len - start);
			if (!nl && got > 0)
				break; /* the rest of the line is still to come */
			if (!nl)
				nl = buf + len; /* the last line, unterminated */
			*nl = 0;
			if (nl > buf + start && buf[start] != '\r')
				texts[n++] = buf + start;
		}
		start = start < len ? start : len;
		if (n && batch(m, o, texts, n) != CLI_OK)
			rc = CLI_FAIL;
		memmove(buf, buf + start, len - start);
		len -= start;
		if (len == cap) {
			rc = cli_fail("an input line is longer than %zu bytes", cap);
			break;
		}
	}
	free(buf);
	free(texts);
	return rc;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_STYLE = 256, OPT_JSON, OPT_DEBUG_DIR, OPT_NO_DEMANGLE, OPT_INLINES };
	static const struct option longopts[] = {
		{ "exe", required_argument, NULL, 'e' },
		{ "obj", required_argument, NULL, 'e' },
		{ "output-style", required_argument, NULL, OPT_STYLE },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		{ "demangle", no_argument, NULL, 'C' },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "inlining", no_argument, NULL, OPT_INLINES },
		{ "inlines", no_argument, NULL, OPT_INLINES },
		{ 0 },
	};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:e:Ci", longopts, NULL)) != -1) {
		switch (c) {
		case 'e': o->obj = optarg; break;
		case 'C': o->sym.no_demangle = false; break;
		case 'i':
		case OPT_INLINES: break; /* inline frames are always shown */
		case OPT_NO_DEMANGLE: o->sym.no_demangle = true; break;
		case OPT_JSON: o->style = SYM_PRINT_JSON; break;
		case OPT_DEBUG_DIR: o->sym.debug_dir = optarg; break;
		case OPT_STYLE:
			if (!strcasecmp(optarg, "LLVM"))
				o->style = SYM_PRINT_LLVM;
			else if (!strcasecmp(optarg, "GNU"))
				o->style = SYM_PRINT_GNU;
			else if (!strcasecmp(optarg, "JSON"))
				o->style = SYM_PRINT_JSON;
			else
				return cli_usage(&cli_cmd_symbolize, "unknown output style: %s", optarg);
			break;
		default:
			return cli_bad_option(&cli_cmd_symbolize, c, argv);
		}
	}
	if (!o->obj)
		return cli_usage(&cli_cmd_symbolize, "no binary given (-e BINARY)");
	return CLI_OK;
}

static int run(int argc, char **argv)
{
	struct options o = { .style = SYM_PRINT_LLVM, .sym.debug_cache = true };
	int rc = parse_options(argc, argv, &o);
	if (rc != CLI_OK)
		return rc;
	o.sym.many = expect_many(argc - optind);
	struct sym_module *m;
	if (sym_open(o.obj, &o.sym, &m))
		return cli_fail_err();
	static char buf[1 << 16];
	setvbuf(stdout, buf, _IOFBF, sizeof(buf));
	if (optind == argc)
		rc = from_stdin(m, &o);
	else
		rc = batch(m, &o, argv + optind, (size_t)(argc - optind));
	fflush(stdout); /* before closing, which may write the debug cache */
	sym_close(m);
	return rc;
}

const struct cli_cmd cli_cmd_symbolize = {
	.name = "symbolize",
	.summary = "addresses to functions, files and lines, with inline frames",
	.help = "usage: tally symbolize -e BINARY [options] [ADDR ...]\n"
		"\n"
		"Prints, for each address, its frames from the innermost inlined function out to\n"
		"the function that contains it. Addresses are hexadecimal (0x optional) virtual\n"
		"addresses of BINARY, as in its symbol table; with none on the command line they\n"
		"are read from standard input, one per line.\n"
		"\n"
		"Debug information is taken from BINARY, or from its separate debug file, found by\n"
		"build-id (DIR/.build-id/xx/rest.debug) or .gnu_debuglink (CRC checked) under\n"
		"--debug-dir and /usr/lib/debug. Compressed sections (zlib, zstd, .zdebug) and\n"
		"relocatable objects (clang -c -g) are handled. Split DWARF and dwz files are not\n"
		"supported: tally says so and uses symbol tables only. A separate debug file with\n"
		"compressed sections is copied decompressed into tally's cache, where later runs\n"
		"find it by build-id first (it is the file --debug-dir or /usr/lib/debug would\n"
		"give): see TALLY_CACHE in 'tally --help'.\n"
		"\n"
		"Options:\n"
		"  -e, --exe, --obj BINARY   the ELF file the addresses belong to\n"
		"  --output-style=LLVM       (default) llvm-symbolizer --inlining's output: per frame\n"
		"                            the function, then FILE:LINE:COLUMN; a blank line after\n"
		"                            each address; ?? where unknown\n"
		"  --output-style=GNU        addr2line -f -i's output: the function, then FILE:LINE\n"
		"                            (the outermost frame named from DWARF, not the symbol\n"
		"                            table)\n"
		"  --json                    one JSON object per line: {\"address\": \"0x...\",\n"
		"                            \"frames\": [{\"function\", \"file\", \"line\", \"column\",\n"
		"                            \"inlined\"}]}, null where unknown\n"
		"  --debug-dir DIR           look for separate debug files in DIR first\n"
		"  -C, --demangle            demangle C++ and Rust names (the default)\n"
		"  --no-demangle             print names as stored\n"
		"  -i, --inlines, --inlining accepted for compatibility: inline frames are always shown\n"
		"\n"
		"Exit status: 0, or 1 if the binary cannot be read or an address is malformed.\n",
	.run = run,
};
