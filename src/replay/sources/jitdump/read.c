/*
 * The jitdump reader (jitdump.h). Records are read in file order, which is the order the JIT
 * wrote them in: JIT_CODE_DEBUG_INFO and JIT_CODE_UNWINDING_INFO describe the code of the
 * JIT_CODE_LOAD that follows them (V8's perf-jit.cc and perf's genelf both read them so).
 * A damaged record ends the reading: what came before it is kept, with a warning.
 */
#include "replay/sources/jitdump/jitdump.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/err.h"
#include "base/file.h"
#include "base/vec.h"

#define MAGIC 0x4A695444u /* "JiTD" as the writer's byte order stores a u32 */
#define HEADER_SIZE 40
#define RECORD_HEADER 16
/* A line entry's fixed part and the shortest name (its NUL). */
#define LINE_ENTRY_MIN 17
/* perf inject places the code right after a 64-byte ELF header and reads line addresses
 * as addresses in that file, so writers add those 64 bytes (V8's perf-jit.cc says so where
 * it writes them): the code offset of an entry is its address - code_addr - 64. */
#define ELF_HEADER_SIZE 64

enum { JIT_CODE_LOAD, JIT_CODE_MOVE, JIT_CODE_DEBUG_INFO, JIT_CODE_CLOSE,
       JIT_CODE_UNWINDING_INFO };

/* A line table waiting for the load of its code, found by the code's address: tables are
 * kept until then, not only the last one, in case a writer's threads interleave them. */
struct pending_lines {
	uint64_t addr;
	size_t line0, nlines;
	size_t off;     /* the record's, for a warning */
	bool bad_names; /* a file name with control characters: garbage, not a name */
	struct cur entries; /* the record's entries, to read again (v8_reread) */
};
/* How many of the latest waiting tables a load looks through (hostile files may hold
 * millions that no load claims). */
#define PENDING_LOOK 64

/* What UNWINDING_INFO left for the next load. */
struct pending {
	const uint8_t *eh_frame, *eh_frame_hdr;
	uint64_t eh_frame_size, eh_frame_hdr_size;
};

struct reader {
	struct replay_jitdump *d;
	VEC(struct replay_jit_code) codes;
	VEC(struct replay_jit_line) lines;
	VEC(struct replay_jit_place) places;
	VEC(struct pending_lines) waiting;
	struct pending next;
};

static void warn(struct replay_jitdump *d, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void warn(struct replay_jitdump *d, size_t off, const char *fmt, ...)
{
	if (d->warning[0])
		return;
	int n = snprintf(d->warning, sizeof(d->warning), "%s: offset 0x%zx: ", d->path, off);
	if (n < 0 || (size_t)n >= sizeof(d->warning))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->warning + n, sizeof(d->warning) - (size_t)n, fmt, ap);
	va_end(ap);
}

static int read_header(struct replay_jitdump *d, struct cur *c)
{
	if (d->size < 4)
		return err_set(-EINVAL, "%s: not a jitdump (shorter than its magic)", d->path);
	uint32_t magic = load_u32(d->data, false);
	if (magic != MAGIC && magic != __builtin_bswap32(MAGIC))
		return err_set(-EINVAL, "%s: not a jitdump (magic 0x%08x, expected 0x%08x)",
			       d->path, magic, MAGIC);
	d->big_endian = magic != MAGIC;
	*c = cur_make(d->data, d->size, d->big_endian);
	cur_skip(c, 4);
	d->version = cur_u32(c);
	uint32_t total = cur_u32(c);
	d->elf_mach = cur_u32(c);
	cur_skip(c, 4); /* pad1 */
	d->pid = cur_u32(c);
	d->timestamp = cur_u64(c);
	d->flags = cur_u64(c);
	if (!cur_ok(c))
		return err_set(-EINVAL, "%s: header cut short (%zu bytes, expected %d)", d->path,
			       d->size, HEADER_SIZE);
	if (total < HEADER_SIZE || total > d->size)
		return err_set(-EINVAL, "%s: header size %u (at least %d, within the %zu bytes)",
			       d->path, total, HEADER_SIZE, d->size);
	cur_seek(c, total); /* later versions may add fields */
	return 0;
}

static int add_place(struct reader *r, uint64_t start, uint64_t size, uint64_t time,
		     size_t code)
{
	struct replay_jit_place *p = vec_push(&r->places);
	if (!p)
		return -ENOMEM;
	*p = (struct replay_jit_place){ start, start + size, time, UINT64_MAX, code };
	if (size > r->d->max_size)
		r->d->max_size = size;
	return 0;
}

