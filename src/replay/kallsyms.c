/*
 * Kernel symbols, looked up in the text of the listing itself: the kernel prints its own
 * symbols sorted by address (scripts/kallsyms sorts them at build time), so a binary search
 * over lines finds one without parsing 120,000 of them, and module symbols (the tagged
 * lines at the end, a few thousand) are parsed and sorted on first use. Reading
 * /proc/kallsyms costs 30-40 ms of kernel time formatting it; perf avoids that by copying
 * it into its build-id cache at record time and reading the copy, and so does tally
 * (perf/keep.h). A copy is used only when its first page equals /proc/kallsyms's (same
 * kernel, same layout).
 */
#include "replay/kallsyms.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "base/hex.h"
#include "base/search.h"
#include "base/vec.h"
#include "perf/keep.h"

#define PROC_KALLSYMS "/proc/kallsyms"

/* The cache copy, mapped, when its first page is what /proc/kallsyms prints now. */
static bool map_copy(struct replay_kallsyms *k)
{
	char path[1024], head[4096];
	if (!perf_kallsyms_copy_path(path, sizeof(path)))
		return false;
	int pfd = open(PROC_KALLSYMS, O_RDONLY | O_CLOEXEC);
	ssize_t n = pfd < 0 ? -1 : read(pfd, head, sizeof(head));
	if (pfd >= 0)
		close(pfd);
	int fd = n > 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	struct stat st;
	if (fd < 0)
		return false;
	void *m = MAP_FAILED;
	if (!fstat(fd, &st) && st.st_size >= n && st.st_size < UINT32_MAX)
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return false;
	if (memcmp(m, head, (size_t)n)) {
		munmap(m, (size_t)st.st_size);
		return false;
	}
	k->text = m;
	k->len = (size_t)st.st_size;
	k->mapped = true;
	return true;
}

static size_t line_start(const struct replay_kallsyms *k, size_t pos)
{
	while (pos > 0 && k->text[pos - 1] != '\n')
		pos--;
	return pos;
}

static size_t line_end(const struct replay_kallsyms *k, size_t pos)
{
	const char *nl = memchr(k->text + pos, '\n', k->len - pos);
	return nl ? (size_t)(nl - k->text) : k->len;
}

struct kline {
	uint64_t addr;
	char type;
	size_t name, name_len, next; /* next: the following line's start */
	bool tagged;                 /* "name\t[module]" */
};

/* "ADDR T name[\t[module]]" at pos; a line of another shape reads as address 0. */
static struct kline parse_line(const struct replay_kallsyms *k, size_t pos)
{
	size_t end = line_end(k, pos), i = pos;
	struct kline l = { .next = end < k->len ? end + 1 : end };
	uint64_t a = 0;
	for (int d; i < end && i - pos < 16 && (d = hex_digit(k->text[i])) >= 0; i++)
		a = a << 4 | (uint64_t)d;
	if (i == pos || i + 3 > end || k->text[i] != ' ' || k->text[i + 2] != ' ')
		return l;
	l.addr = a;
	l.type = k->text[i + 1];
	l.name = i + 3;
	const char *tab = memchr(k->text + l.name, '\t', end - l.name);
	l.name_len = tab ? (size_t)(tab - k->text) - l.name : end - l.name;
	l.tagged = tab != NULL;
	return l;
}

static bool is_text(const struct kline *l)
{
	return l->addr && (l->type == 't' || l->type == 'T');
}

/* The first tagged line: tagged lines all come after the kernel's own. */
static size_t find_core_end(const struct replay_kallsyms *k)
{
	size_t lo = 0, hi = k->len;
	while (lo < hi) {
		size_t mid = line_start(k, lo + (hi - lo) / 2);
		struct kline l = parse_line(k, mid);
		if (l.tagged)
			hi = mid;
		else
			lo = l.next;
	}
	return lo;
}

