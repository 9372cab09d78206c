/*
 * The Python frames of a sample, read at the sample's instant: a BPF_PROG_TYPE_PERF_EVENT
 * program that tally record attaches to each of its sampling events. It runs in the
 * overflow handler, before the kernel writes the CPU sample, walks the sampled thread's
 * CPython 3.11 frames with bpf_probe_read_user and writes a stack record (and, the first
 * time a code object is used, a code record) to the CPU's bpf-output event. It always
 * returns 1, so the CPU sample is always kept; nothing in the target is ever stopped.
 * Payloads and configuration: python_abi.h. Compiled by clang -target bpf (Makefile).
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

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
	struct py_stack_head h;
	struct py_frame_rec f[PY_MAX_FRAMES];
};

#define CODE_DATA_MAX (PY_QUALNAME_MAX + PY_FILENAME_MAX + PY_LINETABLE_MAX)

struct code_buf {
	struct py_code_head h;
	__u8 data[CODE_DATA_MAX];
} __attribute__((packed));

/* Blocks read from the target. Twice PY_BLOCK: a field at an offset masked below PY_BLOCK
 * stays inside, which is what the verifier checks. */
struct blocks {
	__u8 frame[2 * PY_BLOCK];
	__u8 code[2 * PY_BLOCK];
	__u8 str[2 * PY_BLOCK];
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

/* The code objects whose code record was written, per process. The key holds the name and
 * line-table pointers too: a code object freed and another made at its address gets a
 * record of its own. Evicted entries only mean a second record for the same code. */
struct seen_key {
	__u32 pid, pad;
	__u64 code, qualname, linetable;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct seen_key);
	__type(value, __u8);
} seen SEC(".maps");

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
	__u64 native_tid; /* the thread's id in its own pid namespace */
	__u32 pid, tid, n;
	__u16 flags;
	__u16 done;
};

/* One step of the search for the sampled thread's PyThreadState: the next thread state of
 * the interpreter, or the next interpreter when its list ends. */
