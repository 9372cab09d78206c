/*
 * The Python frames of a sample, read at the sample's instant: a BPF_PROG_TYPE_PERF_EVENT
 * program that tally record attaches to each of its sampling events. It runs in the
 * overflow handler, before the kernel writes the CPU sample, walks the sampled thread's
 * CPython 3.8-3.13 frames with bpf_probe_read_user and writes a stack record (and, the first
 * time a code object is used, a code record) to the CPU's bpf-output event. It always
 * returns 1, so the CPU sample is always kept; nothing in the target is ever stopped.
 * Records: perf/interp_records.h; configuration: python_abi.h. Compiled by clang -target
 * bpf (Makefile).
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

#include "perf/interp_records.h"
#include "python_abi.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL"; /* bpf_probe_read_user is GPL-only */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct py_proc_cfg);
} procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_settings);
} settings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} events SEC(".maps");

struct stack_buf {
	struct perf_py_stack_head h;
	struct perf_py_frame f[PERF_PY_MAX_FRAMES];
};

#define CODE_DATA_MAX (PY_QUALNAME_MAX + PY_FILENAME_MAX + PY_LINETABLE_MAX)

struct code_buf {
	struct perf_py_code_head h;
	__u8 data[CODE_DATA_MAX];
} __attribute__((packed));

/* The code objects whose code record was written, per process. The key holds the name and
 * line-table pointers too: a code object freed and another made at its address gets a
 * record of its own. Evicted entries only mean a second record for the same code. */
struct seen_key {
	__u32 pid, gen;
	__u64 code, qualname, linetable;
};

/* New code objects one sample writes records of at most; the others' come with later
 * samples. */
#define PY_NEW_CODES 128

/* Raw text of a non-ASCII str read at most (bytes), converted to UTF-8 by text_step. */
#define RAW_MAX 1024

/* Blocks read from the target. Twice PY_BLOCK: a field at an offset masked below PY_BLOCK
 * stays inside, which is what the verifier checks. */
struct blocks {
	__u8 frame[2 * PY_BLOCK];
	__u8 code[2 * PY_BLOCK];
	__u8 str[2 * PY_BLOCK];
	__u8 raw[RAW_MAX + 8];
	struct seen_key newcode[PY_NEW_CODES]; /* the stack's code objects new to the process */
	__u32 nnew;                 /* how many */
	__u32 t_next, t_nchars, t_kind, t_out, t_cap, t_cut; /* text_step's counters */
};

/* Per-CPU scratch, one map each: a per-CPU value is at most 32 KiB. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stack_buf);
} stack_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct code_buf);
} code_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct blocks);
} block_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_counters);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct seen_key);
	__type(value, __u8);
} seen SEC(".maps");

/* The thread state found for a thread at its last sample, tried first: one read to check
 * that it still is that thread's, instead of a walk of the process's thread states. */
struct thread_key {
	__u32 pid, gen, tid, pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct thread_key);
	__type(value, __u64);
} threads SEC(".maps");

static __always_inline __u64 field_u64(const __u8 *blk, __u16 off)
{
	__u64 v;
	__builtin_memcpy(&v, blk + (off & (PY_BLOCK - 1)), sizeof(v));
	return v;
}

static __always_inline __u32 field_u32(const __u8 *blk, __u16 off)
{
	__u32 v;
	__builtin_memcpy(&v, blk + (off & (PY_BLOCK - 1)), sizeof(v));
	return v;
}

static __always_inline __s32 field_s32(const __u8 *blk, __u16 off)
{
	__s32 v;
	__builtin_memcpy(&v, blk + (off & (PY_BLOCK - 1)), sizeof(v));
	return v;
}

static __always_inline __u8 field_u8(const __u8 *blk, __u16 off)
{
	return blk[off & (PY_BLOCK - 1)];
}

static __always_inline int read_u64(__u64 addr, __u64 *v)
{
	return bpf_probe_read_user(v, sizeof(*v), (const void *)addr);
}