/* Whether line table t is believable for code of size bytes. Node 20 sometimes writes
 * garbage in place of the script name, longer than the NUL it ends at, so the entries
 * after the first are read out of step: their offsets lie outside the code. Such a table
 * is read again (v8_reread) or left out, with a warning. */
static bool lines_fit(struct reader *r, const struct pending_lines *t, uint64_t size)
{
	bool fit = !t->bad_names;
	for (size_t i = 0; fit && i < t->nlines; i++)
		fit = r->lines.v[t->line0 + i].off < size;
	return fit;
}

/* The script of a V8 code name, "JS:*alpha /app.js:2:15": where it starts and its length
 * (the name without its last two ":NUMBER"); false when the name has no such form. */
static bool v8_script(const char *name, const char **script, size_t *len)
{
	const char *sp = strncmp(name, "JS:", 3) ? NULL : strchr(name, ' ');
	const char *end = sp ? name + strlen(name) : NULL;
	for (int k = 0; end && k < 2; k++) {
		while (end > sp + 1 && end[-1] >= '0' && end[-1] <= '9')
			end--;
		end = end > sp + 1 && end[-1] == ':' ? end - 1 : NULL;
	}
	if (!end || end == sp + 1)
		return false;
	*script = sp + 1;
	*len = (size_t)(end - *script);
	return true;
}

/* A garbled V8 table read again. Node 20 (V8 11.3) sometimes writes a freed buffer for the
 * script's name, of the name's length: with that length, from the code's own name, each
 * entry is 16 bytes, the length and a NUL. The script's name is written over the garbage
 * (the dump's bytes are this reader's copy) and the table is kept when every entry then
 * lies in the code. */
static bool v8_reread(struct reader *r, struct pending_lines *t, struct replay_jit_code *code)
{
	const char *script;
	size_t len;
	if (!v8_script(code->name, &script, &len) || !vec_reserve(&r->lines, t->nlines))
		return false;
	struct cur c = t->entries;
	size_t line0 = r->lines.n;
	for (size_t i = 0; i < t->nlines; i++) {
		uint64_t at = cur_u64(&c);
		uint32_t line = cur_u32(&c);
		cur_skip(&c, 4);
		size_t name_off = cur_off(&c);
		cur_skip(&c, len);
		uint64_t rel = at - t->addr - ELF_HEADER_SIZE;
		if (cur_u8(&c) || !cur_ok(&c) || at < t->addr + ELF_HEADER_SIZE || rel >= code->size) {
			r->lines.n = line0;
			return false;
		}
		memcpy(r->d->data + name_off, script, len);
		r->lines.v[r->lines.n++] =
			(struct replay_jit_line){ rel, (const char *)r->d->data + name_off, line };
	}
	t->line0 = line0;
	return true;
}

/* The line table waiting for the code loaded at addr, taken off the waiting list. */
static void take_lines(struct reader *r, struct replay_jit_code *code)
{
	size_t n = r->waiting.n, stop = n > PENDING_LOOK ? n - PENDING_LOOK : 0;
	for (size_t i = n; i > stop; i--) {
		struct pending_lines t = r->waiting.v[i - 1];
		if (t.addr != code->addr)
			continue;
		r->waiting.v[i - 1] = r->waiting.v[--r->waiting.n];
		if (lines_fit(r, &t, code->size) || v8_reread(r, &t, code)) {
			code->line0 = t.line0;
			code->nlines = t.nlines;
		} else {
			warn(r->d, t.off, "JIT_CODE_DEBUG_INFO for %#llx does not describe its code "
					  "(garbled entries): left out",
			     (unsigned long long)t.addr);
		}
		return;
	}
}

static bool garbled(const char *name)
{
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return true;
	return false;
}

static int code_load(struct reader *r, struct cur *c, uint64_t time, size_t off)
{
	cur_skip(c, 8 + 8); /* pid, tid, vma */
	uint64_t addr = cur_u64(c), size = cur_u64(c), index = cur_u64(c);
	const char *name = cur_str(c);
	if (!cur_ok(c)) {
		warn(r->d, off, "JIT_CODE_LOAD cut short");
		return 1;
	}
	if (!size || addr + size < addr) {
		warn(r->d, off, "JIT_CODE_LOAD of %#llx bytes at %#llx runs past the address space",
		     (unsigned long long)size, (unsigned long long)addr);
		return 1;
	}
	struct replay_jit_code *code = vec_push(&r->codes);
	if (!code)
		return -ENOMEM;
	*code = (struct replay_jit_code){ .name = name, .addr = addr, .size = size,
					  .index = index };
	/* Writers may leave the bytes out (the record's size says whether they are there). */
	code->bytes = cur_left(c) >= size ? cur_bytes(c, size) : NULL;
	take_lines(r, code);
	code->eh_frame = r->next.eh_frame;
	code->eh_frame_size = r->next.eh_frame_size;
	code->eh_frame_hdr = r->next.eh_frame_hdr;
	code->eh_frame_hdr_size = r->next.eh_frame_hdr_size;
	r->next = (struct pending){ 0 };
	return add_place(r, addr, size, time, r->codes.n - 1);
}