static int by_addr(const void *a, const void *b)
{
	const struct replay_ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void parse_modules(struct replay_kallsyms *k)
{
	for (size_t pos = k->core_end; pos < k->len;) {
		struct kline l = parse_line(k, pos);
		pos = l.next;
		if (!is_text(&l))
			continue;
		const char *name = arena_strndup(&k->arena, k->text + l.name, l.name_len);
		struct replay_ksym *sym = name ? vec_push(&k->mods) : NULL;
		if (!sym)
			break;
		*sym = (struct replay_ksym){ l.addr, name };
	}
	if (k->mods.n)
		qsort(k->mods.v, k->mods.n, sizeof(*k->mods.v), by_addr);
}

/* Indexes the listing in k->text: where the kernel's own lines end, and the module table. */
static void index_listing(struct replay_kallsyms *k)
{
	if (k->len) {
		k->core_end = find_core_end(k);
		parse_modules(k);
	}
}

void replay_kallsyms_load(struct replay_kallsyms *k)
{
	memset(k, 0, sizeof(*k));
	if (!map_copy(k)) {
		k->text = file_read_text(PROC_KALLSYMS, &k->len);
		if (!k->text || k->len >= UINT32_MAX)
			k->len = 0;
	}
	index_listing(k);
}

void replay_kallsyms_from_text(struct replay_kallsyms *k, char *text, size_t len)
{
	memset(k, 0, sizeof(*k));
	k->text = text;
	k->len = len < UINT32_MAX ? len : 0;
	index_listing(k);
}

/* The last text line of the kernel's own at or before addr: its offset, or SIZE_MAX. */
static size_t find_core(const struct replay_kallsyms *k, uint64_t addr, uint64_t *at)
{
	size_t lo = 0, hi = k->core_end, best = SIZE_MAX;
	while (lo < hi) {
		size_t mid = line_start(k, lo + (hi - lo) / 2);
		struct kline l = parse_line(k, mid);
		if (l.addr <= addr) {
			best = mid;
			lo = l.next;
		} else {
			hi = mid;
		}
	}
	/* Data symbols share the text's order; the text symbol is a few lines back. */
	for (int back = 0; best != SIZE_MAX && back < 64; back++) {
		struct kline l = parse_line(k, best);
		if (is_text(&l)) {
			*at = l.addr;
			return best;
		}
		best = best ? line_start(k, best - 1) : SIZE_MAX;
	}
	return SIZE_MAX;
}

static const char *core_name(struct replay_kallsyms *k, size_t line)
{
	uint32_t i = idmap_get(&k->names, (uint32_t)line);
	if (i != IDMAP_NONE)
		return k->found.v[i];
	struct kline l = parse_line(k, line);
	const char *name = arena_strndup(&k->arena, k->text + l.name, l.name_len);
	if (!name)
		return NULL;
	if (vec_reserve(&k->found, 1) &&
	    !idmap_put(&k->names, (uint32_t)line, (uint32_t)k->found.n))
		*vec_push(&k->found) = name;
	return name;
}

const char *replay_kallsyms_find(struct replay_kallsyms *k, uint64_t addr)
{
	if (!k->len)
		return NULL;
	uint64_t core_addr = 0;
	size_t line = find_core(k, addr, &core_addr);
	size_t m = UPPER_BOUND(k->mods.v, k->mods.n, .addr, addr);
	if (m && (line == SIZE_MAX || k->mods.v[m - 1].addr > core_addr))
		return k->mods.v[m - 1].name;
	return line == SIZE_MAX ? NULL : core_name(k, line);
}

void replay_kallsyms_free(struct replay_kallsyms *k)
{
	if (k->mapped)
		munmap((void *)k->text, k->len);
	else
		free((void *)k->text);
	vec_free(&k->mods);
	vec_free(&k->found);
	idmap_free(&k->names);
	arena_free(&k->arena);
	memset(k, 0, sizeof(*k));
}
