/*
 * tally symbolize: addresses to functions and source lines, with inline frames. The
 * default output is byte-for-byte llvm-symbolizer's (--inlining), GNU style is addr2line's
 * (-f -i), and --json is one JSON object per address and line.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "base/hex.h"
#include "base/json.h"
#include "symbolize/symbolize.h"

enum out_style { OUT_LLVM, OUT_GNU, OUT_JSON };

struct options {
	const char *obj;
	enum out_style style;
	struct sym_opts sym;
};

#define MAX_FRAMES 64

/* An address's lines are assembled here and written with one call: stdio's per-call
 * costs (printf's format parsing, open_memstream copying short strings byte by byte) were
 * a tenth of a large batch's instructions. */
struct line_buf {
	FILE *out;
	size_t n;
	char v[8192];
};

static void put(struct line_buf *b, const char *s, size_t n)
{
	if (b->n + n > sizeof(b->v)) {
		fwrite_unlocked(b->v, 1, b->n, b->out);
		b->n = 0;
		if (n > sizeof(b->v)) {
			fwrite_unlocked(s, 1, n, b->out);
			return;
		}
	}
	memcpy(b->v + b->n, s, n);
	b->n += n;
}

static void put_str(struct line_buf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void put_uint(struct line_buf *b, uint32_t v)
{
	char buf[12], *p = buf + sizeof(buf);
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	put(b, p, (size_t)(buf + sizeof(buf) - p));
}

static void print_llvm(FILE *out, const struct tally_frame *f, int n)
{
	char spelled[4096];
	struct line_buf b;
	b.out = out;
	b.n = 0;
	for (int i = 0; i < n; i++) {
		put_str(&b, f[i].function ? sym_llvm_spelling(f[i].function, spelled,
							       sizeof(spelled))
					  : "??");
		put(&b, "\n", 1);
		put_str(&b, f[i].file ? f[i].file : "??");
		put(&b, ":", 1);
		put_uint(&b, f[i].line);
		put(&b, ":", 1);
		put_uint(&b, f[i].column);
		put(&b, "\n", 1);
	}
	put(&b, "\n", 1);
	fwrite_unlocked(b.v, 1, b.n, out);
}

static void print_gnu(FILE *out, const struct tally_frame *f, int n)
{
	for (int i = 0; i < n; i++) {
		fprintf(out, "%s\n%s:", f[i].function ? f[i].function : "??",
			f[i].file ? f[i].file : "??");
		if (f[i].line)
			fprintf(out, "%u", f[i].line);
		else
			putc('?', out); /* addr2line's mark for an unknown line */
		/* addr2line repeats the line-table row's discriminator on every inlined frame. */
		if (f[0].discriminator)
			fprintf(out, " (discriminator %u)", f[0].discriminator);
		putc('\n', out);
	}
}

static void print_json(FILE *out, uint64_t addr, const struct tally_frame *f, int n)
{
	fprintf(out, "{\"address\":\"0x%" PRIx64 "\",\"frames\":[", addr);
	for (int i = 0; i < n; i++) {
		fprintf(out, "%s{\"function\":", i ? "," : "");
		json_print_string(out, f[i].function);
		fputs(",\"file\":", out);
		json_print_string(out, f[i].file);
		fprintf(out, ",\"line\":%u,\"column\":%u,\"inlined\":%s}", f[i].line, f[i].column,
			f[i].inlined ? "true" : "false");
	}
	fputs("]}\n", out);
}

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

static void print_frames(FILE *out, struct sym_module *m, const struct options *o,
			 uint64_t addr)
{
	struct tally_frame f[MAX_FRAMES];
	int n = sym_lookup(m, addr, o->style == OUT_GNU ? SYM_STYLE_GNU : SYM_STYLE_LLVM, f,
			   MAX_FRAMES);
	if (n > MAX_FRAMES)
		n = MAX_FRAMES;
	if (o->style == OUT_LLVM)
		print_llvm(out, f, n);
	else if (o->style == OUT_GNU)
		print_gnu(out, f, n);
	else
		print_json(out, addr, f, n);
}

static void report_bad(const char *text)
{
	fflush(stdout);
	fprintf(stderr, "tally: not an address: %s\n", text);
}

/* A large batch is cut into chunks of consecutive addresses that the threads take in
 * order from a shared counter; each chunk is looked up (its units indexed on demand) and
 * formatted into memory, and the main thread prints finished chunks in input order,
 * errors included. Chunks are small, so no thread waits long for another at the end. */
#define CHUNKS 32

struct chunk {
	size_t from, to;
	char *buf; /* the output of texts[from, to), or NULL when formatting failed */
	size_t len;
	atomic_bool done;
};

struct batch_work {
	struct sym_module *m;
	const struct options *o;
	const bool *ok;
	const uint64_t *addrs;
	off_t *ends; /* where each text's output ends in its chunk's buf */
	struct chunk chunks[CHUNKS];
	atomic_size_t next;
	pthread_mutex_t lock;
	pthread_cond_t finished;
};

static void format_chunk(struct batch_work *w, struct chunk *c)
{
	FILE *out = open_memstream(&c->buf, &c->len);
	for (size_t i = c->from; out && i < c->to; i++) {
		if (w->ok[i])
			print_frames(out, w->m, w->o, w->addrs[i]);
		w->ends[i] = ftello(out);
	}
	if (out && (ferror(out) | fclose(out))) {
		free(c->buf);
		c->buf = NULL;
	}
	pthread_mutex_lock(&w->lock);
	atomic_store_explicit(&c->done, true, memory_order_release);
	pthread_cond_broadcast(&w->finished);
	pthread_mutex_unlock(&w->lock);
}

/* Takes and formats chunks until none is left; returns whether it did any. */
static bool take_chunk(struct batch_work *w)
{
	size_t k = atomic_fetch_add(&w->next, 1);
	if (k >= CHUNKS)
		return false;
	format_chunk(w, &w->chunks[k]);
	return true;
}

static void *chunk_worker(void *arg)
{
	while (take_chunk(arg))
		;
	return NULL;
}

/* Prints chunk c (formatted, or not when its formatting failed). */
static int print_chunk(struct batch_work *w, char **texts, const struct chunk *c)
{
	int rc = CLI_OK;
	for (size_t i = c->from; i < c->to; i++) {
		if (!w->ok[i]) {
			report_bad(texts[i]);
			rc = CLI_FAIL;
		} else if (c->buf) {
			off_t start = i > c->from ? w->ends[i - 1] : 0;
			fwrite_unlocked(c->buf + start, 1, (size_t)(w->ends[i] - start), stdout);
		} else {
			print_frames(stdout, w->m, w->o, w->addrs[i]);
		}
	}
	return rc;
}

static int print_in_parallel(struct batch_work *w, char **texts, size_t n, unsigned threads)
{
	for (size_t k = 0; k < CHUNKS; k++) {
		w->chunks[k] = (struct chunk){ .from = n * k / CHUNKS, .to = n * (k + 1) / CHUNKS };
		atomic_init(&w->chunks[k].done, false);
	}
	atomic_init(&w->next, 0);
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->finished, NULL);
	pthread_t th[16];
	unsigned started = 0;
	while (started + 1 < threads && started < 16 &&
	       !pthread_create(&th[started], NULL, chunk_worker, w))
		started++;
	int rc = CLI_OK;
	size_t printed = 0;
	while (printed < CHUNKS) {
		struct chunk *c = &w->chunks[printed];
		if (!atomic_load_explicit(&c->done, memory_order_acquire) && !take_chunk(w)) {
			pthread_mutex_lock(&w->lock);
			while (!atomic_load_explicit(&c->done, memory_order_acquire))
				pthread_cond_wait(&w->finished, &w->lock);
			pthread_mutex_unlock(&w->lock);
		}
		for (; printed < CHUNKS && atomic_load_explicit(&w->chunks[printed].done,
							       memory_order_acquire);
		     printed++) {
			if (print_chunk(w, texts, &w->chunks[printed]) != CLI_OK)
				rc = CLI_FAIL;
			free(w->chunks[printed].buf);
		}
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->finished);
	return rc;
}

