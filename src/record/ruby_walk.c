/*
 * The walk of a stopped thread's Ruby frames (ruby_walk.h), as Ruby 3.1's own backtrace
 * (vm_backtrace.c, backtrace_each) goes: from ec->cfp to the frame before the end of the
 * VM stack, an iseq frame is one with an iseq and a pc (ifunc and dummy frames have none),
 * a C function's is one without an iseq whose environment says VM_FRAME_MAGIC_CFUNC; the
 * others are left out. Control frames are read 16 at a time (they lie side by side in the
 * VM stack).
 */
#include "record/ruby_walk.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ruby/lines.h"

#define NEW_RECORDS 128   /* iseq and cfunc records one walk writes at most */
#define SEEN_SLOTS 65536  /* a power of two */
#define SEEN_MOST (SEEN_SLOTS / 2)
#define CFP_BATCH 16
#define MAX_CFP (4 * PERF_RB_MAX_FRAMES) /* control frames looked at, skipped ones too */
#define MAX_VM_STACK (1ull << 27)        /* VALUEs: 1 GiB, far above Ruby's largest */
#define MAX_ISEQ_SIZE (1u << 24)         /* words: caps the succinct table read */
#define MAX_ID_ARRAYS (1u << 20)
#define VALUES_MAX 65536 /* bytes of VM stack values read at once */
#define CFUNC_KEY 1u /* the low bit of a method entry's second key (pointers are even) */

struct walker {
	struct rec_rb_proc *p;
	const struct rb_layout *l;
	const struct rec_mem *mem;
	struct {
		struct perf_rb_stack_head h;
		struct perf_rb_frame f[PERF_RB_MAX_FRAMES];
	} stack;
	struct {
		struct perf_rb_iseq_head h;
		uint8_t data[PERF_RB_LABEL_MAX + PERF_RB_PATH_MAX +
			     PERF_RB_LINES_MAX * sizeof(struct perf_rb_line)];
	} __attribute__((packed)) iseq;
	struct {
		struct perf_rb_cfunc_head h;
		uint8_t name[PERF_RB_LABEL_MAX];
	} __attribute__((packed)) cfunc;
	uint32_t positions[PERF_RB_LINES_MAX];
	uint8_t entries[PERF_RB_LINES_MAX * 16];
	uint8_t succ[65536];
	/* The thread's VM stack values in use, read at once: the environments of frames
	 * that did not escape to the heap lie there (one read instead of one a frame). */
	uint8_t values[VALUES_MAX];
	uint64_t values_at, values_n;
	uint64_t fresh[NEW_RECORDS][2]; /* the new records' keys */
	size_t nfresh;
};

static int rd(const struct walker *w, uint64_t addr, void *buf, size_t n)
{
	if (!addr || addr + n < addr)
		return -1;
	return w->mem->read(w->mem->arg, addr, buf, n);
}

static int rd_u64(const struct walker *w, uint64_t addr, uint64_t *v)
{
	return rd(w, addr, v, sizeof(*v));
}

static uint64_t word(const uint8_t *b, size_t off)
{
	uint64_t v;
	memcpy(&v, b + off, 8);
	return v;
}

static uint32_t word32(const uint8_t *b, size_t off)
{
	uint32_t v;
	memcpy(&v, b + off, 4);
	return v;
}

void rec_rb_proc_regen(struct rec_rb_proc *p)
{
	memset(p->bodies, 0, sizeof(p->bodies));
	free(p->seen);
	p->seen = NULL;
	p->nseen = 0;
}

void rec_rb_proc_free(struct rec_rb_proc *p)
{
	rec_rb_proc_regen(p);
	free(p->scratch);
	p->scratch = NULL;
}

/* Whether the record keyed (a, b) was written; marked at once when not. */
static bool seen_before(struct rec_rb_proc *p, uint64_t a, uint64_t b)
{
	if (!p->seen || p->nseen >= SEEN_MOST) {
		free(p->seen);
		p->nseen = 0;
		if (!(p->seen = calloc(SEEN_SLOTS * 2, sizeof(*p->seen))))
			return true; /* no table: no record, rather than one a walk */
	}
	uint64_t h = (a ^ b * 31) * 0x9e3779b97f4a7c15ull;
	for (size_t i = h >> 48;; i = (i + 1) & (SEEN_SLOTS - 1)) {
		uint64_t *k = &p->seen[i * 2];
		if (k[0] == a && k[1] == b)
			return true;
		if (!k[0]) {
			k[0] = a;
			k[1] = b;
			p->nseen++;
			return false;
		}
	}
}