static long thread_step(__u32 i, void *arg)
{
	struct walk *w = arg;
	const struct py_proc_cfg *c = w->cfg;
	__u64 v;
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

/* A str's UTF-8 into dst (at most cap bytes): compact ASCII objects hold it, other compact
 * ones their cached UTF-8 when something asked for it. Else nothing is written and the
 * string counts as cut. The length, or 0 with *cut set. */
static __always_inline __u32 read_str(const struct py_proc_cfg *c, __u8 *blk, __u8 *dst,
				      __u32 cap, __u64 obj, __u16 *cut)
{
	__u16 hdr = c->str_compact_data;
	if (hdr > PY_BLOCK)
		hdr = PY_BLOCK;
	if (!obj || bpf_probe_read_user(blk, hdr, (const void *)obj)) {
		*cut |= PY_CODE_STRING_CUT;
		return 0;
	}
	__u32 state = field_u32(blk, c->str_state);
	__u64 n, src;
	if ((state >> c->state_compact_bit & 1) && (state >> c->state_ascii_bit & 1)) {
		n = field_u64(blk, c->str_length);
		src = obj + c->str_ascii_data;
	} else if ((state >> c->state_compact_bit & 1) && field_u64(blk, c->str_utf8)) {
		n = field_u64(blk, c->str_utf8_len);
		src = field_u64(blk, c->str_utf8);
	} else {
		*cut |= PY_CODE_STRING_CUT;
		return 0;
	}
	if (n > cap) {
		n = cap;
		*cut |= PY_CODE_STRING_CUT;
	}
	if (bpf_probe_read_user(dst, n & (PY_FILENAME_MAX * 2 - 1), (const void *)src)) {
		*cut |= PY_CODE_STRING_CUT;
		return 0;
	}
	return (__u32)n;
}

static __always_inline __u32 read_linetable(const struct py_proc_cfg *c, __u8 *blk, __u8 *dst,
					    __u64 obj, __u16 *cut)
{
	__u64 n;
	if (!obj || read_u64(obj + c->bytes_size, &n)) {
		*cut |= PY_CODE_STRING_CUT;
		return 0;
	}
	if (n > PY_LINETABLE_MAX) {
		n = PY_LINETABLE_MAX;
		*cut |= PY_CODE_STRING_CUT;
	}
	if (bpf_probe_read_user(dst, n & (PY_LINETABLE_MAX * 2 - 1),
				(const void *)(obj + c->bytes_sval))) {
		*cut |= PY_CODE_STRING_CUT;
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
	__u32 q = read_str(c, w->b->str, cb->data, PY_QUALNAME_MAX,
			   field_u64(blk, c->code_qualname), &cut);
	if (q > PY_QUALNAME_MAX)
		q = PY_QUALNAME_MAX;
	__u32 f = read_str(c, w->b->str, cb->data + q, PY_FILENAME_MAX,
			   field_u64(blk, c->code_filename), &cut);
	if (f > PY_FILENAME_MAX)
		f = PY_FILENAME_MAX;
	__u32 l = read_linetable(c, w->b->str, cb->data + q + f,
				 field_u64(blk, c->code_linetable), &cut);
	if (l > PY_LINETABLE_MAX)
		l = PY_LINETABLE_MAX;
	cb->h.magic = PY_PAYLOAD_MAGIC;
	cb->h.type = PY_PAYLOAD_CODE;
	cb->h.flags = cut;
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

/* Writes the code record of a code object the first time this process's stacks use it. */
static __always_inline void note_code(struct walk *w, __u64 addr, const __u8 *blk)
{
	const struct py_proc_cfg *c = w->cfg;
	struct seen_key k = { .pid = w->pid, .code = addr,
			      .qualname = field_u64(blk, c->code_qualname),
			      .linetable = field_u64(blk, c->code_linetable) };
	if (bpf_map_lookup_elem(&seen, &k))
		return;
	__u8 one = 1;
	if (!emit_code(w, addr, blk))
		bpf_map_update_elem(&seen, &k, &one, BPF_ANY);
}

/* One frame, innermost first: read it and its code object, skip it when incomplete (its
 * first instruction not reached yet, as CPython's own walks skip it, unless it is its
 * activation's entry frame: replay counts activations by their entry frames), record it. */
static long frame_step(__u32 i, void *arg)
{
	struct walk *w = arg;
	const struct py_proc_cfg *c = w->cfg;
	struct blocks *b = w->b;
	if (!w->frame)
		return 1;
	if (w->n >= PY_MAX_FRAMES) {
		w->flags |= PY_STACK_CUT;
		return 1;
	}
	__u16 fs = c->frame_size, cs = c->code_size;
	if (fs > PY_BLOCK)
		fs = PY_BLOCK;
	if (cs > PY_BLOCK)
		cs = PY_BLOCK;
	if (bpf_probe_read_user(b->frame, fs, (const void *)w->frame)) {
		w->flags |= PY_STACK_READ_FAILED;
		return 1;
	}
	__u64 code = field_u64(b->frame, c->frame_code);
	__u64 instr = field_u64(b->frame, c->frame_prev_instr);
	__u8 is_entry = field_u8(b->frame, c->frame_is_entry);
	__u8 owner = field_u8(b->frame, c->frame_owner);
	w->frame = field_u64(b->frame, c->frame_previous);
	if (!code || bpf_probe_read_user(b->code, cs, (const void *)code) ||
	    field_u64(b->code, 8) != c->code_type) {
		w->flags |= PY_STACK_READ_FAILED;
		return 1;
	}
	__u64 first = code + c->code_adaptive;
	__u64 traceable = first + 2 * (__u64)field_u32(b->code, c->code_firsttraceable);
	int incomplete = owner != c->owner_generator && instr < traceable;
	if (incomplete && !is_entry)
		return 0;
	note_code(w, code, b->code);
	__u32 n = w->n;
	if (n >= PY_MAX_FRAMES)
		return 1;
	struct py_frame_rec *f = &w->stack->f[n];
	f->code = code;
	f->lasti = incomplete || instr < first ? -1 : (__s32)((instr - first) / 2);
	f->fflags = is_entry ? PY_FRAME_IS_ENTRY : 0;
	w->n = n + 1;
	return 0;
}

static __always_inline void capture(struct walk *w)
{
	const struct py_proc_cfg *c = w->cfg;
	__u64 cframe;
	if (read_u64(c->runtime + c->runtime_interp_head, &w->interp) || !w->interp ||
	    read_u64(w->interp + c->interp_threads_head, &w->tstate)) {
		w->flags |= PY_STACK_READ_FAILED;
	} else {
		bpf_loop(c->max_threads, thread_step, w, 0);
		if (!w->done)
			count(3);
		else if (read_u64(w->tstate + c->tstate_cframe, &cframe) || !cframe ||
			 read_u64(cframe + c->cframe_current_frame, &w->frame))
			w->flags |= PY_STACK_READ_FAILED;
		else
			bpf_loop(PY_MAX_FRAMES + 1, frame_step, w, 0);
	}
	struct stack_buf *sb = w->stack;
	__u32 n = w->n;
	if (n > PY_MAX_FRAMES)
		n = PY_MAX_FRAMES;
	sb->h.magic = PY_PAYLOAD_MAGIC;
	sb->h.type = PY_PAYLOAD_STACK;
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
			  .native_tid = ns.pid };
	if ((c->pidns_ino != st->pidns_ino || c->pidns_dev != st->pidns_dev) &&
	    !bpf_get_ns_current_pid_tgid(c->pidns_dev, c->pidns_ino, &ns, sizeof(ns)))
		w.native_tid = ns.pid;
	capture(&w);
	return 1;
}
