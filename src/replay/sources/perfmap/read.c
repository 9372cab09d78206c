/*
 * Reading perf-PID.map files (perfmap.h). Lines are read through a 64 KiB window, so a
 * hostile file costs no more than its good lines; the lines kept are then swept in address
 * order with a heap of the lines covering each point, the latest on top, which gives the
 * disjoint ranges that lookups binary-search.
 */
#include "replay/sources/perfmap/perfmap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/hex.h"
#include "base/vec.h"

#define MAX_LINE 65536
#define MAX_LINES (1u << 22)            /* 4M lines: a long-running V8 writes ~1M */
#define MAX_NAME_BYTES ((size_t)256 << 20)
#define MAX_WARNINGS 10                 /* per file; the rest are counted */

struct entry {
	uint64_t start, end; /* end exclusive */
	const char *name;
};

/* A disjoint piece of the address space and the latest line (entries index) covering it. */
struct range {
	uint64_t start, end;
	uint32_t entry;
};

struct replay_perfmap {
	struct arena names;
	VEC(struct entry) entries; /* in file order */
	VEC(struct range) ranges;  /* sorted, disjoint */
};

struct reader {
	struct replay_perfmap *m;
	const char *name;
	FILE *warn;
	size_t line, warnings, name_bytes;
	bool full; /* a cap was reached: the rest of the file is ignored */
};

static void warn(struct reader *r, const char *what)
{
	if (r->warn && r->warnings < MAX_WARNINGS)
		fprintf(r->warn, "tally: %s: line %zu: %s\n", r->name, r->line, what);
	r->warnings++;
}

/* Hex with or without 0x; false (and *what) when it is not one or does not fit 64 bits. */
static bool hex(const char **s, const char *end, uint64_t *v, const char **what)
{
	const char *p = *s;
	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	uint64_t x = 0;
	const char *digits = p;
	for (; p < end; p++) {
		int d = hex_digit(*p);
		if (d < 0)
			break;
		if (x >> 60)
			return *what = "a number past 2^64", false;
		x = x << 4 | (uint64_t)d;
	}
	if (p == digits || (p < end && *p != ' ' && *p != '\t'))
		return *what = "expected START SIZE NAME, hexadecimal numbers", false;
	*v = x;
	*s = p;
	return true;
}

static const char *blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* One line, without its newline: an entry, or a warning. */
static int add_line(struct reader *r, const char *s, size_t len)
{
	const char *end = s + len, *what = NULL;
	uint64_t start, size;
	if (end > s && end[-1] == '\r')
		end--;
	const char *p = blanks(s, end);
	if (p == end)
		return 0; /* blank lines are harmless */
	if (memchr(s, '\0', len))
		return warn(r, "a NUL byte in the line"), 0;
	if (!hex(&p, end, &start, &what) || !hex((p = blanks(p, end), &p), end, &size, &what))
		return warn(r, what), 0;
	const char *name = blanks(p, end);
	if (name == end)
		return warn(r, "no name after START SIZE"), 0;
	if (!size)
		return warn(r, "size 0"), 0;
	if (size > UINT64_MAX - start)
		return warn(r, "START + SIZE runs past the end of the address space"), 0;
	size_t nlen = (size_t)(end - name);
	if (r->m->entries.n == MAX_LINES || r->name_bytes + nlen > MAX_NAME_BYTES) {
		warn(r, "too many lines or names: the rest of the file is ignored");
		r->full = true;
		return 0;
	}
	struct entry *e = vec_push(&r->m->entries);
	const char *copy = e ? arena_strndup(&r->m->names, name, nlen) : NULL;
	if (!copy)
		return err_set(-ENOMEM, "%s: out of memory", r->name);
	*e = (struct entry){ start, start + size, copy };
	r->name_bytes += nlen + 1;
	return 0;
}

/* Lines of f through a window of MAX_LINE bytes; a longer line is skipped. */
static int read_lines(struct reader *r, FILE *f)
{
	char *buf = malloc(MAX_LINE);
	if (!buf)
		return err_set(-ENOMEM, "%s: out of memory", r->name);
	size_t have = 0;
	bool skipping = false;
	int rc = 0;
	while (!rc && !r->full) {
		size_t got = fread(buf + have, 1, MAX_LINE - have, f);
		have += got;
		char *p = buf, *nl;
		while (!rc && !r->full && (nl = memchr(p, '\n', (size_t)(buf + have - p)))) {
			if (!skipping) {
				r->line++;
				rc = add_line(r, p, (size_t)(nl - p));
			}
			skipping = false;
			p = nl + 1;
		}
		have = (size_t)(buf + have - p);
		memmove(buf, p, have);
		if (!got) {
			r->line++;
			if (ferror(f))
				warn(r, "cannot read further");
			else if (have && !skipping)
				warn(r, "cut short (no newline at the end): left out");
			break;
		}
		if (have == MAX_LINE) {
			if (!skipping) {
				r->line++;
				warn(r, "longer than 64 KiB: left out");
			}
			skipping = true;
			have = 0;
		}
	}
	free(buf);
	return rc;
}

