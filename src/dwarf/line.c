/*
 * Line-number programs (DWARF 2-5). A program is decoded once into rows grouped by
 * sequence; lookups are binary searches over sequences, then rows, choosing the last row at
 * or before the address (as LLVM does, so that of two rows at one address the later wins).
 * Version 5 file tables are 0-based and described by entry formats; earlier ones are 1-based:
 * dwarf_line_file() hides that. File paths are joined once, exactly as LLVM joins them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/search.h"
#include "base/cursor.h"
#include "base/err.h"
#include "base/vec.h"
#include "dwarf/dwarf.h"
#include "dwarf/dwarf_consts.h"
#include "dwarf/dwarf_internal.h"

struct header {
	uint64_t off;
	uint16_t version;
	uint8_t min_inst_len;
	bool default_is_stmt;
	int8_t line_base;
	uint8_t line_range;
	uint8_t opcode_base;
	const uint8_t *std_lengths;
	VEC(const char *) dirs;
	VEC(const char *) names;
	VEC(uint64_t) name_dirs;
	struct dwarf_unit fmt_unit; /* the CU, with this table's offset and address sizes */
};

static int bad(struct dwarf *d, uint64_t off, const char *what)
{
	return err_set(-EINVAL, "%s: .debug_line at 0x%llx: %s", d->path,
		       (unsigned long long)off, what);
}

static int push_str(struct header *h, bool dir, const char *s)
{
	const char **slot = dir ? vec_push(&h->dirs) : vec_push(&h->names);
	if (!slot)
		return -ENOMEM;
	*slot = s ? s : "";
	return 0;
}

static int push_file(struct header *h, const char *name, uint64_t dir)
{
	uint64_t *slot = vec_push(&h->name_dirs);
	if (!slot)
		return -ENOMEM;
	*slot = dir;
	return push_str(h, false, name);
}

static int read_v4_tables(struct dwarf *d, struct cur *c, struct header *h)
{
	for (;;) {
		const char *s = cur_str(c);
		if (!s)
			return bad(d, h->off, "include directories run past the header");
		if (!*s)
			break;
		if (push_str(h, true, s))
			return -ENOMEM;
	}
	for (;;) {
		const char *s = cur_str(c);
		if (!s)
			return bad(d, h->off, "file names run past the header");
		if (!*s)
			return 0;
		uint64_t dir = cur_uleb(c);
		cur_uleb(c);
		cur_uleb(c);
		if (push_file(h, s, dir))
			return -ENOMEM;
	}
}

/* One DWARF 5 entry list (directories or files) described by its format pairs. */
static int read_v5_entries(struct dwarf *d, struct cur *c, struct header *h, bool dirs)
{
	uint8_t nfmt = cur_u8(c);
	uint64_t fmt[2 * 255];
	for (unsigned i = 0; i < nfmt; i++) {
		fmt[2 * i] = cur_uleb(c);
		fmt[2 * i + 1] = cur_uleb(c);
	}
	uint64_t count = cur_uleb(c);
	if (!cur_ok(c) || count > cur_left(c))
		return bad(d, h->off, "entry table runs past the header");
	for (uint64_t n = 0; n < count; n++) {
		const char *path = NULL;
		uint64_t dir = 0;
		for (unsigned i = 0; i < nfmt; i++) {
			struct dwarf_value v;
			if (fmt[2 * i + 1] > UINT16_MAX ||
			    dwarf_form_read(d, &h->fmt_unit, c, (uint16_t)fmt[2 * i + 1], 0, &v))
				return bad(d, h->off, "bad form in an entry format");
			if (fmt[2 * i] == DW_LNCT_path && v.cls == DWC_STRING)
				path = v.str;
			else if (fmt[2 * i] == DW_LNCT_directory_index && v.cls == DWC_CONST)
				dir = v.u;
		}
		int err = dirs ? push_str(h, true, path) : push_file(h, path, dir);
		if (err)
			return err;
	}
	return 0;
}