/* What the callbacks share (they see it through bpf_loop's context pointer). */
struct walk {
	struct bpf_perf_event_data *ctx;
	const struct py_proc_cfg *cfg;
	struct stack_buf *stack;
	struct code_buf *code;
	struct blocks *b;
	__u64 interp, tstate, frame;
	/* the thread's id in its own pid namespace (PY_CFG_THREAD_POINTER: its FS base) */
	__u64 native_tid;
	/* An address the walk passed (comes_back()) */
	__u64 mark;
	__u32 since, span;
	__u32 pid, tid, n;
	__u16 flags;
	__u16 done;
};

/* Whether a walk comes back to an address it passed, called once a step with the step's
 * address: Brent's cycle finding, the address kept (mark) moved on after span steps, span
 * doubling each time, so that a cycle is met within about twice its start and length. A
 * live list never comes back: its structures lie. */
static __always_inline int comes_back(struct walk *w, __u64 addr)
{
	if (addr == w->mark)
		return 1;
	if (++w->since >= w->span) {
		w->mark = addr;
		w->since = 0;
		w->span *= 2;
	}
	return 0;
}

/* One step of the search for the sampled thread's PyThreadState: the next thread state of
 * the interpreter, or the next interpreter when its list ends. Lists that come back end it
 * with the read-failed flag. */
static long thread_step(__u32 i, void *arg)
{
	struct walk *w = arg;
	const struct py_proc_cfg *c = w->cfg;
	__u64 v;
	if (comes_back(w, w->tstate ? w->tstate : w->interp)) {
		w->flags |= PERF_PY_STACK_READ_FAILED;
		return 1;
	}
	if (!w->tstate) {
		if (read_u64(w->interp + c->interp_next, &v) || !v)
			return 1;
		w->interp = v;
		if (read_u64(v + c->interp_threads_head, &w->tstate))
			return 1;
		return 0;
	}
	if (read_u64(w->tstate + c->tstate_native_tid, &v))
		return 1;
	if (v == w->native_tid) {
		w->done = 1;
		return 1;
	}
	if (read_u64(w->tstate + c->tstate_next, &w->tstate))
		w->tstate = 0;
	return 0;
}

static __always_inline void count_run(__u64 ns)
{
	__u32 zero = 0;
	struct py_counters *k = bpf_map_lookup_elem(&counters, &zero);
	if (k) {
		k->runs++;
		k->run_ns += ns;
	}
}

static __always_inline void count(__u32 which)
{
	__u32 zero = 0;
	struct py_counters *k = bpf_map_lookup_elem(&counters, &zero);
	if (!k)
		return;
	if (which == 0)
		k->stacks++;
	else if (which == 1)
		k->codes++;
	else if (which == 2)
		k->output_lost++;
	else
		k->no_thread++;
}

/* UTF-8 of one character of a PEP 393 string (kind 1, 2 or 4 bytes each, at blocks.raw),
 * bounded by the room left in dst; a surrogate code point (never in text read from source
 * or a path decoded strictly) becomes U+FFFD. The counters live in the map value, not on
 * the stack: the verifier then does not follow each step's exact values, and the steps'
 * states converge. Branch-free where it can be, for the same reason. */
struct text {
	struct blocks *b;
	__u8 *dst;
};