/* ---- the sweep: a max-heap of entry indexes, the latest line on top ---- */

struct heap {
	VEC(uint32_t) v;
};

static bool heap_push(struct heap *h, uint32_t x)
{
	uint32_t *slot = vec_push(&h->v);
	if (!slot)
		return false;
	size_t i = h->v.n - 1;
	for (; i && h->v.v[(i - 1) / 2] < x; i = (i - 1) / 2)
		h->v.v[i] = h->v.v[(i - 1) / 2];
	h->v.v[i] = x;
	return true;
}

static void heap_pop(struct heap *h)
{
	uint32_t x = h->v.v[--h->v.n];
	size_t i = 0, n = h->v.n;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && h->v.v[c + 1] > h->v.v[c])
			c++;
		if (h->v.v[c] <= x)
			break;
		h->v.v[i] = h->v.v[c];
		i = c;
	}
	if (n)
		h->v.v[i] = x;
}

/* A point where a line's range begins (open) or ends. */
struct edge {
	uint64_t at;
	uint32_t entry;
	bool open;
};

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;
	return x->at < y->at ? -1 : x->at > y->at;
}

static bool add_range(struct replay_perfmap *m, uint64_t start, uint64_t end, uint32_t entry)
{
	struct range *last = m->ranges.n ? &m->ranges.v[m->ranges.n - 1] : NULL;
	if (last && last->end == start && last->entry == entry) {
		last->end = end;
		return true;
	}
	struct range *r = vec_push(&m->ranges);
	if (r)
		*r = (struct range){ start, end, entry };
	return r != NULL;
}

static int sweep(struct replay_perfmap *m, const char *name)
{
	size_t n = m->entries.n;
	struct edge *edges = malloc(2 * n * sizeof(*edges) + 1);
	bool *open = calloc(n + 1, sizeof(*open));
	struct heap h = { 0 };
	bool ok = edges && open;
	for (size_t i = 0; ok && i < n; i++) {
		edges[2 * i] = (struct edge){ m->entries.v[i].start, (uint32_t)i, true };
		edges[2 * i + 1] = (struct edge){ m->entries.v[i].end, (uint32_t)i, false };
	}
	if (ok)
		qsort(edges, 2 * n, sizeof(*edges), cmp_edge);
	for (size_t i = 0; ok && i < 2 * n;) {
		uint64_t at = edges[i].at;
		for (; i < 2 * n && edges[i].at == at; i++) {
			open[edges[i].entry] = edges[i].open;
			if (edges[i].open)
				ok &= heap_push(&h, edges[i].entry);
		}
		while (h.v.n && !open[h.v.v[0]])
			heap_pop(&h);
		if (ok && h.v.n && i < 2 * n)
			ok = add_range(m, at, edges[i].at, h.v.v[0]);
	}
	free(edges);
	free(open);
	vec_free(&h.v);
	return ok ? 0 : err_set(-ENOMEM, "%s: out of memory", name);
}

int replay_perfmap_read(FILE *f, const char *name, FILE *warn_to, struct replay_perfmap **out)
{
	struct replay_perfmap *m = calloc(1, sizeof(*m));
	if (!m)
		return err_set(-ENOMEM, "%s: out of memory", name);
	struct reader r = { .m = m, .name = name, .warn = warn_to };
	int rc = read_lines(&r, f);
	if (!rc)
		rc = sweep(m, name);
	if (r.warnings > MAX_WARNINGS && warn_to)
		fprintf(warn_to, "tally: %s: %zu more bad lines left out\n", name,
			r.warnings - MAX_WARNINGS);
	if (rc) {
		replay_perfmap_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

const char *replay_perfmap_find(const struct replay_perfmap *m, uint64_t pc, uint64_t *start)
{
	size_t lo = 0, hi = m->ranges.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct range *r = &m->ranges.v[mid];
		if (pc < r->start)
			hi = mid;
		else if (pc >= r->end)
			lo = mid + 1;
		else {
			*start = m->entries.v[r->entry].start;
			return m->entries.v[r->entry].name;
		}
	}
	return NULL;
}

void replay_perfmap_free(struct replay_perfmap *m)
{
	if (!m)
		return;
	arena_free(&m->names);
	vec_free(&m->entries);
	vec_free(&m->ranges);
	free(m);
}