static int read_header(struct dwarf *d, struct dwarf_unit *u, struct cur *c, struct header *h,
		       uint64_t *prog_end)
{
	uint64_t len = cur_u32(c);
	unsigned osz = 4;
	if (len == 0xffffffff) {
		len = cur_u64(c);
		osz = 8;
	}
	if (!cur_ok(c) || len > cur_left(c))
		return bad(d, h->off, "unit length runs past the section");
	*prog_end = cur_off(c) + len;
	h->version = cur_u16(c);
	if (h->version < 2 || h->version > 5)
		return bad(d, h->off, "unsupported line table version");
	h->fmt_unit = *u;
	h->fmt_unit.offset_size = (uint8_t)osz;
	if (h->version >= 5) {
		uint8_t asz = cur_u8(c);
		if (asz == 1 || asz == 2 || asz == 4 || asz == 8)
			h->fmt_unit.addr_size = asz;
		cur_u8(c); /* segment selector size */
	}
	uint64_t hlen = cur_uN(c, osz);
	if (!cur_ok(c) || hlen > *prog_end - cur_off(c))
		return bad(d, h->off, "header length runs past the unit");
	uint64_t prog = cur_off(c) + hlen;
	h->min_inst_len = cur_u8(c);
	if (h->version >= 4)
		cur_u8(c); /* maximum operations per instruction: VLIW only */
	h->default_is_stmt = cur_u8(c);
	h->line_base = (int8_t)cur_u8(c);
	h->line_range = cur_u8(c);
	h->opcode_base = cur_u8(c);
	h->std_lengths = cur_bytes(c, h->opcode_base ? h->opcode_base - 1 : 0);
	if (!cur_ok(c) || h->line_range == 0)
		return bad(d, h->off, "bad line program header");
	int err = h->version >= 5 ? read_v5_entries(d, c, h, true) : read_v4_tables(d, c, h);
	if (!err && h->version >= 5)
		err = read_v5_entries(d, c, h, false);
	if (err)
		return err;
	cur_seek(c, prog);
	return 0;
}

static bool is_absolute(const char *p)
{
	return p[0] == '/';
}

static void append(char *out, size_t *len, const char *comp)
{
	if (!*comp)
		return;
	if (*len && out[*len - 1] == '/') {
		while (*comp == '/')
			comp++;
	} else if (*len && *comp != '/') {
		out[(*len)++] = '/';
	}
	size_t n = strlen(comp);
	memcpy(out + *len, comp, n);
	*len += n;
	out[*len] = 0;
}

char *dwarf_path_join(struct arena *a, const char *comp_dir, const char *dir, const char *file)
{
	if (is_absolute(file))
		return (char *)file;
	size_t cap = strlen(comp_dir ? comp_dir : "") + strlen(dir) + strlen(file) + 3;
	char *out = arena_alloc(a, cap);
	if (!out)
		return NULL;
	size_t len = 0;
	if (comp_dir && !is_absolute(dir))
		append(out, &len, comp_dir);
	append(out, &len, dir);
	append(out, &len, file);
	return out;
}

/* Keeps each file entry's name and directory. Joining them into paths waits for a lookup
 * that needs one: a unit's table names every header it includes, a lookup a few of them,
 * and joining them all was a sixth of the time spent on line tables. */
static int keep_files(struct dwarf_unit *u, struct header *h, struct dwarf_line_table *t)
{
	size_t n = h->names.n ? h->names.n : 1;
	t->nfiles = h->names.n;
	t->comp_dir = u->comp_dir;
	t->files = malloc(n * sizeof(*t->files));
	t->joined = calloc(n, sizeof(*t->joined));
	if (!t->files || !t->joined)
		return -ENOMEM;
	for (size_t i = 0; i < h->names.n; i++) {
		uint64_t di = h->name_dirs.v[i];
		const char *dir = "";
		if (h->version >= 5 ? di < h->dirs.n : di > 0 && di <= h->dirs.n)
			dir = h->dirs.v[h->version >= 5 ? di : di - 1];
		t->files[i] = (struct dwarf_line_file){ h->names.v[i], dir };
	}
	return 0;
}