static long text_step(__u32 i, void *arg)
{
	struct text *t = arg;
	struct blocks *b = t->b;
	__u32 k = b->t_next;
	if (k >= b->t_nchars)
		return 1;
	b->t_next = k + 1;
	__u32 kind = b->t_kind, cp;
	__builtin_memcpy(&cp, b->raw + ((k * kind) & (RAW_MAX - 1)), 4);
	cp &= kind == 1 ? 0xff : kind == 2 ? 0xffff : 0xffffffff;
	if ((cp >= 0xd800 && cp < 0xe000) || cp > 0x10ffff)
		cp = 0xfffd;
	/* (limit - cp) >> 31 is 1 when cp > limit (cp is below 2^31). */
	__u32 ge2 = (0x7fu - cp) >> 31, ge3 = (0x7ffu - cp) >> 31, ge4 = (0xffffu - cp) >> 31;
	__u32 len = 1 + ge2 + ge3 + ge4;
	__u32 one = cp, two = (0xc0 | cp >> 6) | (0x80 | (cp & 0x3f)) << 8,
	      three = (0xe0 | cp >> 12) | (0x80 | (cp >> 6 & 0x3f)) << 8 |
		      (0x80 | (cp & 0x3f)) << 16,
	      four = (0xf0 | cp >> 18) | (0x80 | (cp >> 12 & 0x3f)) << 8 |
		     (0x80 | (cp >> 6 & 0x3f)) << 16 | (0x80 | (cp & 0x3f)) << 24;
	__u32 bytes = (one & -(1 - ge2)) | (two & -(ge2 - ge3)) | (three & -(ge3 - ge4)) |
		      (four & -ge4);
	__u32 out = b->t_out;
	if (out + len > b->t_cap) {
		b->t_cut = PERF_PY_CODE_CUT;
		return 1;
	}
	__builtin_memcpy(t->dst + (out & (PY_FILENAME_MAX - 1)), &bytes, 4);
	b->t_out = out + len;
	return 0;
}

/* A str's text as UTF-8 into dst, at most cap bytes (cut at a character): a compact ASCII
 * object's bytes, another compact one's cached UTF-8 when something asked for it, else its
 * characters converted here. The length, with *cut set when it was cut, or to
 * PERF_PY_CODE_READ_FAILED (and 0 bytes) when it was unreadable or not a str: a pointer to
 * anything else is never read as text. */
static __always_inline __u32 read_str(const struct py_proc_cfg *c, struct blocks *b, __u8 *dst,
				      __u32 cap, __u64 obj, __u16 *cut)
{
	__u16 hdr = c->str_ascii_data, full = c->str_compact_data;
	if (hdr > PY_BLOCK)
		hdr = PY_BLOCK;
	if (full > PY_BLOCK)
		full = PY_BLOCK;
	if (!obj || bpf_probe_read_user(b->str, hdr, (const void *)obj) ||
	    field_u64(b->str, 8) != c->str_type)
		goto unreadable;
	__u32 state = field_u32(b->str, c->str_state);
	if (!(state >> c->state_compact_bit & 1))
		goto unreadable;
	__u64 n = field_u64(b->str, c->str_length), src = obj + c->str_ascii_data;
	if (!(state >> c->state_ascii_bit & 1)) {
		if (bpf_probe_read_user(b->str, full, (const void *)obj))
			goto unreadable;
		if (!field_u64(b->str, c->str_utf8)) {
			__u32 kind = state >> c->state_kind_shift & 7;
			if (kind != 1 && kind != 2 && kind != 4)
				goto unreadable;
			__u32 most = (RAW_MAX - 4) / kind;
			b->t_nchars = n < most ? (__u32)n : most;
			b->t_kind = kind;
			b->t_next = b->t_out = b->t_cut = 0;
			b->t_cap = cap;
			if (bpf_probe_read_user(b->raw, (b->t_nchars * kind) & (RAW_MAX - 1),
						(const void *)(obj + c->str_compact_data)))
				goto unreadable;
			struct text t = { .b = b, .dst = dst };
			bpf_loop(RAW_MAX, text_step, &t, 0);
			*cut |= b->t_cut | (b->t_nchars < n ? PERF_PY_CODE_CUT : 0);
			__u32 out = b->t_out;
			return out < cap ? out : cap;
		}
		n = field_u64(b->str, c->str_utf8_len);
		src = field_u64(b->str, c->str_utf8);
	}
	__u64 whole = n;
	if (n > cap) {
		n = cap;
		*cut |= PERF_PY_CODE_CUT;
	}
	if (bpf_probe_read_user(dst, n & (PY_FILENAME_MAX * 2 - 1), (const void *)src))
		goto unreadable;
	/* Cut UTF-8 ends before the character it cut into. */
	if (n < whole) {
		for (int k = 0; k < 4 && n && (dst[(n - 1) & (PY_FILENAME_MAX - 1)] & 0xc0) == 0x80; k++)
			n--;
		if (n && dst[(n - 1) & (PY_FILENAME_MAX - 1)] >= 0xc0)
			n--;
	}
	return (__u32)n;
unreadable:
	*cut |= PERF_PY_CODE_READ_FAILED;
	return 0;
}

