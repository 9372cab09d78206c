/*
 * The user-space walk of a thread's CPython frames (python_walk.h). Step for step the BPF
 * program's (bpf/python_stack.bpf.c: find the thread state, its current frame, each frame
 * and its code object), so that both write the same stacks; without the verifier, loops
 * are plain loops, bounded by the same caps. Fields are read from blocks of at most
 * PY_BLOCK bytes; a field the configuration places outside its block reads as zero.
 */
#include "record/python_walk.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

/* Code records one walk writes at most: the others come with later walks. */
#define NEW_CODES 128
/* The seen table: slots (a power of two), and how full it gets before it starts over. */
#define SEEN_SLOTS 65536
#define SEEN_MOST (SEEN_SLOTS / 2)
/* Raw text of a non-ASCII str read at most (bytes), as the program. */
#define RAW_MAX 1024

struct block {
	uint8_t b[PY_BLOCK];
	size_t n; /* bytes read */
};

struct walker {
	const struct py_proc_cfg *c;
	const struct rec_mem *mem;
	struct rec_pyseen *seen;
	uint32_t pid;
	struct {
		struct perf_py_stack_head h;
		struct perf_py_frame f[PERF_PY_MAX_FRAMES];
	} stack;
	struct {
		struct perf_py_code_head h;
		uint8_t data[PY_QUALNAME_MAX + PY_FILENAME_MAX + PY_LINETABLE_MAX];
	} __attribute__((packed)) code;
	uint64_t newcode[NEW_CODES][3]; /* the new code objects' seen keys */
	size_t nnew;
	/* An address the walk passed (comes_back()) */
	uint64_t mark;
	uint32_t since, span;
};

/* Whether a walk comes back to an address it passed, called once a step with the step's
 * address, as the program's: Brent's cycle finding (the address kept moved on after span
 * steps, span doubling each time). A live list never comes back: its structures lie. */
static bool comes_back(struct walker *w, uint64_t addr)
{
	if (addr == w->mark)
		return true;
	if (++w->since >= w->span) {
		w->mark = addr;
		w->since = 0;
		w->span *= 2;
	}
	return false;
}

static void restart_cycles(struct walker *w)
{
	w->mark = 0;
	w->since = 0;
	w->span = 1;
}

void rec_pyseen_free(struct rec_pyseen *s)
{
	free(s->keys);
	memset(s, 0, sizeof(*s));
}

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

static int rd_block(const struct walker *w, uint64_t addr, uint16_t size, struct block *blk)
{
	blk->n = size < PY_BLOCK ? size : PY_BLOCK;
	return rd(w, addr, blk->b, blk->n);
}

static uint64_t get(const struct block *blk, uint16_t off, size_t n)
{
	uint64_t v = 0;
	if ((size_t)off + n <= blk->n)
		memcpy(&v, blk->b + off, n);
	return v;
}

/* Whether the code object (its address, name and line-table pointers) needs its code
 * record: the first time this process's stacks name it. Marked at once. */
static int seen_before(struct rec_pyseen *s, uint64_t code, uint64_t qualname,
		       uint64_t linetable)
{
	if (!s->keys || s->n >= SEEN_MOST) {
		free(s->keys);
		s->n = 0;
		s->cap = SEEN_SLOTS;
		if (!(s->keys = calloc(SEEN_SLOTS * 3, sizeof(*s->keys))))
			return 1; /* no table: the record is not written twice, nor at all */
	}
	uint64_t h = (code ^ qualname * 31 ^ linetable * 131) * 0x9e3779b97f4a7c15ull;
	for (size_t i = h >> 48;; i = (i + 1) & (SEEN_SLOTS - 1)) {
		uint64_t *k = &s->keys[i * 3];
		if (k[0] == code && k[1] == qualname && k[2] == linetable)
			return 1;
		if (!k[0]) {
			k[0] = code;
			k[1] = qualname;
			k[2] = linetable;
			s->n++;
			return 0;
		}
	}
}