/* The registers of the state machine (DWARF 5 section 6.2.2) that rows keep. */
struct regs {
	uint64_t addr;
	uint32_t line, discriminator;
	uint32_t file, column; /* 16 bits in rows */
	uint32_t seq_start;    /* the sequence's first row */
};

static struct regs reset(size_t nrows)
{
	return (struct regs){ .line = 1, .file = 1, .seq_start = (uint32_t)nrows };
}

/* A row's discriminator, while the program is decoded. */
struct dwarf_line_disc {
	uint32_t row;
	uint32_t value;
};

/* Where rows go. */
struct sink {
	struct dwarf_line_row *rows;
	size_t n, cap;
	size_t disc_row; /* the row of the last discriminator kept, or SIZE_MAX */
};

struct program {
	struct dwarf *d;
	struct header *h;
	struct sink out;
	VEC(struct dwarf_line_seq) seqs;
	VEC(struct dwarf_line_disc) discs;
	bool unsorted; /* a sequence went back in address */
};

/* Room for more rows than reserve_rows() foresaw (sequences number rows in 32 bits). */
static int grow(struct program *p)
{
	struct sink *s = &p->out;
	size_t cap = s->cap ? 2 * s->cap : 1024;
	if (cap > UINT32_MAX - 1)
		cap = UINT32_MAX - 1;
	if (s->n >= cap)
		return bad(p->d, p->h->off, "too many rows");
	struct dwarf_line_row *rows = realloc(s->rows, cap * sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	s->rows = rows;
	s->cap = cap;
	return 0;
}

/* The discriminator of row (the last one), replacing the one it had (0 for none). */
static int set_discriminator(struct program *p, size_t row, uint32_t value)
{
	struct sink *s = &p->out;
	if (s->disc_row == row) {
		p->discs.n--;
		s->disc_row = SIZE_MAX;
	}
	if (!value)
		return 0;
	struct dwarf_line_disc *slot = vec_push(&p->discs);
	if (!slot)
		return -ENOMEM;
	*slot = (struct dwarf_line_disc){ (uint32_t)row, value };
	s->disc_row = row;
	return 0;
}

/* Appends the row the registers describe, and clears the discriminator (as DWARF says
 * after every row). With merge, the row replaces the one before it when both are at one
 * address (see decode()). The loop keeps the rows and their count in locals (*rows, *n):
 * p->out has them, and the rest of the sink, for the slow paths. */
static inline __attribute__((always_inline)) int emit_row(struct program *p,
							  struct dwarf_line_row **rows, size_t *n,
							  struct regs *r, bool merge)
{
	size_t at = *n;
	if (at > r->seq_start) {
		uint64_t prev = (*rows)[at - 1].addr;
		if (r->addr == prev && merge)
			at--;
		else if (r->addr < prev)
			p->unsorted = true;
	}
	int err = 0;
	if (at == p->out.cap) {
		p->out.n = *n;
		err = grow(p);
		*rows = p->out.rows;
		if (err)
			return err;
	}
	(*rows)[at] = (struct dwarf_line_row){ r->addr, r->line, (uint16_t)r->file,
					       (uint16_t)r->column };
	*n = at + 1;
	if (r->discriminator || p->out.disc_row == at) {
		err = set_discriminator(p, at, r->discriminator);
		r->discriminator = 0;
	}
	return err;
}

static int end_sequence(struct program *p, const struct dwarf_line_row *rows, size_t n,
			struct regs r)
{
	uint32_t first = r.seq_start, end = (uint32_t)n;
	uint64_t lo = rows[first].addr;
	if (lo < r.addr && end - first >= 2) {
		struct dwarf_line_seq *s = vec_push(&p->seqs);
		if (!s)
			return -ENOMEM;
		*s = (struct dwarf_line_seq){ lo, r.addr, first, end };
	}
	return 0;
}

static int define_file(struct program *p, struct cur op)
{
	const char *name = cur_str(&op);
	uint64_t dir = cur_uleb(&op);
	return name ? push_file(p->h, name, dir) : 0;
}

/* Reads for the loop: slow paths work on a copy of its cursor, so that the cursor never
 * has its address taken and stays in registers. The fast paths need not test c->bad: a bad
 * cursor's p still lies within its bounds, and the loop stops at the end of the opcode
 * that made it bad. */
static inline uint8_t u8(struct cur *c)
{
	if (c->p < c->end)
		return *c->p++;
	struct cur t = *c;
	uint8_t v = cur_u8_slow(&t);
	*c = t;
	return v;
}

static inline void skip(struct cur *c, uint64_t n)
{
	if (n <= cur_left(c)) {
		c->p += n;
		return;
	}
	struct cur t = *c;
	cur_skip_slow(&t, n);
	*c = t;
}

static inline uint64_t uleb(struct cur *c)
{
	if (c->p < c->end && !(*c->p & 0x80))
		return *c->p++;
	struct cur t = *c;
	uint64_t v = cur_uleb_slow(&t);
	*c = t;
	return v;
}

/* Line advances of 64 or more take two bytes: a third of gcc's. */
static inline int64_t sleb(struct cur *c)
{
	if (c->p < c->end && !(*c->p & 0x80))
		return (int64_t)(*c->p++ ^ 0x40) - 0x40; /* 7 bits, sign-extended */
	if (cur_left(c) >= 2 && !(c->p[1] & 0x80)) {
		int64_t v = (int64_t)((c->p[0] & 0x7f) | (uint32_t)(c->p[1] ^ 0x40) << 7) - 0x2000;
		c->p += 2;
		return v; /* 14 bits, sign-extended */
	}
	struct cur t = *c;
	int64_t v = cur_sleb(&t);
	*c = t;
	return v;
}

static inline uint64_t read_n(struct cur *c, unsigned size)
{
	struct cur t = *c;
	uint64_t v = cur_uN(&t, size);
	*c = t;
	return v;
}

/* One extended opcode (after its 0 byte). Inlined, for the loop's locals' sake. */
static inline __attribute__((always_inline)) int extended(struct program *p,
							  struct dwarf_line_row **rows, size_t *n,
							  struct cur *c, struct regs *r,
							  bool merge)
{
	uint64_t len = uleb(c);
	if (c->bad || len == 0 || len > cur_left(c))
		return bad(p->d, p->h->off, "extended opcode runs past the program");
	struct cur op = cur_make(c->p, len, c->big_endian);
	skip(c, len);
	int err = 0;
	switch (cur_u8(&op)) {
	case DW_LNE_end_sequence:
		err = emit_row(p, rows, n, r, merge);
		if (!err)
			err = end_sequence(p, *rows, *n, *r);
		*r = reset(*n);
		break;
	case DW_LNE_set_address: r->addr = read_n(&op, (unsigned)(len - 1)); break;
	case DW_LNE_define_file: err = define_file(p, op); break;
	case DW_LNE_set_discriminator: r->discriminator = (uint32_t)uleb(&op); break;
	}
	return err;
}

/* Decodes the program at c into rows (p->out) and sequences. Rows are most of the time
 * spent on line tables: the registers, the cursor, the rows and their count are scalar
 * locals of this one loop (kept in a struct, they were shuffled through vector registers
 * on every row), and each opcode's code jumps straight to the next opcode's (computed goto):
 * one shared dispatch was a branch mispredicted most of the time, the opcodes of a
 * program following each other irregularly. The file and column registers are 16 bits
 * wide, and truncate, as LLVM's do. */
static int run(struct program *p, const struct cur *prog, bool merge)
{
	static const void *const standard[13] = {
		[0] = &&extended_op,
		[DW_LNS_copy] = &&copy,
		[DW_LNS_advance_pc] = &&advance_pc,
		[DW_LNS_advance_line] = &&advance_line,
		[DW_LNS_set_file] = &&set_file,
		[DW_LNS_set_column] = &&set_column,
		[DW_LNS_negate_stmt] = &&no_operands,
		[DW_LNS_set_basic_block] = &&no_operands,
		[DW_LNS_const_add_pc] = &&const_add_pc,
		[DW_LNS_fixed_advance_pc] = &&fixed_advance_pc,
		[DW_LNS_set_prologue_end] = &&no_operands,
		[DW_LNS_set_epilogue_begin] = &&no_operands,
		[12] = &&unknown, /* DW_LNS_set_isa */
	};
	struct cur c = *prog;
	const struct header *h = p->h;
	const uint8_t opcode_base = h->opcode_base, min_inst_len = h->min_inst_len;
	/* Special opcodes, most of a program, advance by steps fixed per opcode: two
	 * divisions each, worked out once here. */
	uint32_t addr_step[256];
	uint32_t line_step[256];
	const void *code[256];
	for (unsigned op = 0; op < 256; op++) {
		unsigned adj = op - opcode_base;
		if (op < opcode_base) {
			code[op] = op < 13 ? standard[op] : &&unknown;
			continue;
		}
		code[op] = &&special;
		addr_step[op] = adj / h->line_range * min_inst_len;
		line_step[op] = (uint32_t)(h->line_base + (int32_t)(adj % h->line_range));
	}
	uint64_t const_add = (uint64_t)((255 - opcode_base) / h->line_range) * min_inst_len;
	struct dwarf_line_row *rows = p->out.rows;
	size_t n = p->out.n;
	p->out.disc_row = SIZE_MAX;
	struct regs r = reset(0);
	int err = 0;
	uint8_t op;
/* To the next opcode's code; CHECKED_NEXT first stops where operands ran past the end. */
#define NEXT()                          \
	do {                            \
		if (cur_eof(&c))        \
			goto done;      \
		op = u8(&c);            \
		goto *code[op];         \
	} while (0)
#define CHECKED_NEXT()                  \
	do {                            \
		if (c.bad)              \
			goto overrun;   \
		NEXT();                 \
	} while (0)
	NEXT();
special:
	r.addr += addr_step[op];
	r.line += line_step[op]; /* wraps as LLVM's 32-bit line register does */
	if ((err = emit_row(p, &rows, &n, &r, merge)))
		goto done;
	NEXT();
copy:
	if ((err = emit_row(p, &rows, &n, &r, merge)))
		goto done;
	NEXT();
set_column:
	r.column = (uint32_t)uleb(&c);
	CHECKED_NEXT();
no_operands:
	NEXT();
advance_line:
	r.line += (uint32_t)sleb(&c);
	CHECKED_NEXT();
set_file:
	r.file = (uint32_t)uleb(&c);
	CHECKED_NEXT();
advance_pc:
	r.addr += uleb(&c) * min_inst_len;
	CHECKED_NEXT();
const_add_pc:
	r.addr += const_add;
	NEXT();
fixed_advance_pc:
	r.addr += read_n(&c, 2);
	CHECKED_NEXT();
extended_op:
	if ((err = extended(p, &rows, &n, &c, &r, merge)))
		goto done;
	CHECKED_NEXT();
unknown: /* an opcode this reader does not know (or set_isa): its operands are skipped */
	for (unsigned i = 0; i < h->std_lengths[op - 1]; i++)
		uleb(&c);
	CHECKED_NEXT();
#undef NEXT
#undef CHECKED_NEXT
overrun:
	err = bad(p->d, h->off, "opcode runs past the program");
done:
	p->out.n = n;
	return err;
}

/* LLVM takes the last row at or before an address, so of rows at one address only the last
 * is ever looked up: the others, two rows in five of gcc's tables, are not kept. That
 * holds where each sequence is in address order, as compilers write them; a program with
 * a sequence that is not is decoded again keeping every row, so that a binary search
 * over it gives LLVM's answer. */
static int decode(struct program *p, const struct cur *prog)
{
	size_t files = p->h->names.n;
	int err = run(p, prog, true);
	if (err || !p->unsorted)
		return err;
	p->out.n = 0;
	p->seqs.n = 0;
	p->discs.n = 0;
	p->h->names.n = p->h->name_dirs.n = files; /* DW_LNE_define_file adds them again */
	return run(p, prog, false);
}

/* Every row costs the program at least one byte, so its length bounds the row count:
 * reserving that much at once spares the copies of a doubling array (and the page faults
 * of every copy), which were a third of the page faults of a large batch. Untouched
 * capacity costs address space only, and is given back when the program is decoded. */
#define MAX_RESERVED_ROWS ((size_t)1 << 24)

static void reserve_rows(struct program *p, size_t prog_len)
{
	size_t n = prog_len < MAX_RESERVED_ROWS ? prog_len : MAX_RESERVED_ROWS;
	p->out.rows = n ? malloc(n * sizeof(*p->out.rows)) : NULL;
	p->out.cap = p->out.rows ? n : 0;
}

static int by_lo(const void *a, const void *b)
{
	const struct dwarf_line_seq *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->first_row < y->first_row ? -1 : x->first_row > y->first_row;
}

/* The discriminators as dwarf_line_table keeps them, in one block (NULL when there are
 * none): a bit per row, so that a lookup of a row without one, most rows, reads one word,
 * and a rank per word of bits, so that one with one needs no search. */
static uint64_t *disc_table(const struct program *p, size_t *size)
{
	size_t words = (p->out.n + 63) / 64, n = p->discs.n;
	*size = words * (sizeof(uint64_t) + sizeof(uint32_t)) + n * sizeof(uint32_t);
	uint64_t *bits = n ? calloc(1, *size) : NULL;
	if (!bits)
		return NULL;
	uint32_t *rank = (uint32_t *)(bits + words), *values = rank + words;
	for (size_t k = 0; k < n; k++) {
		uint32_t row = p->discs.v[k].row;
		bits[row / 64] |= (uint64_t)1 << (row % 64);
		values[k] = p->discs.v[k].value;
	}
	uint32_t below = 0;
	for (size_t w = 0; w < words; w++) {
		rank[w] = below;
		below += (uint32_t)__builtin_popcountll(bits[w]);
	}
	return bits;
}

static void point_discs(struct dwarf_line_table *t, uint64_t *bits)
{
	size_t words = (t->nrows + 63) / 64;
	t->disc_bits = bits;
	t->disc_rank = bits ? (uint32_t *)(bits + words) : NULL;
	t->disc_values = bits ? t->disc_rank + words : NULL;
}

/* Moves the decoded rows, sequences and discriminators into their final place: keep, or
 * malloc blocks of their exact size. */
static int settle(struct program *p, struct bulk *keep, struct dwarf_line_table *t)
{
	t->nrows = p->out.n;
	t->nseqs = p->seqs.n;
	size_t disc_size;
	uint64_t *discs = disc_table(p, &disc_size);
	bool disc_ok = discs || !p->discs.n;
	vec_free(&p->discs);
	if (keep) {
		t->rows = bulk_copy(keep, p->out.rows, p->out.n * sizeof(*p->out.rows));
		t->seqs = bulk_copy(keep, p->seqs.v, p->seqs.n * sizeof(*p->seqs.v));
		point_discs(t, discs ? bulk_copy(keep, discs, disc_size) : NULL);
		t->kept = true;
		free(p->out.rows);
		vec_free(&p->seqs);
		free(discs);
		return t->rows && t->seqs && disc_ok && (t->disc_bits || !discs) ? 0 : -ENOMEM;
	}
	if (p->out.n < p->out.cap && p->out.n) {
		struct dwarf_line_row *fit = realloc(p->out.rows, p->out.n * sizeof(*fit));
		p->out.rows = fit ? fit : p->out.rows;
	}
	t->rows = p->out.rows;
	t->seqs = p->seqs.v;
	point_discs(t, discs);
	return disc_ok ? 0 : -ENOMEM;
}

int dwarf_line_read(struct dwarf *d, struct dwarf_unit *u, uint64_t off, struct bulk *keep,
		    struct dwarf_line_table *t)
{
	memset(t, 0, sizeof(*t));
	dwarf_sect_need(d, &d->line, off + 12);
	if (off >= d->line.size)
		return bad(d, off, "offset lies past the section");
	if (d->line_lazy) {
		struct cur l = cur_make(d->line.data, d->line.size, d->big_endian);
		cur_seek(&l, off);
		uint64_t len = cur_u32(&l);
		if (len == 0xffffffff)
			len = cur_u64(&l);
		dwarf_sect_need(d, &d->line, cur_ok(&l) && len < UINT64_MAX / 2 ? cur_off(&l) + len
										  : UINT64_MAX);
	}
	pthread_mutex_init(&t->lock, NULL);
	struct header h = { .off = off };
	struct cur c = cur_make(d->line.data, d->line.size, d->big_endian);
	cur_seek(&c, off);
	uint64_t end = 0;
	int err = read_header(d, u, &c, &h, &end);
	struct program p = { .d = d, .h = &h };
	if (!err) {
		struct cur prog = cur_sub(&c, end - cur_off(&c));
		reserve_rows(&p, cur_left(&prog));
		err = decode(&p, &prog);
	}
	if (!err)
		err = keep_files(u, &h, t);
	vec_free(&h.dirs);
	vec_free(&h.names);
	vec_free(&h.name_dirs);
	if (err) {
		free(p.out.rows);
		vec_free(&p.seqs);
		vec_free(&p.discs);
		dwarf_line_free(t);
		return err == -ENOMEM ? err_set(err, "%s: out of memory", d->path) : err;
	}
	if (p.seqs.n)
		qsort(p.seqs.v, p.seqs.n, sizeof(*p.seqs.v), by_lo);
	t->version = h.version;
	t->zero_based_files = h.version >= 5;
	if (settle(&p, keep, t)) {
		dwarf_line_free(t);
		return err_set(-ENOMEM, "%s: out of memory", d->path);
	}
	return 0;
}

void dwarf_line_free(struct dwarf_line_table *t)
{
	if (!t->kept) {
		free(t->rows);
		free(t->seqs);
		free(t->disc_bits);
	}
	free(t->files);
	free(t->joined);
	arena_free(&t->paths);
	pthread_mutex_destroy(&t->lock);
	memset(t, 0, sizeof(*t));
}

const char *dwarf_line_file(struct dwarf_line_table *t, uint64_t i)
{
	if (!t->zero_based_files) {
		if (i == 0)
			return NULL;
		i--;
	}
	if (i >= t->nfiles)
		return NULL;
	const char *path = atomic_load_explicit(&t->joined[i], memory_order_acquire);
	if (path)
		return path;
	pthread_mutex_lock(&t->lock);
	path = atomic_load_explicit(&t->joined[i], memory_order_relaxed);
	if (!path) {
		path = dwarf_path_join(&t->paths, t->comp_dir, t->files[i].dir, t->files[i].name);
		atomic_store_explicit(&t->joined[i], path, memory_order_release);
	}
	pthread_mutex_unlock(&t->lock);
	return path;
}

const struct dwarf_line_row *dwarf_line_lookup(const struct dwarf_line_table *t, uint64_t addr)
{
	/* The first sequence ending after addr, as LLVM's upper_bound by end address. */
	size_t lo = UPPER_BOUND(t->seqs, t->nseqs, .hi, addr);
	if (lo == t->nseqs || t->seqs[lo].lo > addr)
		return NULL;
	const struct dwarf_line_seq *s = &t->seqs[lo];
	/* Last row at or before addr among rows first+1 .. end-2; else the first row. */
	size_t a = s->first_row + 1;
	a += UPPER_BOUND(t->rows + a, s->end_row - 1 - a, .addr, addr);
	return &t->rows[a - 1];
}

uint32_t dwarf_line_discriminator(const struct dwarf_line_table *t,
				  const struct dwarf_line_row *row)
{
	size_t i = (size_t)(row - t->rows);
	if (!t->disc_bits || !(t->disc_bits[i / 64] >> (i % 64) & 1))
		return 0;
	uint64_t below = t->disc_bits[i / 64] & (((uint64_t)1 << (i % 64)) - 1);
	return t->disc_values[t->disc_rank[i / 64] + (uint32_t)__builtin_popcountll(below)];
}