static void unsee(struct rec_rb_proc *p, uint64_t a, uint64_t b)
{
	for (size_t i = 0; p->seen && i < SEEN_SLOTS; i++) {
		uint64_t *k = &p->seen[i * 2];
		if (k[0] == a && k[1] == b) {
			k[0] = 1; /* a tombstone that matches nothing: probe chains stay whole */
			k[1] = UINT64_MAX;
			return;
		}
	}
}

static bool is_type(const struct walker *w, uint64_t flags, uint32_t type)
{
	return (flags & w->l->type_mask) == type;
}

static bool is_imemo(const struct walker *w, uint64_t flags, uint32_t imemo)
{
	return is_type(w, flags, w->l->t_imemo) &&
	       (flags >> w->l->imemo_shift & w->l->imemo_mask) == imemo;
}

/* A String's bytes into dst, at most cap (cut at a character): the length, *flags marked
 * when cut or not a String. */
static size_t read_str(const struct walker *w, uint64_t obj, uint8_t *dst, size_t cap,
		       uint16_t *flags)
{
	const struct rb_layout *l = w->l;
	uint8_t s[40];
	if (rd(w, obj, s, sizeof(s)) || !is_type(w, word(s, 0), l->t_string))
		goto failed;
	uint64_t f = word(s, 0), n, src;
	if (f & l->str_noembed) {
		n = word(s, l->str_heap_len);
		src = word(s, l->str_heap_ptr);
	} else {
		n = f >> l->str_embed_len_shift & l->str_embed_len_mask;
		src = obj + l->str_embed;
	}
	uint64_t whole = n;
	if (n > cap) {
		n = cap;
		*flags |= PERF_RB_NAME_CUT;
	}
	if (n && rd(w, src, dst, (size_t)n))
		goto failed;
	if (n < whole) { /* cut UTF-8 ends before the character it cut into */
		while (n && (dst[n - 1] & 0xc0) == 0x80)
			n--;
		if (n && dst[n - 1] >= 0xc0)
			n--;
	}
	return (size_t)n;
failed:
	*flags |= PERF_RB_NAME_READ_FAILED;
	return 0;
}

/* Element i of an Array: 0, or -1 when it is none or i is past its end. */
static int ary_at(const struct walker *w, uint64_t ary, uint64_t i, uint64_t *v)
{
	const struct rb_layout *l = w->l;
	uint8_t a[40];
	if (rd(w, ary, a, sizeof(a)) || !is_type(w, word(a, 0), l->t_array))
		return -1;
	uint64_t f = word(a, 0);
	if (f & l->ary_embed_flag)
		return i < (f >> l->ary_embed_len_shift & l->ary_embed_len_mask)
			       ? rd_u64(w, ary + l->ary_embed + i * 8, v) : -1;
	return i < word(a, l->ary_heap_len) ? rd_u64(w, word(a, l->ary_heap_ptr) + i * 8, v) : -1;
}

/* The positions of n line entries: the array when Ruby kept it, else its succinct table. */
static size_t read_positions(struct walker *w, const uint8_t *body, size_t n)
{
	const struct rb_layout *l = w->l;
	uint64_t positions = word(body, l->body_insns_positions);
	if (n == 1) {
		w->positions[0] = 0;
		return 1;
	}
	if (positions)
		return rd(w, positions, w->positions, n * 4) ? 0 : n;
	uint32_t size = word32(body, l->body_iseq_size);
	uint64_t succ = word(body, l->body_insns_succ);
	size_t bytes = rb_succ_table_size(size < MAX_ISEQ_SIZE ? size : MAX_ISEQ_SIZE);
	if (bytes > sizeof(w->succ))
		bytes = sizeof(w->succ);
	if (!succ || !bytes || rd(w, succ, w->succ, bytes))
		return 0;
	return rb_succ_positions(w->succ, bytes, w->positions, n);
}