/* A batch this large is looked up in parallel, and read all of the DWARF at open. */
#define MANY 256

/* Whether a large batch is coming: that many addresses as arguments, or standard input
 * a file holding that many (an address is at least a digit and a newline). A pipe may
 * carry anything: the module then starts small (see sym_opts.many). */
static bool expect_many(int nargs)
{
	struct stat st;
	if (nargs)
		return nargs >= MANY;
	return !fstat(STDIN_FILENO, &st) && S_ISREG(st.st_mode) && st.st_size >= 2 * MANY;
}

/* Tells the module the batch's addresses (the valid ones) so that threads do not wait for
 * each other's units (sym_prepare). Without memory for the list, reads the DWARF anyway. */
static void plan(struct sym_module *m, const uint64_t *addrs, const bool *ok, size_t n,
		 size_t nok)
{
	uint64_t *valid = malloc(nok * sizeof(*valid));
	size_t k = 0;
	for (size_t i = 0; valid && i < n; i++)
		if (ok[i])
			valid[k++] = addrs[i];
	if (!valid || sym_prepare(m, valid, k))
		sym_read_all(m);
	free(valid);
}

/* A batch of address texts: parsed, then looked up and printed in order. A text that is
 * not an address is reported where it stands. */
static int batch(struct sym_module *m, const struct options *o, char **texts, size_t n)
{
	uint64_t *addrs = malloc((n ? n : 1) * sizeof(*addrs));
	bool *ok = malloc((n ? n : 1) * sizeof(*ok));
	off_t *ends = malloc((n ? n : 1) * sizeof(*ends));
	struct batch_work *w = malloc(sizeof(*w));
	if (!addrs || !ok || !ends || !w) {
		free(addrs);
		free(ok);
		free(ends);
		free(w);
		return cli_fail("out of memory");
	}
	size_t nok = 0;
	for (size_t i = 0; i < n; i++)
		nok += ok[i] = !parse_addr(texts[i], &addrs[i]);
	/* Threads pay off only when there are many units to index. */
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int rc = CLI_OK;
	if (nok >= MANY && cpus > 1) {
		plan(m, addrs, ok, n, nok);
		*w = (struct batch_work){ .m = m, .o = o, .ok = ok, .addrs = addrs, .ends = ends };
		rc = print_in_parallel(w, texts, n, (unsigned)cpus);
	} else {
		struct chunk all = { .from = 0, .to = n };
		*w = (struct batch_work){ .m = m, .o = o, .ok = ok, .addrs = addrs, .ends = ends };
		rc = print_chunk(w, texts, &all);
	}
	fflush(stdout);
	free(addrs);
	free(ok);
	free(ends);
	free(w);
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
			return cli_bad_option(&cli_cmd_symbolize, c, argv);
		}
	}
	if (!o->obj)
		return cli_usage(&cli_cmd_symbolize, "no binary given (-e BINARY)");
	return CLI_OK;
}

static int run(int argc, char **argv)
{
	struct options o = { .style = OUT_LLVM, .sym.debug_cache = true };
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
