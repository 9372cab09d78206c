/*
 * The symbolizer's printer (print.h). The LLVM style, the one a large batch is most often
 * printed in, assembles an address's lines in a buffer of its own; a large batch is cut
 * into chunks that threads look up and format into memory while the calling thread prints
 * finished chunks in input order.
 */
#include "symbolize/print.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "base/json.h"

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

/* A function known only from the unwind tables is named here (the LLVM and GNU styles
 * print "??" as their tools do), with "function_from":"cfi" and its range. */
static void print_json(FILE *out, const struct sym_module *m, uint64_t addr,
		       const struct tally_frame *f, int n)
{
	char name[256];
	fprintf(out, "{\"address\":\"0x%" PRIx64 "\",\"frames\":[", addr);
	for (int i = 0; i < n; i++) {
		fprintf(out, "%s{\"function\":", i ? "," : "");
		if (f[i].from_cfi) {
			json_print_string(out, sym_cfi_name(sym_path(m), f[i].sym_start, name,
							    sizeof(name)));
			fprintf(out, ",\"function_from\":\"cfi\",\"start\":\"0x%" PRIx64
				     "\",\"end\":\"0x%" PRIx64 "\"",
				f[i].sym_start, f[i].sym_end);
		} else {
			json_print_string(out, f[i].function);
		}
		fputs(",\"file\":", out);
		json_print_string(out, f[i].file);
		fprintf(out, ",\"line\":%u,\"column\":%u,\"inlined\":%s}", f[i].line, f[i].column,
			f[i].inlined ? "true" : "false");
	}
	fputs("]}\n", out);
}

void sym_print(FILE *out, struct sym_module *m, enum sym_print_style style, uint64_t addr)
{
	struct tally_frame f[MAX_FRAMES];
	int n = sym_lookup(m, addr, style == SYM_PRINT_GNU ? SYM_STYLE_GNU : SYM_STYLE_LLVM, f,
			   MAX_FRAMES);
	if (n > MAX_FRAMES)
		n = MAX_FRAMES;
	if (style == SYM_PRINT_LLVM)
		print_llvm(out, f, n);
	else if (style == SYM_PRINT_GNU)
		print_gnu(out, f, n);
	else
		print_json(out, m, addr, f, n);
}

/* A large batch's chunks are consecutive lines that the threads take in order from a
 * shared counter; each chunk is looked up (its units indexed on demand) and formatted into
 * memory. Chunks are small, so no thread waits long for another at the end. */
#define CHUNKS 32

struct chunk {
	size_t from, to;
	char *buf; /* the output of lines [from, to), or NULL when formatting failed */
	size_t len;
	atomic_bool done;
};

struct batch_work {
	FILE *out;
	struct sym_module *m;
	enum sym_print_style style;
	const struct sym_print_batch *b;
	off_t *ends; /* where each line's output ends in its chunk's buf */
	struct chunk chunks[CHUNKS];
	atomic_size_t next;
	pthread_mutex_t lock;
	pthread_cond_t finished;
};

static void format_chunk(struct batch_work *w, struct chunk *c)
{
	FILE *out = open_memstream(&c->buf, &c->len);
	for (size_t i = c->from; out && i < c->to; i++) {
		if (w->b->ok[i])
			sym_print(out, w->m, w->style, w->b->addrs[i]);
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
static void print_chunk(struct batch_work *w, const struct chunk *c)
{
	const struct sym_print_batch *b = w->b;
	for (size_t i = c->from; i < c->to; i++) {
		if (!b->ok[i]) {
			b->on_bad(i, b->ctx);
		} else if (c->buf) {
			off_t start = i > c->from ? w->ends[i - 1] : 0;
			fwrite_unlocked(c->buf + start, 1, (size_t)(w->ends[i] - start), w->out);
		} else {
			sym_print(w->out, w->m, w->style, b->addrs[i]);
		}
	}
}

/* Waits until chunk c is formatted, formatting others meanwhile while any is left. */
static void wait_for(struct batch_work *w, struct chunk *c)
{
	if (atomic_load_explicit(&c->done, memory_order_acquire) || take_chunk(w))
		return;
	pthread_mutex_lock(&w->lock);
	while (!atomic_load_explicit(&c->done, memory_order_acquire))
		pthread_cond_wait(&w->finished, &w->lock);
	pthread_mutex_unlock(&w->lock);
}

static void print_in_parallel(struct batch_work *w, unsigned threads)
{
	size_t n = w->b->n;
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
	size_t printed = 0;
	while (printed < CHUNKS) {
		wait_for(w, &w->chunks[printed]);
		for (; printed < CHUNKS && atomic_load_explicit(&w->chunks[printed].done,
							       memory_order_acquire);
		     printed++) {
			print_chunk(w, &w->chunks[printed]);
			free(w->chunks[printed].buf);
		}
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->finished);
}

/* Tells the module the batch's addresses (the valid ones) so that threads do not wait for
 * each other's units (sym_prepare). Without memory for the list, reads the DWARF anyway. */
static void plan(struct sym_module *m, const struct sym_print_batch *b, size_t nok)
{
	uint64_t *valid = malloc(nok * sizeof(*valid));
	size_t k = 0;
	for (size_t i = 0; valid && i < b->n; i++)
		if (b->ok[i])
			valid[k++] = b->addrs[i];
	if (!valid || sym_prepare(m, valid, k))
		sym_read_all(m);
	free(valid);
}

int sym_print_batch(FILE *out, struct sym_module *m, enum sym_print_style style,
		    const struct sym_print_batch *b)
{
	off_t *ends = malloc((b->n ? b->n : 1) * sizeof(*ends));
	struct batch_work *w = malloc(sizeof(*w));
	if (!ends || !w) {
		free(ends);
		free(w);
		return -ENOMEM;
	}
	*w = (struct batch_work){ .out = out, .m = m, .style = style, .b = b, .ends = ends };
	size_t nok = 0;
	for (size_t i = 0; i < b->n; i++)
		nok += b->ok[i];
	/* Threads pay off only when there are many units to index. */
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (nok >= SYM_PRINT_MANY && cpus > 1) {
		plan(m, b, nok);
		print_in_parallel(w, (unsigned)cpus);
	} else {
		struct chunk all = { .from = 0, .to = b->n };
		print_chunk(w, &all);
	}
	free(ends);
	free(w);
	return 0;
}