/* The line table of an iseq's body into dst: its entries. */
static uint32_t read_lines(struct walker *w, const uint8_t *body, uint8_t *dst, uint16_t *flags)
{
	const struct rb_layout *l = w->l;
	size_t n = word32(body, l->body_insns_size);
	if (n > PERF_RB_LINES_MAX) {
		n = PERF_RB_LINES_MAX;
		*flags |= PERF_RB_NAME_CUT;
	}
	if (!n)
		return 0;
	if (rd(w, word(body, l->body_insns_body), w->entries, n * l->insn_info_size) ||
	    read_positions(w, body, n) != n) {
		*flags |= PERF_RB_NAME_READ_FAILED;
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct perf_rb_line e = {
			.pos = w->positions[i],
			.line = (int32_t)word32(w->entries, i * l->insn_info_size + l->insn_info_line),
		};
		memcpy(dst + i * sizeof(e), &e, sizeof(e));
	}
	return (uint32_t)n;
}

static int emit_iseq(struct walker *w, uint64_t iseq, uint64_t body_addr,
		     rec_interp_emit_fn emit, void *arg)
{
	const struct rb_layout *l = w->l;
	uint8_t body[160];
	uint16_t flags = 0;
	if (rd(w, body_addr, body, sizeof(body))) {
		unsee(w->p, iseq, body_addr);
		return 0;
	}
	uint8_t *d = w->iseq.data;
	size_t label = read_str(w, word(body, l->body_label), d, PERF_RB_LABEL_MAX, &flags);
	uint64_t path = word(body, l->body_pathobj), first;
	if (!(word(body, l->body_pathobj) & 7) && ary_at(w, path, 0, &first) == 0)
		path = first; /* [path, realpath] */
	size_t plen = read_str(w, path, d + label, PERF_RB_PATH_MAX, &flags);
	uint32_t nlines = read_lines(w, body, d + label + plen, &flags);
	uint64_t lineno = word(body, l->body_first_lineno);
	w->iseq.h = (struct perf_rb_iseq_head){
		.magic = PERF_RB_MAGIC, .type = PERF_RB_ISEQ, .flags = flags, .pid = w->stack.h.pid,
		.iseq = iseq, .first_lineno = lineno & 1 ? (int32_t)((int64_t)lineno >> 1) : 0,
		.label_len = (uint16_t)label, .path_len = (uint16_t)plen, .nlines = nlines,
	};
	int r = emit(&w->iseq, sizeof(w->iseq.h) + label + plen + nlines * sizeof(struct perf_rb_line),
		     arg);
	if (r)
		unsee(w->p, iseq, body_addr);
	return r;
}

/* The name of an ID (its String in the symbol table): its length in dst. */
static size_t id_name(struct walker *w, uint64_t id, uint8_t *dst, uint16_t *flags)
{
	const struct rb_layout *l = w->l;
	uint8_t sym[24];
	uint64_t serial = id > l->last_op_id ? id >> l->id_scope_shift : id, ary, str;
	if (!w->p->lib.global_symbols ||
	    rd(w, w->p->bias + w->p->lib.global_symbols, sym, sizeof(sym)) || !serial ||
	    serial > word32(sym, l->symbols_last_id) || serial / l->id_entry_unit > MAX_ID_ARRAYS ||
	    ary_at(w, word(sym, l->symbols_ids), serial / l->id_entry_unit, &ary) ||
	    ary_at(w, ary, serial % l->id_entry_unit * l->id_entry_size, &str)) {
		*flags |= PERF_RB_NAME_READ_FAILED;
		return 0;
	}
	return read_str(w, str, dst, PERF_RB_LABEL_MAX, flags);
}

static int emit_cfunc(struct walker *w, uint64_t me, uint64_t def_key, rec_interp_emit_fn emit,
		      void *arg)
{
	const struct rb_layout *l = w->l;
	uint64_t def_addr = def_key & ~(uint64_t)CFUNC_KEY;
	uint8_t def[48];
	uint16_t flags = 0;
	size_t n = 0;
	uint64_t func = 0;
	if (rd(w, def_addr, def, sizeof(def)) || (word32(def, 0) & l->def_type_mask) != l->def_type_cfunc) {
		flags |= PERF_RB_NAME_READ_FAILED;
	} else {
		func = word(def, l->def_cfunc_func);
		n = id_name(w, word(def, l->def_original_id), w->cfunc.name, &flags);
	}
	w->cfunc.h = (struct perf_rb_cfunc_head){
		.magic = PERF_RB_MAGIC, .type = PERF_RB_CFUNC, .flags = flags, .pid = w->stack.h.pid,
		.me = me, .func = func, .name_len = (uint16_t)n,
	};
	int r = emit(&w->cfunc, sizeof(w->cfunc.h) + n, arg);
	if (r)
		unsee(w->p, me, def_key);
	return r;
}