/* The line table, a bytes object, into dst: its length, *cut set as read_str sets it. */
static __always_inline __u32 read_linetable(const struct py_proc_cfg *c, __u8 *blk, __u8 *dst,
					    __u64 obj, __u16 *cut)
{
	__u64 n, type;
	if (!obj || read_u64(obj + 8, &type) || type != c->bytes_type ||
	    read_u64(obj + c->bytes_size, &n)) {
		*cut |= PERF_PY_CODE_READ_FAILED;
		return 0;
	}
	if (n > PY_LINETABLE_MAX) {
		n = PY_LINETABLE_MAX;
		*cut |= PERF_PY_CODE_CUT;
	}
	if (bpf_probe_read_user(dst, n & (PY_LINETABLE_MAX * 2 - 1),
				(const void *)(obj + c->bytes_sval))) {
		*cut |= PERF_PY_CODE_READ_FAILED;
		return 0;
	}
	return (__u32)n;
}

/* The code record of the code object at addr, whose fixed part is in blk. 0 when written. */
static __always_inline int emit_code(struct walk *w, __u64 addr, const __u8 *blk)
{
	const struct py_proc_cfg *c = w->cfg;
	struct code_buf *cb = w->code;
	__u16 cut = 0;
	__u32 q = read_str(c, w->b, cb->data, PY_QUALNAME_MAX,
			   field_u64(blk, c->code_qualname), &cut);
	if (q > PY_QUALNAME_MAX)
		q = PY_QUALNAME_MAX;
	__u32 f = read_str(c, w->b, cb->data + q, PY_FILENAME_MAX,
			   field_u64(blk, c->code_filename), &cut);
	if (f > PY_FILENAME_MAX)
		f = PY_FILENAME_MAX;
	__u32 l = read_linetable(c, w->b->str, cb->data + q + f,
				 field_u64(blk, c->code_linetable), &cut);
	if (l > PY_LINETABLE_MAX)
		l = PY_LINETABLE_MAX;
	cb->h.magic = PERF_PY_MAGIC;
	cb->h.type = PERF_PY_CODE;
	cb->h.flags = cut | c->code_flags;
	cb->h.pid = w->pid;
	cb->h.reserved = 0;
	cb->h.code = addr;
	cb->h.firstlineno = (__s32)field_u32(blk, c->code_firstlineno);
	cb->h.qualname_len = (__u16)q;
	cb->h.filename_len = (__u16)f;
	cb->h.linetable_len = l;
	__u64 size = sizeof(cb->h) + q + f + l;
	if (size > sizeof(*cb))
		size = sizeof(*cb);
	long r = bpf_perf_event_output(w->ctx, &events, BPF_F_CURRENT_CPU, cb, size);
	count(r ? 2 : 1);
	return r ? -1 : 0;
}

static __always_inline void seen_key_of(const struct walk *w, __u64 addr, const __u8 *blk,
					struct seen_key *k)
{
	const struct py_proc_cfg *c = w->cfg;
	k->pid = w->pid;
	k->gen = c->gen;
	k->code = addr;
	k->qualname = field_u64(blk, c->code_qualname);
	k->linetable = field_u64(blk, c->code_linetable);
}

/* Whether the code object at addr (fixed part in blk) needs its code record: the first
 * time this process's stacks use it. It is marked at once, so that it is listed once. */
static __always_inline int code_is_new(struct walk *w, __u64 addr, const __u8 *blk,
				       struct seen_key *k)
{
	seen_key_of(w, addr, blk, k);
	if (bpf_map_lookup_elem(&seen, k))
		return 0;
	__u8 one = 1;
	bpf_map_update_elem(&seen, k, &one, BPF_ANY);
	return 1;
}

