/*
 * tally symbolize: addresses to functions and source lines, with inline frames. The
 * default output is byte-for-byte llvm-symbolizer's (--inlining), GNU style is addr2line's
 * (-f -i), and --json is one JSON object per address and line.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "base/json.h"
#include "symbolize/symbolize.h"

enum out_style { OUT_LLVM, OUT_GNU, OUT_JSON };

struct options {
	const char *obj;
	enum out_style style;
	struct sym_opts sym;
};

#define MAX_FRAMES 64

/* printf's format parsing was a tenth of a large batch's time: numbers are written here. */
static void put_uint(uint32_t v)
{
	char buf[12], *p = buf + sizeof(buf);
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	fwrite_unlocked(p, 1, (size_t)(buf + sizeof(buf) - p), stdout);
}

static void put_str(const char *s)
{
	fputs_unlocked(s, stdout);
}

static void print_llvm(const struct tally_frame *f, int n)
{
	char spelled[4096];
	for (int i = 0; i < n; i++) {
		put_str(f[i].function ? sym_llvm_spelling(f[i].function, spelled, sizeof(spelled))
				      : "??");
		putchar_unlocked('\n');
		put_str(f[i].file ? f[i].file : "??");
		putchar_unlocked(':');
		put_uint(f[i].line);
		putchar_unlocked(':');
		put_uint(f[i].column);
		putchar_unlocked('\n');
	}
	putchar_unlocked('\n');
}

static void print_gnu(const struct tally_frame *f, int n)
{
	for (int i = 0; i < n; i++) {
		printf("%s\n%s:", f[i].function ? f[i].function : "??", f[i].file ? f[i].file : "??");
		if (f[i].line)
			printf("%u", f[i].line);
		else
			putchar('?'); /* addr2line's mark for an unknown line */
		/* addr2line repeats the line-table row's discriminator on every inlined frame. */
		if (f[0].discriminator)
			printf(" (discriminator %u)", f[0].discriminator);
		putchar('\n');
	}
}

static void print_json(uint64_t addr, const struct tally_frame *f, int n)
{
	printf("{\"address\":\"0x%" PRIx64 "\",\"frames\":[", addr);
	for (int i = 0; i < n; i++) {
		printf("%s{\"function\":", i ? "," : "");
		json_print_string(stdout, f[i].function);
		fputs(",\"file\":", stdout);
		json_print_string(stdout, f[i].file);
		printf(",\"line\":%u,\"column\":%u,\"inlined\":%s}", f[i].line, f[i].column,
		       f[i].inlined ? "true" : "false");
	}
	fputs("]}\n", stdout);
}

static int parse_addr(const char *s, uint64_t *addr)
{
	while (*s == ' ' || *s == '\t')
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 16);
	while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
		end++;
	if (end == s || *end || errno)
		return -EINVAL;
	*addr = v;
	return 0;
}

static void print_frames(struct sym_module *m, const struct options *o, uint64_t addr)
{
	struct tally_frame f[MAX_FRAMES];
	int n = sym_lookup(m, addr, o->style == OUT_GNU ? SYM_STYLE_GNU : SYM_STYLE_LLVM, f,
			   MAX_FRAMES);
	if (n > MAX_FRAMES)
		n = MAX_FRAMES;
	if (o->style == OUT_LLVM)
		print_llvm(f, n);
	else if (o->style == OUT_GNU)
		print_gnu(f, n);
	else
		print_json(addr, f, n);
}

struct ahead {
	struct sym_module *m;
	const uint64_t *addrs;
	size_t n;
	unsigned threads;
};

static void *index_ahead(void *arg)
{
	struct ahead *a = arg;
	sym_prepare(a->m, a->addrs, a->n, a->threads);
	return NULL;
}

/* A batch of address texts: parsed, then printed in order while the other cores index
 * the batch's units from its end (printing builds what it reaches first). A text that is
 * not an address is reported where it stands. */
static int batch(struct sym_module *m, const struct options *o, char **texts, size_t n)
{
	uint64_t *addrs = malloc((n ? n : 1) * sizeof(*addrs));
	bool *ok = malloc((n ? n : 1) * sizeof(*ok));
	if (!addrs || !ok) {
		free(addrs);
		free(ok);
		return cli_fail("out of memory");
	}
	size_t nok = 0;
	for (size_t i = 0; i < n; i++)
		if ((ok[i] = !parse_addr(texts[i], &addrs[i])))
			addrs[nok++] = addrs[i];
	/* Threads pay off only when there are many units to index. */
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct ahead a = { m, addrs, nok, cpus > 1 ? (unsigned)(cpus - 1) : 0 };
	pthread_t th;
	if (nok >= 256)
		sym_read_all(m);
	bool ahead = nok >= 256 && a.threads && !pthread_create(&th, NULL, index_ahead, &a);
	int rc = CLI_OK;
	for (size_t i = 0, k = 0; i < n; i++) {
		if (ok[i]) {
			print_frames(m, o, addrs[k++]);
			continue;
		}
		fflush(stdout);
		fprintf(stderr, "tally: not an address: %s\n", texts[i]);
		rc = CLI_FAIL;
	}
	fflush(stdout);
	if (ahead)
		pthread_join(th, NULL);
	free(addrs);
	free(ok);
	return rc;
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
	while (buf && texts && got > 0) {
		got = read(STDIN_FILENO, buf + len, cap - len);
		if (got < 0 && errno == EINTR)
			continue;
		len += got > 0 ? (size_t)got : 0;
		size_t n = 0, start = 0;
		for (size_t i = 0; i < len; i++) {
			if (buf[i] != '\n' && (got > 0 || i + 1 < len))
				continue;
			size_t end = buf[i] == '\n' ? i : i + 1;
			buf[end] = 0;
			if (end > start && buf[start] != '\r')
				texts[n++] = buf + start;
			start = i + 1;
		}
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
	while ((c = getopt_long(argc, argv, "+e:Ci", longopts, NULL)) != -1) {
		switch (c) {
		case 'e': o->obj = optarg; break;
		case 'C': o->sym.no_demangle = false; break;
		case 'i':
		case OPT_INLINES: break; /* inline frames are always shown */
		case OPT_NO_DEMANGLE: o->sym.no_demangle = true; break;
		case OPT_JSON: o->style = OUT_JSON; break;
		case OPT_DEBUG_DIR: o->sym.debug_dir = optarg; break;
		case OPT_STYLE:
			if (!strcasecmp(optarg, "LLVM"))
				o->style = OUT_LLVM;
			else if (!strcasecmp(optarg, "GNU"))
				o->style = OUT_GNU;
			else if (!strcasecmp(optarg, "JSON"))
				o->style = OUT_JSON;
			else
				return cli_usage(&cli_cmd_symbolize, "unknown output style: %s", optarg);
			break;
		default:
			return cli_usage(&cli_cmd_symbolize, "bad option");
		}
	}
	if (!o->obj)
		return cli_usage(&cli_cmd_symbolize, "no binary given (-e BINARY)");
	return CLI_OK;
}

static int run(int argc, char **argv)
{
	struct options o = { .style = OUT_LLVM };
	int rc = parse_options(argc, argv, &o);
	if (rc != CLI_OK)
		return rc;
	struct sym_module *m;
	if (sym_open(o.obj, &o.sym, &m))
		return cli_fail_err();
	static char buf[1 << 16];
	setvbuf(stdout, buf, _IOFBF, sizeof(buf));
	if (optind == argc)
		rc = from_stdin(m, &o);
	else
		rc = batch(m, &o, argv + optind, (size_t)(argc - optind));
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
		"supported: tally says so and uses symbol tables only.\n"
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