static void note_new(struct walker *w, uint64_t a, uint64_t b)
{
	if (w->nfresh < NEW_RECORDS && !seen_before(w->p, a, b)) {
		w->fresh[w->nfresh][0] = a;
		w->fresh[w->nfresh++][1] = b;
	}
}

/* Appends a frame: 0, or 1 when the stack is full. */
static int push(struct walker *w, uint64_t addr, int32_t pc, uint32_t fflags)
{
	uint32_t n = w->stack.h.nframes;
	if (n >= PERF_RB_MAX_FRAMES) {
		w->stack.h.flags |= PERF_RB_STACK_CUT;
		return 1;
	}
	w->stack.f[n] = (struct perf_rb_frame){ .addr = addr, .pc = pc, .fflags = fflags };
	w->stack.h.nframes = n + 1;
	return 0;
}

static int fail(struct walker *w)
{
	w->stack.h.flags |= PERF_RB_STACK_READ_FAILED;
	return 1;
}

/* The iseq_encoded and iseq_size of the iseq's body: NULL when unreadable. */
static const struct rec_rb_body *body_of(struct walker *w, uint64_t iseq, uint64_t body)
{
	const struct rb_layout *l = w->l;
	struct rec_rb_body *b = &w->p->bodies[(iseq >> 4 ^ body >> 4) & 255];
	uint8_t raw[16];
	if (b->iseq == iseq && b->body == body)
		return b;
	if (rd(w, body, raw, sizeof(raw)))
		return NULL;
	*b = (struct rec_rb_body){ iseq, body, word(raw, l->body_iseq_encoded),
				   word32(raw, l->body_iseq_size) };
	return b;
}

/* One control frame (its bytes in cf): 0 to go on, 1 when the walk ends. */
/* n bytes at addr: from the values read at once when they lie there, else read. */
static int rd_env(const struct walker *w, uint64_t addr, void *buf, size_t n)
{
	if (addr >= w->values_at && addr - w->values_at <= w->values_n &&
	    n <= w->values_n - (addr - w->values_at)) {
		memcpy(buf, w->values + (addr - w->values_at), n);
		return 0;
	}
	return rd(w, addr, buf, n);
}

static int frame(struct walker *w, const uint8_t *cf)
{
	const struct rb_layout *l = w->l;
	uint64_t pc = word(cf, l->cfp_pc), iseq = word(cf, l->cfp_iseq), ep = word(cf, l->cfp_ep);
	uint8_t env[24]; /* ep[-2] (method entry or cref), ep[-1], ep[0] (flags) */
	int16_t lo = l->ep_me_cref < l->ep_flags ? l->ep_me_cref : l->ep_flags;
	if (rd_env(w, ep + (int64_t)lo * 8, env, sizeof(env)))
		return fail(w);
	uint64_t flags = word(env, (size_t)(l->ep_flags - lo) * 8);
	uint32_t finish = flags & l->frame_flag_finish ? PERF_RB_FRAME_FINISH : 0;
	if (iseq && pc) {
		uint8_t is[24];
		if (rd(w, iseq, is, sizeof(is)) || !is_imemo(w, word(is, 0), l->imemo_iseq))
			return fail(w);
		const struct rec_rb_body *b = body_of(w, iseq, word(is, l->iseq_body));
		if (!b)
			return fail(w);
		uint64_t enc = b->encoded, size = b->size;
		int32_t at = pc >= enc && !((pc - enc) & 7) && (pc - enc) / 8 <= size
				     ? (int32_t)((pc - enc) / 8) : -1;
		note_new(w, iseq, word(is, l->iseq_body));
		return push(w, iseq, at, finish);
	}
	if (iseq || (flags & l->frame_magic_mask) != l->frame_magic_cfunc)
		return 0;
	uint64_t me = word(env, (size_t)(l->ep_me_cref - lo) * 8);
	uint8_t m[24];
	if (rd(w, me, m, sizeof(m)) || !is_imemo(w, word(m, 0), l->imemo_ment))
		return fail(w);
	note_new(w, me, word(m, l->me_def) | CFUNC_KEY);
	return push(w, me, -1, PERF_RB_FRAME_CFUNC | finish);
}