/* The code record of the next new code object of the stack (frame_step listed them), in
 * a pass of its own: the verifier then checks the string reading apart from the walk. A
 * record that could not be written is unmarked, to be tried again at a later sample. */
static long code_step(__u32 i, void *arg)
{
	struct walk *w = arg;
	__u32 k = w->b->nnew; /* from the map value: see struct text */
	if (!k || k > PY_NEW_CODES)
		return 1;
	w->b->nnew = --k;
	struct seen_key *key = &w->b->newcode[k & (PY_NEW_CODES - 1)];
	__u16 cs = w->cfg->code_size;
	if (cs > PY_BLOCK)
		cs = PY_BLOCK;
	if (bpf_probe_read_user(w->b->code, cs, (const void *)key->code) ||
	    emit_code(w, key->code, w->b->code))
		bpf_map_delete_elem(&seen, key);
	return 0;
}

/* Whether the frame just read (in b->frame) is its activation's first: 3.11 marks it;
 * 3.12 and 3.13 put a frame owned by the C stack below it, looked at here (its owner
 * byte alone). */
static __always_inline __u8 is_entry_frame(const struct walk *w, const struct py_proc_cfg *c)
{
	if (!(c->flags & PY_CFG_CSTACK_ENTRY))
		return field_u8(w->b->frame, c->frame_is_entry);
	__u8 owner;
	if (!w->frame ||
	    bpf_probe_read_user(&owner, 1, (const void *)(w->frame + c->frame_owner)))
		return 0;
	return owner == c->owner_cstack;
}

/* Records the frame of code (in b->code) at lasti (-1: none) as the stack's next: 0, or 1
 * (the walk ends) when the stack is full. A code object new to the process is noted for
 * its code record. */
static __always_inline long push_frame(struct walk *w, struct blocks *b, __u64 code,
				       __s32 lasti, __u8 fflags)
{
	__u32 n = w->n;
	if (n >= PERF_PY_MAX_FRAMES)
		return 1;
	__u32 k = b->nnew;
	if (k < PY_NEW_CODES &&
	    code_is_new(w, code, b->code, &b->newcode[k & (PY_NEW_CODES - 1)]))
		b->nnew = k + 1;
	struct perf_py_frame *f = &w->stack->f[n];
	f->code = code;
	f->lasti = lasti;
	f->fflags = fflags;
	w->n = n + 1;
	return 0;
}

/* A PyFrameObject (3.8-3.10) just read into b->frame: its own activation's, at f_lasti. */
static __always_inline long object_frame(struct walk *w, const struct py_proc_cfg *c,
					 struct blocks *b, __u16 cs)
{
	__u64 code = field_u64(b->frame, c->frame_code);
	__s32 lasti = field_s32(b->frame, c->frame_lasti);
	w->frame = field_u64(b->frame, c->frame_previous);
	if (!code || bpf_probe_read_user(b->code, cs, (const void *)code) ||
	    field_u64(b->code, 8) != c->code_type) {
		w->flags |= PERF_PY_STACK_READ_FAILED;
		return 1;
	}
	if (lasti < 0)
		lasti = -1;
	else if (c->flags & PY_CFG_LASTI_BYTES)
		lasti /= 2;
	return push_frame(w, b, code, lasti, PERF_PY_FRAME_ENTRY);
}

/* One frame, innermost first: read it and its code object, skip it when incomplete (its
 * first instruction not reached yet, as CPython's own walks skip it, unless it is its
 * activation's entry frame: replay counts activations by their entry frames) or owned by
 * the C stack (3.12+: not Python's, CPython's walks skip it too), record it; 3.8-3.10's
 * frame objects by object_frame(). */