/* The place the code of index last took, SIZE_MAX for none. */
static size_t place_of_index(const struct reader *r, uint64_t index)
{
	for (size_t i = r->places.n; i > 0; i--)
		if (r->codes.v[r->places.v[i - 1].code].index == index)
			return i - 1;
	return SIZE_MAX;
}

static int code_move(struct reader *r, struct cur *c, uint64_t time, size_t off)
{
	cur_skip(c, 8 + 8); /* pid, tid, vma */
	uint64_t old_addr = cur_u64(c), new_addr = cur_u64(c), size = cur_u64(c);
	uint64_t index = cur_u64(c);
	if (!cur_ok(c)) {
		warn(r->d, off, "JIT_CODE_MOVE cut short");
		return 1;
	}
	size_t from = place_of_index(r, index);
	if (from == SIZE_MAX || r->places.v[from].start != old_addr || !size ||
	    new_addr + size < new_addr) {
		warn(r->d, off, "JIT_CODE_MOVE of code %llu from %#llx, which is not there",
		     (unsigned long long)index, (unsigned long long)old_addr);
		return 0; /* the records after it may still be right */
	}
	r->places.v[from].until = time;
	return add_place(r, new_addr, size, time, r->places.v[from].code);
}

static int debug_info(struct reader *r, struct cur *c, size_t off)
{
	uint64_t addr = cur_u64(c), n = cur_u64(c);
	if (!cur_ok(c) || n > cur_left(c) / LINE_ENTRY_MIN) {
		warn(r->d, off, "JIT_CODE_DEBUG_INFO of %llu entries does not fit its record",
		     (unsigned long long)n);
		return 1;
	}
	if (!vec_reserve(&r->lines, n))
		return -ENOMEM;
	struct cur entries = *c;
	size_t line0 = r->lines.n;
	const char *file = NULL;
	bool bad = false;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t at = cur_u64(c);
		uint32_t line = cur_u32(c);
		cur_skip(c, 4); /* discriminator (V8: the column) */
		const char *name = cur_str(c);
		if (!cur_ok(c)) {
			warn(r->d, off, "JIT_CODE_DEBUG_INFO entry %llu cut short",
			     (unsigned long long)i);
			r->lines.n = line0;
			return 1;
		}
		/* "\xff" alone: the file of the entry before (the specification's shorthand). */
		if (!((unsigned char)name[0] == 0xff && !name[1]) || !file)
			file = name;
		bad |= garbled(file);
		uint64_t rel = at - addr;
		rel = at < addr || rel < ELF_HEADER_SIZE ? 0 : rel - ELF_HEADER_SIZE;
		r->lines.v[r->lines.n++] = (struct replay_jit_line){ rel, file, line };
	}
	struct pending_lines *t = vec_push(&r->waiting);
	if (!t)
		return -ENOMEM;
	*t = (struct pending_lines){ addr, line0, r->lines.n - line0, off, bad, entries };
	return 0;
}

static int unwinding_info(struct reader *r, struct cur *c, size_t off)
{
	uint64_t size = cur_u64(c), hdr = cur_u64(c);
	cur_skip(c, 8); /* mapped_size */
	if (!cur_ok(c) || size > cur_left(c) || hdr > size) {
		warn(r->d, off, "JIT_CODE_UNWINDING_INFO of %#llx bytes does not fit its record",
		     (unsigned long long)size);
		return 1;
	}
	/* The .eh_frame first, its .eh_frame_hdr at the end (perf's genelf reads them so). */
	const uint8_t *p = cur_bytes(c, size);
	r->next.eh_frame = size > hdr ? p : NULL;
	r->next.eh_frame_size = size - hdr;
	r->next.eh_frame_hdr = hdr ? p + (size - hdr) : NULL;
	r->next.eh_frame_hdr_size = hdr;
	return 0;
}