/* The address of the thread's ruby_current_ec: 0 when it cannot be found. */
static uint64_t ec_slot(struct walker *w, uint64_t fs_base)
{
	struct rec_rb_proc *p = w->p;
	uint64_t got = p->bias + p->lib.ec_got, off, dtv, block;
	if (p->lib.tls_model == RB_TLS_INITIAL_EXEC)
		return rd_u64(w, got, &off) ? 0 : fs_base + off; /* the slot holds the whole offset */
	/* glibc: the TCB's second word is the dtv; entry i (16 bytes) holds module i's block */
	if (!p->modid && (rd_u64(w, got, &p->modid) || p->modid > 65536))
		p->modid = 0;
	if (!p->modid || rd_u64(w, fs_base + 8, &dtv) || rd_u64(w, dtv + p->modid * 16, &block) ||
	    !block || block == UINT64_MAX)
		return 0;
	return block + p->lib.ec_offset;
}

/* The VM stack's values in use, from its start to the current frame's sp (the frames'
 * own area comes after them, from the end down), read at once when they can be. */
static void read_values(struct walker *w, uint64_t stack, uint64_t sp, uint64_t cfp)
{
	w->values_at = stack;
	if (sp <= stack || sp > cfp)
		return;
	uint64_t n = sp - stack + 8 < VALUES_MAX ? sp - stack + 8 : VALUES_MAX;
	if (!rd(w, stack, w->values, (size_t)n))
		w->values_n = n;
}

/* The frames of the execution context ec, innermost first. */
static void walk_frames(struct walker *w, uint64_t ec)
{
	const struct rb_layout *l = w->l;
	uint8_t e[64], cf[CFP_BATCH * 64];
	if (l->cfp_size > 64 || (size_t)l->ec_cfp + 8 > sizeof(e) || rd(w, ec, e, sizeof(e))) {
		fail(w);
		return;
	}
	uint64_t stack = word(e, l->ec_vm_stack), size = word(e, l->ec_vm_stack_size);
	uint64_t cfp = word(e, l->ec_cfp);
	uint64_t end = stack + size * 8;
	/* The frames fill the VM stack from its end down, whole ones. */
	if (size > MAX_VM_STACK || end < stack || cfp < stack || cfp > end ||
	    (end - cfp) % l->cfp_size) {
		fail(w);
		return;
	}
	/* The outermost frame is the thread's dummy (the main thread's made a TOP iseq's by
	 * Init_VM): Ruby's backtrace starts one frame in from the end, and so does this. */
	uint64_t left = (end - cfp) / l->cfp_size;
	left = left ? left - 1 : 0;
	w->values_n = 0;
	if (left > MAX_CFP) {
		left = MAX_CFP;
		w->stack.h.flags |= PERF_RB_STACK_CUT;
	}
	while (left) {
		size_t k = left < CFP_BATCH ? (size_t)left : CFP_BATCH;
		if (rd(w, cfp, cf, k * l->cfp_size)) {
			fail(w);
			return;
		}
		if (!w->values_n) /* the first batch: the current frame's sp is in it */
			read_values(w, stack, word(cf, l->cfp_sp), cfp);
		for (size_t i = 0; i < k; i++)
			if (frame(w, cf + i * l->cfp_size))
				return;
		cfp += k * l->cfp_size;
		left -= k;
	}
}

int rec_rb_walk(struct rec_rb_proc *p, const struct rec_mem *mem,
		const struct rec_interp_thread *th, rec_interp_emit_fn emit, void *arg)
{
	if (!p->scratch && !(p->scratch = malloc(sizeof(struct walker))))
		return -ENOMEM;
	struct walker *w = p->scratch;
	w->p = p;
	w->l = p->lib.layout;
	w->mem = mem;
	w->nfresh = 0;
	w->stack.h = (struct perf_rb_stack_head){ .magic = PERF_RB_MAGIC, .type = PERF_RB_STACK,
						 .pid = th->pid, .tid = th->tid };
	uint64_t ec = 0;
	if (!*th->cache)
		*th->cache = ec_slot(w, th->regs->fs_base);
	if (!*th->cache || rd_u64(w, *th->cache, &ec))
		w->stack.h.flags |= PERF_RB_STACK_READ_FAILED;
	else if (ec) /* a thread that never ran Ruby has none: an empty stack */
		walk_frames(w, ec);
	for (size_t i = 0; i < w->nfresh; i++) {
		uint64_t a = w->fresh[i][0], b = w->fresh[i][1];
		int r = b & CFUNC_KEY ? emit_cfunc(w, a, b, emit, arg) : emit_iseq(w, a, b, emit, arg);
		if (r)
			return r;
	}
	return emit(&w->stack, sizeof(w->stack.h) + w->stack.h.nframes * sizeof(w->stack.f[0]), arg);
}