static long frame_step(__u32 i, void *arg)
{
	struct walk *w = arg;
	const struct py_proc_cfg *c = w->cfg;
	struct blocks *b = w->b;
	if (!w->frame)
		return 1;
	/* A chain that comes back: none of its frames is kept, since where the lie began is
	 * not known. */
	if (comes_back(w, w->frame)) {
		w->flags |= PERF_PY_STACK_READ_FAILED;
		w->n = 0;
		return 1;
	}
	if (w->n >= PERF_PY_MAX_FRAMES) {
		w->flags |= PERF_PY_STACK_CUT;
		return 1;
	}
	__u16 fs = c->frame_size, cs = c->code_size;
	if (fs > PY_BLOCK)
		fs = PY_BLOCK;
	if (cs > PY_BLOCK)
		cs = PY_BLOCK;
	if (bpf_probe_read_user(b->frame, fs, (const void *)w->frame)) {
		w->flags |= PERF_PY_STACK_READ_FAILED;
		return 1;
	}
	if (c->flags & PY_CFG_FRAME_OBJECTS)
		return object_frame(w, c, b, cs);
	__u64 code = field_u64(b->frame, c->frame_code);
	__u64 instr = field_u64(b->frame, c->frame_prev_instr);
	__u8 owner = field_u8(b->frame, c->frame_owner);
	w->frame = field_u64(b->frame, c->frame_previous);
	if (c->flags & PY_CFG_CSTACK_ENTRY && owner == c->owner_cstack)
		return 0;
	__u8 is_entry = is_entry_frame(w, c);
	if (!code || bpf_probe_read_user(b->code, cs, (const void *)code) ||
	    field_u64(b->code, 8) != c->code_type) {
		w->flags |= PERF_PY_STACK_READ_FAILED;
		return 1;
	}
	__u64 first = code + c->code_adaptive;
	__u64 traceable = first + 2 * (__u64)field_u32(b->code, c->code_firsttraceable);
	int incomplete = owner != c->owner_generator && instr < traceable;
	if (incomplete && !is_entry)
		return 0;
	return push_frame(w, b, code,
			  incomplete || instr < first ? -1 : (__s32)((instr - first) / 2),
			  is_entry ? PERF_PY_FRAME_ENTRY : 0);
}

static __always_inline void find_thread(struct walk *w)
{
	const struct py_proc_cfg *c = w->cfg;
	struct thread_key k = { .pid = w->pid, .gen = c->gen, .tid = w->tid };
	__u64 *last = bpf_map_lookup_elem(&threads, &k), v;
	if (last && !read_u64(*last + c->tstate_native_tid, &v) && v == w->native_tid) {
		w->tstate = *last;
		w->done = 1;
		return;
	}
	bpf_loop(c->max_threads, thread_step, w, 0);
	if (w->done)
		bpf_map_update_elem(&threads, &k, &w->tstate, BPF_ANY);
}

/* The thread's innermost frame: through its _PyCFrame (3.11, 3.12) or not (3.8-3.10's
 * tstate->frame, 3.13's tstate->current_frame). */
static __always_inline int current_frame(struct walk *w, const struct py_proc_cfg *c)
{
	__u64 at;
	if (read_u64(w->tstate + c->tstate_frame, &at))
		return -1;
	if (!(c->flags & PY_CFG_CFRAME)) {
		w->frame = at;
		return 0;
	}
	return !at || read_u64(at + c->cframe_current_frame, &w->frame) ? -1 : 0;
}

/* Whether the sampled thread holds its interpreter's GIL: the GIL is locked and its last
 * holder is the thread's state. take_gil and drop_gil set the two together, under the
 * GIL's mutex, so a thread sampled outside them reads them consistent. The stack's GIL
 * flags say so when the GIL could be read. */
static __always_inline void read_gil(struct walk *w, const struct py_proc_cfg *c)
{
	__u64 gil = c->runtime + c->gil_runtime, interp, holder;
	__u32 locked;
	if (!c->gil_runtime &&
	    (!c->gil_interp || read_u64(w->tstate + c->tstate_interp, &interp) ||
	     read_u64(interp + c->gil_interp, &gil) || !gil))
		return;
	if (bpf_probe_read_user(&locked, sizeof(locked), (const void *)(gil + c->gil_locked)) ||
	    read_u64(gil + c->gil_last_holder, &holder))
		return;
	w->flags |= PERF_PY_STACK_GIL_KNOWN |
		    (locked == 1 && holder == w->tstate ? PERF_PY_STACK_GIL_HELD : 0);
}