static void unsee(struct rec_pyseen *s, uint64_t code, uint64_t qualname, uint64_t linetable)
{
	for (size_t i = 0; s->keys && i < s->cap; i++) {
		uint64_t *k = &s->keys[i * 3];
		if (k[0] == code && k[1] == qualname && k[2] == linetable) {
			/* A tombstone that matches nothing: the probe chain stays whole. */
			k[1] = k[2] = UINT64_MAX;
			k[0] = 1;
			return;
		}
	}
}

static size_t utf8_of(uint32_t cp, uint8_t *out)
{
	if ((cp >= 0xd800 && cp < 0xe000) || cp > 0x10ffff)
		cp = 0xfffd;
	if (cp < 0x80) {
		out[0] = (uint8_t)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (uint8_t)(0xc0 | cp >> 6);
		out[1] = (uint8_t)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (uint8_t)(0xe0 | cp >> 12);
		out[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (uint8_t)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (uint8_t)(0xf0 | cp >> 18);
	out[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (uint8_t)(0x80 | (cp & 0x3f));
	return 4;
}

/* A PEP 393 string's characters (kind bytes each) as UTF-8, at most cap bytes. */
static size_t convert(const uint8_t *raw, size_t nchars, unsigned kind, uint8_t *dst,
		      size_t cap, uint16_t *cut)
{
	size_t out = 0;
	for (size_t k = 0; k < nchars; k++) {
		uint32_t cp = 0;
		memcpy(&cp, raw + k * kind, kind);
		uint8_t u[4];
		size_t len = utf8_of(cp, u);
		if (out + len > cap) {
			*cut |= PERF_PY_CODE_CUT;
			break;
		}
		memcpy(dst + out, u, len);
		out += len;
	}
	return out;
}

/* A str's text as UTF-8 into dst, at most cap bytes (cut at a character), as the program
 * reads it: compact ASCII bytes, a compact object's cached UTF-8, or its characters
 * converted. The length; *cut set when cut or unreadable. */
static size_t read_str(const struct walker *w, uint64_t obj, uint8_t *dst, size_t cap,
		       uint16_t *cut)
{
	const struct py_proc_cfg *c = w->c;
	struct block s;
	/* The ASCII header first: a short ASCII str may end before a non-ASCII one's header
	 * would, at the end of a mapping. */
	if (rd_block(w, obj, c->str_ascii_data, &s) || get(&s, 8, 8) != c->str_type)
		goto unreadable;
	uint32_t state = (uint32_t)get(&s, c->str_state, 4);
	if (!(state >> (c->state_compact_bit & 31) & 1))
		goto unreadable;
	uint64_t n = get(&s, c->str_length, 8), src = obj + c->str_ascii_data;
	if (!(state >> (c->state_ascii_bit & 31) & 1)) {
		if (rd_block(w, obj, c->str_compact_data, &s))
			goto unreadable;
		if (!get(&s, c->str_utf8, 8)) {
			unsigned kind = state >> (c->state_kind_shift & 31) & 7;
			if (kind != 1 && kind != 2 && kind != 4)
				goto unreadable;
			uint8_t raw[RAW_MAX];
			size_t most = RAW_MAX / kind, nchars = n < most ? (size_t)n : most;
			if (rd(w, obj + c->str_compact_data, raw, nchars * kind))
				goto unreadable;
			if (nchars < n)
				*cut |= PERF_PY_CODE_CUT;
			return convert(raw, nchars, kind, dst, cap, cut);
		}
		n = get(&s, c->str_utf8_len, 8);
		src = get(&s, c->str_utf8, 8);
	}
	uint64_t whole = n;
	if (n > cap) {
		n = cap;
		*cut |= PERF_PY_CODE_CUT;
	}
	if (n && rd(w, src, dst, (size_t)n))
		goto unreadable;
	if (n < whole) { /* cut UTF-8 ends before the character it cut into */
		while (n && (dst[n - 1] & 0xc0) == 0x80)
			n--;
		if (n && dst[n - 1] >= 0xc0)
			n--;
	}
	return (size_t)n;
unreadable:
	*cut |= PERF_PY_CODE_READ_FAILED;
	return 0;
}

/* The line table, a bytes object, into dst: its length, *cut set as read_str sets it. */
static size_t read_linetable(const struct walker *w, uint64_t obj, uint8_t *dst,
			     uint16_t *cut)
{
	uint64_t n, type;
	if (!obj || rd_u64(w, obj + 8, &type) || type != w->c->bytes_type ||
	    rd_u64(w, obj + w->c->bytes_size, &n))
		goto unreadable;
	if (n > PY_LINETABLE_MAX) {
		n = PY_LINETABLE_MAX;
		*cut |= PERF_PY_CODE_CUT;
	}
	if (n && rd(w, obj + w->c->bytes_sval, dst, (size_t)n))
		goto unreadable;
	return (size_t)n;
unreadable:
	*cut |= PERF_PY_CODE_READ_FAILED;
	return 0;
}

/* The code record of the code object whose seen key is k: emitted, or unmarked to be tried
 * again at a later walk. */
static int emit_code(struct walker *w, const uint64_t *k, rec_interp_emit_fn emit, void *arg)
{
	const struct py_proc_cfg *c = w->c;
	struct block blk;
	uint64_t addr = k[0];
	if (rd_block(w, addr, c->code_size, &blk)) {
		unsee(w->seen, k[0], k[1], k[2]);
		return 0;
	}
	uint16_t cut = 0;
	size_t q = read_str(w, get(&blk, c->code_qualname, 8), w->code.data, PY_QUALNAME_MAX,
			    &cut);
	size_t f = read_str(w, get(&blk, c->code_filename, 8), w->code.data + q,
			    PY_FILENAME_MAX, &cut);
	size_t l = read_linetable(w, get(&blk, c->code_linetable, 8), w->code.data + q + f, &cut);
	w->code.h = (struct perf_py_code_head){
		.magic = PERF_PY_MAGIC, .type = PERF_PY_CODE,
		.flags = (uint16_t)(cut | c->code_flags), .pid = w->pid, .code = addr,
		.firstlineno = (int32_t)get(&blk, c->code_firstlineno, 4),
		.qualname_len = (uint16_t)q, .filename_len = (uint16_t)f,
		.linetable_len = (uint32_t)l,
	};
	int r = emit(&w->code, sizeof(w->code.h) + q + f + l, arg);
	if (r)
		unsee(w->seen, k[0], k[1], k[2]);
	return r;
}

/* Records the frame of the code object in blk (at code) as the stack's next: 0, or 1
 * when the stack is full. */
static int push_frame(struct walker *w, uint64_t code, const struct block *blk, int32_t lasti,
		      uint32_t fflags)
{
	uint32_t n = w->stack.h.nframes;
	if (n >= PERF_PY_MAX_FRAMES) {
		w->stack.h.flags |= PERF_PY_STACK_CUT;
		return 1;
	}
	if (w->nnew < NEW_CODES) {
		uint64_t *k = w->newcode[w->nnew];
		k[0] = code;
		k[1] = get(blk, w->c->code_qualname, 8);
		k[2] = get(blk, w->c->code_linetable, 8);
		if (!seen_before(w->seen, k[0], k[1], k[2]))
			w->nnew++;
	}
	w->stack.f[n] = (struct perf_py_frame){ .code = code, .lasti = lasti, .fflags = fflags };
	w->stack.h.nframes = n + 1;
	return 0;
}

/* Reads the code object at code into blk: 0 when it is one (its type PyCode_Type). */
static int read_code(struct walker *w, uint64_t code, struct block *blk)
{
	if (!code || rd_block(w, code, w->c->code_size, blk) ||
	    get(blk, 8, 8) != w->c->code_type) {
		w->stack.h.flags |= PERF_PY_STACK_READ_FAILED;
		return -1;
	}
	return 0;
}

/* One frame at *frame, innermost first, *frame then its caller's: 0 to go on, 1 when the
 * walk ends. As frame_step and object_frame in the program. */
static int frame_step(struct walker *w, uint64_t *frame)
{
	const struct py_proc_cfg *c = w->c;
	struct block fb, cb;
	/* A chain that comes back: none of its frames is kept, since where the lie began is
	 * not known. */
	if (comes_back(w, *frame)) {
		w->stack.h.flags |= PERF_PY_STACK_READ_FAILED;
		w->stack.h.nframes = 0;
		return 1;
	}
	if (rd_block(w, *frame, c->frame_size, &fb)) {
		w->stack.h.flags |= PERF_PY_STACK_READ_FAILED;
		return 1;
	}
	uint64_t code = get(&fb, c->frame_code, 8);
	*frame = get(&fb, c->frame_previous, 8);
	if (c->flags & PY_CFG_FRAME_OBJECTS) {
		int32_t lasti = (int32_t)get(&fb, c->frame_lasti, 4);
		if (read_code(w, code, &cb))
			return 1;
		lasti = lasti < 0 ? -1 : c->flags & PY_CFG_LASTI_BYTES ? lasti / 2 : lasti;
		return push_frame(w, code, &cb, lasti, PERF_PY_FRAME_ENTRY);
	}
	uint64_t instr = get(&fb, c->frame_prev_instr, 8);
	uint8_t owner = (uint8_t)get(&fb, c->frame_owner, 1);
	if (c->flags & PY_CFG_CSTACK_ENTRY && owner == c->owner_cstack)
		return 0;
	uint8_t is_entry = 0;
	if (!(c->flags & PY_CFG_CSTACK_ENTRY))
		is_entry = (uint8_t)get(&fb, c->frame_is_entry, 1);
	else if (*frame && !rd(w, *frame + c->frame_owner, &owner, 1))
		is_entry = owner == c->owner_cstack;
	if (read_code(w, code, &cb))
		return 1;
	uint64_t first = code + c->code_adaptive;
	uint64_t traceable = first + 2 * get(&cb, c->code_firsttraceable, 4);
	int incomplete = owner != c->owner_generator && instr < traceable;
	if (incomplete && !is_entry)
		return 0;
	int32_t lasti = incomplete || instr < first || (instr - first) / 2 > INT32_MAX
				? -1 : (int32_t)((instr - first) / 2);
	return push_frame(w, code, &cb, lasti, is_entry ? PERF_PY_FRAME_ENTRY : 0);
}

/* The thread state whose id field holds native_tid: the hint first, then every thread
 * state of every interpreter, max_threads of them at most. 0 when none. */
static uint64_t find_thread(struct walker *w, uint64_t interp, uint64_t hint,
			    uint64_t native_tid)
{
	const struct py_proc_cfg *c = w->c;
	uint64_t v, t;
	if (hint && !rd_u64(w, hint + c->tstate_native_tid, &v) && v == native_tid)
		return hint;
	if (rd_u64(w, interp + c->interp_threads_head, &t))
		return 0;
	for (uint32_t i = 0; i < c->max_threads; i++) {
		if (comes_back(w, t ? t : interp)) {
			w->stack.h.flags |= PERF_PY_STACK_READ_FAILED;
			return 0;
		}
		if (!t) {
			if (rd_u64(w, interp + c->interp_next, &interp) || !interp ||
			    rd_u64(w, interp + c->interp_threads_head, &t))
				return 0;
			continue;
		}
		if (rd_u64(w, t + c->tstate_native_tid, &v))
			return 0;
		if (v == native_tid)
			return t;
		if (rd_u64(w, t + c->tstate_next, &t))
			return 0;
	}
	return 0;
}

/* Whether the thread holds its interpreter's GIL (locked, and the thread state its last
 * holder), in the stack's flags when the GIL could be read; as the program's read_gil. */
static void read_gil(struct walker *w, uint64_t tstate)
{
	const struct py_proc_cfg *c = w->c;
	uint64_t gil = c->runtime + c->gil_runtime, interp, holder;
	uint32_t locked;
	if (!c->gil_runtime &&
	    (!c->gil_interp || rd_u64(w, tstate + c->tstate_interp, &interp) ||
	     rd_u64(w, interp + c->gil_interp, &gil) || !gil))
		return;
	if (rd(w, gil + c->gil_locked, &locked, sizeof(locked)) ||
	    rd_u64(w, gil + c->gil_last_holder, &holder))
		return;
	w->stack.h.flags |= PERF_PY_STACK_GIL_KNOWN |
			    (locked == 1 && holder == tstate ? PERF_PY_STACK_GIL_HELD : 0);
}

/* The thread's innermost frame, through its _PyCFrame (3.11, 3.12) or not. */
static int current_frame(const struct walker *w, uint64_t tstate, uint64_t *frame)
{
	uint64_t at;
	if (rd_u64(w, tstate + w->c->tstate_frame, &at))
		return -1;
	if (!(w->c->flags & PY_CFG_CFRAME)) {
		*frame = at;
		return 0;
	}
	return rd_u64(w, at + w->c->cframe_current_frame, frame);
}

int rec_pywalk(const struct py_proc_cfg *cfg, const struct rec_mem *mem,
	       struct rec_pyseen *seen, uint32_t pid, uint32_t tid, uint64_t native_tid,
	       uint64_t *tstate, rec_interp_emit_fn emit, void *arg)
{
	static __thread struct walker w; /* 34 KiB: not on the stack */
	w.c = cfg;
	w.mem = mem;
	w.seen = seen;
	w.pid = pid;
	w.nnew = 0;
	w.stack.h = (struct perf_py_stack_head){ .magic = PERF_PY_MAGIC, .type = PERF_PY_STACK,
						 .pid = pid, .tid = tid };
	uint64_t interp, frame;
	if (rd_u64(&w, cfg->runtime + cfg->runtime_interp_head, &interp) || !interp) {
		w.stack.h.flags |= PERF_PY_STACK_READ_FAILED;
	} else {
		/* A thread without a thread state (one that never ran Python) gets an empty
		 * stack, as from the program: its sample keeps its native frames. */
		restart_cycles(&w);
		*tstate = find_thread(&w, interp, *tstate, native_tid);
		if (*tstate)
			read_gil(&w, *tstate);
		restart_cycles(&w);
		if (*tstate && current_frame(&w, *tstate, &frame))
			w.stack.h.flags |= PERF_PY_STACK_READ_FAILED;
		else if (*tstate)
			for (uint32_t i = 0; frame && i <= PERF_PY_MAX_FRAMES; i++)
				if (frame_step(&w, &frame))
					break;
	}
	for (size_t i = 0; i < w.nnew; i++) {
		int r = emit_code(&w, w.newcode[i], emit, arg);
		if (r)
			return r;
	}
	return emit(&w.stack, sizeof(w.stack.h) + w.stack.h.nframes * sizeof(w.stack.f[0]), arg);
}


/* A process's reader: its configuration and the code objects written. */
struct python_interp {
	struct py_proc_cfg cfg;
	struct rec_pyseen seen;
};

static int interp_walk(void *self, const struct rec_mem *mem, const struct rec_interp_thread *th,
		       rec_interp_emit_fn emit, void *arg)
{
	struct python_interp *p = self;
	/* 3.8-3.10 know a thread by its pthread_t, which on x86-64 is its FS base */
	uint64_t native = p->cfg.flags & PY_CFG_THREAD_POINTER ? th->regs->fs_base : th->native_tid;
	return rec_pywalk(&p->cfg, mem, &p->seen, th->pid, th->tid, native, th->cache, emit, arg);
}

static void interp_regen(void *self) { rec_pyseen_free(&((struct python_interp *)self)->seen); }

static void interp_free(void *self)
{
	interp_regen(self);
	free(self);
}

int rec_python_interp(const struct py_proc_cfg *cfg, struct rec_interp_proc *out)
{
	static const struct rec_interp_ops ops = { interp_walk, interp_regen, interp_free };
	struct python_interp *p = calloc(1, sizeof(*p));
	if (!p)
		return err_set(-ENOMEM, "out of memory");
	p->cfg = *cfg;
	*out = (struct rec_interp_proc){ &ops, p };
	return 0;
}