/* One record at c: 0 to go on, 1 to stop (warned), negative for no memory. */
static int read_record(struct reader *r, struct cur *c)
{
	size_t off = cur_off(c);
	uint32_t id = cur_u32(c), total = cur_u32(c);
	uint64_t time = cur_u64(c);
	if (!cur_ok(c) || total < RECORD_HEADER || total - RECORD_HEADER > cur_left(c)) {
		warn(r->d, off, "record of %u bytes runs past the end of the file (%zu bytes): "
				"truncated",
		     total, r->d->size);
		return 1;
	}
	struct cur body = cur_sub(c, total - RECORD_HEADER);
	switch (id) {
	case JIT_CODE_LOAD:
		return code_load(r, &body, time, off);
	case JIT_CODE_MOVE:
		return code_move(r, &body, time, off);
	case JIT_CODE_DEBUG_INFO:
		return debug_info(r, &body, off);
	case JIT_CODE_UNWINDING_INFO:
		return unwinding_info(r, &body, off);
	case JIT_CODE_CLOSE:
		return 1;
	}
	return 0; /* a record type of a later version */
}

static int by_start(const void *a, const void *b)
{
	const struct replay_jit_place *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->code < y->code ? -1 : x->code > y->code;
}

static int parse(struct replay_jitdump *d)
{
	struct cur c;
	int rc = read_header(d, &c);
	struct reader r = { .d = d };
	while (!rc && !cur_eof(&c))
		rc = read_record(&r, &c);
	vec_free(&r.waiting);
	if (rc < 0) {
		vec_free(&r.codes);
		vec_free(&r.lines);
		vec_free(&r.places);
		return rc == -ENOMEM ? err_set(rc, "%s: out of memory", d->path) : rc;
	}
	if (r.places.n)
		qsort(r.places.v, r.places.n, sizeof(*r.places.v), by_start);
	d->codes = r.codes.v;
	d->ncodes = r.codes.n;
	d->lines = r.lines.v;
	d->nlines = r.lines.n;
	d->places = r.places.v;
	d->nplaces = r.places.n;
	return 0;
}

static int take(const char *name, uint8_t *data, size_t size, struct replay_jitdump **out)
{
	struct replay_jitdump *d = calloc(1, sizeof(*d));
	if (!d || !(d->path = strdup(name))) {
		free(d);
		free(data);
		return err_set(-ENOMEM, "%s: out of memory", name);
	}
	d->data = data;
	d->size = size;
	int rc = parse(d);
	if (rc) {
		replay_jitdump_free(d);
		return rc;
	}
	*out = d;
	return 0;
}

int replay_jitdump_read(const char *path, struct replay_jitdump **out)
{
	uint8_t *data;
	size_t size;
	int rc = file_read(path, &data, &size);
	return rc ? rc : take(path, data, size, out);
}

int replay_jitdump_parse(const char *name, const void *data, size_t size,
			 struct replay_jitdump **out)
{
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		return err_set(-ENOMEM, "%s: out of memory", name);
	if (size)
		memcpy(copy, data, size);
	return take(name, copy, size, out);
}

void replay_jitdump_free(struct replay_jitdump *d)
{
	if (!d)
		return;
	free(d->codes);
	free(d->lines);
	free(d->places);
	free(d->data);
	free(d->path);
	free(d);
}

const struct replay_jit_code *replay_jitdump_find(const struct replay_jitdump *d, uint64_t pc,
						  uint64_t time, bool timed)
{
	size_t lo = 0, hi = d->nplaces; /* the first place starting after pc */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->places[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct replay_jit_place *best = NULL;
	for (size_t i = lo; i > 0 && pc - d->places[i - 1].start < d->max_size; i--) {
		const struct replay_jit_place *p = &d->places[i - 1];
		if (pc >= p->end || (timed && (p->time > time || p->until <= time)))
			continue;
		if (!best || p->time > best->time || (p->time == best->time && p->code > best->code))
			best = p;
	}
	return best ? &d->codes[best->code] : NULL;
}

const struct replay_jit_line *replay_jitdump_line(const struct replay_jitdump *d,
						  const struct replay_jit_code *c, uint64_t off)
{
	if (!c->nlines)
		return NULL; /* d->lines may be NULL */
	const struct replay_jit_line *v = d->lines + c->line0, *best = NULL;
	/* Entries come in code order from V8, but nothing promises it: the closest below. */
	for (size_t i = 0; i < c->nlines; i++)
		if (v[i].off <= off && (!best || v[i].off >= best->off))
			best = &v[i];
	return best;
}