static __always_inline void capture(struct walk *w)
{
	const struct py_proc_cfg *c = w->cfg;
	w->b->nnew = 0;
	if (read_u64(c->runtime + c->runtime_interp_head, &w->interp) || !w->interp ||
	    read_u64(w->interp + c->interp_threads_head, &w->tstate)) {
		w->flags |= PERF_PY_STACK_READ_FAILED;
	} else {
		find_thread(w);
		if (w->done)
			read_gil(w, c);
		if (!w->done)
			count(3);
		else if (current_frame(w, c))
			w->flags |= PERF_PY_STACK_READ_FAILED;
		else {
			w->mark = w->since = 0;
			w->span = 1;
			bpf_loop(PERF_PY_MAX_FRAMES + 1, frame_step, w, 0);
		}
	}
	bpf_loop(PY_NEW_CODES, code_step, w, 0);
	struct stack_buf *sb = w->stack;
	__u32 n = w->n;
	if (n > PERF_PY_MAX_FRAMES)
		n = PERF_PY_MAX_FRAMES;
	sb->h.magic = PERF_PY_MAGIC;
	sb->h.type = PERF_PY_STACK;
	sb->h.flags = w->flags;
	sb->h.pid = w->pid;
	sb->h.tid = w->tid;
	sb->h.nframes = n;
	sb->h.reserved = 0;
	__u64 size = sizeof(sb->h) + (__u64)n * sizeof(sb->f[0]);
	if (size > sizeof(*sb))
		size = sizeof(*sb);
	count(bpf_perf_event_output(w->ctx, &events, BPF_F_CURRENT_CPU, sb, size) ? 2 : 0);
}

SEC("perf_event")
int python_stack(struct bpf_perf_event_data *ctx)
{
	__u64 start = bpf_ktime_get_ns();
	__u32 zero = 0;
	struct py_settings *st = bpf_map_lookup_elem(&settings, &zero);
	struct bpf_pidns_info ns;
	if (!st || bpf_get_ns_current_pid_tgid(st->pidns_dev, st->pidns_ino, &ns, sizeof(ns)))
		return 1;
	__u32 pid = ns.tgid;
	const struct py_proc_cfg *c = bpf_map_lookup_elem(&procs, &pid);
	struct stack_buf *stack = bpf_map_lookup_elem(&stack_scratch, &zero);
	struct code_buf *code = bpf_map_lookup_elem(&code_scratch, &zero);
	struct blocks *b = bpf_map_lookup_elem(&block_scratch, &zero);
	if (!c || !stack || !code || !b)
		return 1;
	struct walk w = { .ctx = ctx, .cfg = c, .stack = stack, .code = code, .b = b,
			  .pid = pid, .tid = ns.pid,
			  .native_tid = ns.pid, .span = 1 };
	/* The one kernel field read (PY_CFG_THREAD_POINTER): the task's FS base, which glibc
	 * and musl set to the thread's pthread_t (CLONE_SETTLS, arch_prctl) and never change;
	 * its offset in task_struct is the running kernel's (tally record reads its BTF). */
	if (c->flags & PY_CFG_THREAD_POINTER) {
		if (!st->task_fsbase ||
		    bpf_probe_read_kernel(&w.native_tid, sizeof(w.native_tid),
					  (const void *)(bpf_get_current_task() + st->task_fsbase)))
			return 1;
	} else if ((c->pidns_ino != st->pidns_ino || c->pidns_dev != st->pidns_dev) &&
		   !bpf_get_ns_current_pid_tgid(c->pidns_dev, c->pidns_ino, &ns, sizeof(ns))) {
		w.native_tid = ns.pid;
	}
	capture(&w);
	count_run(bpf_ktime_get_ns() - start);
	return 1;
}
