/*
 * The walk of a thread's Lua frames (lua_walk.h). Finding the running state costs reads
 * of candidate words: a word is a candidate when it looks like a heap pointer, and one
 * found not to be a state is remembered (a direct-mapped cache per process), so that a
 * thread's stack, which mostly holds the same words from sample to sample, is checked
 * once. The registers come first: the VM keeps L in one while it runs.
 */
#include "record/lua_walk.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/uio.h>

/* Constants of a prototype looked at for names at most (a big main chunk has more). */
#define K_READ 1024
/* Proto records one walk writes at most: the others come with later walks. */
#define NEW_PROTOS 64
/* The stack is read a page at a time, so that no read runs past its mapping's end. */
#define PAGE 4096
/* Where user-space heap pointers lie on x86-64 (above the first pages, below the top). */
#define LOWEST 0x10000ull
#define HIGHEST 0x800000000000ull

struct state {
	uint64_t addr, g, ci, stack, top;
	uint8_t status;
};

/* A state's Lua stack read at most (bytes): its frames' function values, in one read. */
#define STACK_WINDOW 16384

struct walker {
	struct rec_lua_proc *p;
	const struct lua_layout *lay;
	const struct rec_mem *mem;
	const struct rec_interp_thread *th;
	struct {
		struct perf_lua_stack_head h;
		struct perf_lua_frame f[PERF_LUA_MAX_FRAMES];
	} stack;
	struct {
		struct perf_lua_proto_head h;
		uint8_t data[PERF_LUA_SOURCE_MAX + PERF_LUA_LINEINFO_MAX + PERF_LUA_ABS_MAX * 8 +
			     PERF_LUA_CODE_MAX * 4 + PERF_LUA_NAMES_MAX];
	} __attribute__((packed)) proto;
	/* a prototype's k, locvars or upvalues array, as read */
	uint8_t array[K_READ * 16];
	uint64_t newproto[NEW_PROTOS][3];
	size_t nnew;
	struct state states[REC_LUA_MAX_STATES];
	size_t nstates;
	uint64_t page[PAGE / 8];
	uint8_t window[STACK_WINDOW]; /* the Lua stack of the state being walked */
	uint64_t window_at;
	size_t window_n;
	uint64_t mark;
	uint32_t since, span;
};

static int rd(const struct walker *w, uint64_t addr, void *buf, size_t n)
{
	if (!addr || addr + n < addr)
		return -1;
	return w->mem->read(w->mem->arg, addr, buf, n);
}

static uint64_t get(const uint8_t *b, size_t have, uint16_t off, size_t n)
{
	uint64_t v = 0;
	if ((size_t)off + n <= have)
		memcpy(&v, b + off, n);
	return v;
}

/* Brent's cycle finding over a chain's addresses, as python_walk.c's. */
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

static size_t not_state_slot(uint64_t v)
{
	return (size_t)((v >> 3) * 0x9e3779b97f4a7c15ull >> 54) & (REC_LUA_NOT_STATE_SLOTS - 1);
}

/* Whether the word v is a lua_State of a global_State whose main thread points back at
 * that global_State; its fields in *s. */
static bool is_state(struct walker *w, uint64_t v, struct state *s)
{
	const struct lua_layout *l = w->lay;
	struct rec_lua_proc *p = w->p;
	if (v < LOWEST || v >= HIGHEST || (v & 7))
		return false;
	size_t slot = not_state_slot(v);
	if (p->not_state[slot] == v)
		return false;
	uint8_t b[64];
	size_t have = l->state_ci + 8, whole = (size_t)l->state_stack + 8;
	if (rd(w, v, b, whole) || get(b, whole, 8, 1) != LUA_TAG_THREAD)
		goto no;
	uint64_t g = get(b, have, l->state_l_g, 8);
	if (!g || (g & 7))
		goto no;
	if (g != p->g) {
		uint64_t m;
		uint8_t mb[64];
		if (rd(w, g + l->g_mainthread, &m, 8) || !m)
			goto no;
		if (m != v && (rd(w, m, mb, have) || get(mb, have, 8, 1) != LUA_TAG_THREAD ||
			       get(mb, have, l->state_l_g, 8) != g))
			goto no;
		p->g = g;
		p->mainthread = m;
	}
	*s = (struct state){ .addr = v, .g = g, .ci = get(b, have, l->state_ci, 8),
			     .stack = get(b, whole, l->state_stack, 8),
			     .top = get(b, whole, l->state_top, 8),
			     .status = (uint8_t)get(b, have, l->state_status, 1) };
	return true;
no:
	p->not_state[slot] = v;
	return false;
}

/* Whether a state runs Lua code now: LUA_OK (a yielded or dead coroutine has another
 * status) and a CallInfo above its base one (a coroutine that has not started, or has
 * finished, has none). Such states nest: each one's frames are those of a resume (or a
 * call) made by the next. */
static bool is_active(const struct walker *w, const struct state *s)
{
	return s->status == 0 && s->ci && s->ci != s->addr + w->lay->state_base_ci;
}

/* Adds the word v when it is an active state not yet listed; whether the list is done (the
 * main thread reached, or full). */
static bool consider(struct walker *w, uint64_t v)
{
	struct state s;
	for (size_t i = 0; i < w->nstates; i++)
		if (w->states[i].addr == v)
			return false;
	if (!is_state(w, v, &s) || !is_active(w, &s))
		return false;
	if (w->nstates && s.g != w->states[0].g)
		return false; /* another Lua universe in the same process */
	w->states[w->nstates++] = s;
	return v == w->p->mainthread || w->nstates == REC_LUA_MAX_STATES;
}

/* The active states of the thread, innermost first: the registers' then the stack's. */
static void find_states(struct walker *w)
{
	const struct user_regs_struct *r = w->th->regs;
	const uint64_t regs[] = { r->rbx, r->rbp, r->r12, r->r13, r->r14, r->r15, r->rdi,
				  r->rsi, r->rdx, r->rcx, r->r8, r->r9, r->r10, r->r11, r->rax };
	w->nstates = 0;
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		if (consider(w, regs[i]))
			return;
	uint64_t at = r->rsp & ~7ull, end = at + REC_LUA_SCAN_BYTES;
	while (at < end) {
		uint64_t next = (at & ~(uint64_t)(PAGE - 1)) + PAGE;
		size_t n = (size_t)(next - at);
		if (rd(w, at, w->page, n))
			break; /* the stack's end */
		for (size_t k = 0; k < n / 8; k++)
			if (consider(w, w->page[k]))
				return;
		at = next;
	}
	if (w->nstates && w->states[w->nstates - 1].addr != w->p->mainthread)
		w->stack.h.flags |= PERF_LUA_STACK_CUT;
}

static void seen_reset(struct rec_lua_proc *p)
{
	memset(p->seen, 0, sizeof(p->seen));
	p->nseen = 0;
}

void rec_lua_regen(struct rec_lua_proc *p)
{
	seen_reset(p);
}

/* Whether the prototype (its address, source and lineinfo pointers) had its record
 * written; marked at once. A table half full starts over. */
static bool seen_before(struct rec_lua_proc *p, const uint64_t *k)
{
	if (p->nseen >= REC_LUA_SEEN_SLOTS / 2)
		seen_reset(p);
	uint64_t h = (k[0] ^ k[1] * 31 ^ k[2] * 131) * 0x9e3779b97f4a7c15ull;
	for (size_t i = h >> 50;; i = (i + 1) & (REC_LUA_SEEN_SLOTS - 1)) {
		uint64_t *s = p->seen[i];
		if (s[0] == k[0] && s[1] == k[1] && s[2] == k[2])
			return true;
		if (!s[0] && !s[1] && !s[2]) {
			memcpy(s, k, 3 * sizeof(*k));
			p->nseen++;
			return false;
		}
	}
}

static void unsee(struct rec_lua_proc *p, const uint64_t *k)
{
	for (size_t i = 0; i < REC_LUA_SEEN_SLOTS; i++) {
		uint64_t *s = p->seen[i];
		if (s[0] == k[0] && s[1] == k[1] && s[2] == k[2]) {
			s[0] = 1; /* a tombstone that matches no prototype: the chain stays whole */
			s[1] = s[2] = UINT64_MAX;
			return;
		}
	}
}

/* A TString's bytes into dst, at most cap: the length; *flags marked when cut or
 * unreadable. */
static size_t read_string(const struct walker *w, uint64_t ts, uint8_t *dst, size_t cap,
			  uint16_t *flags)
{
	const struct lua_layout *l = w->lay;
	uint8_t b[32];
	if (rd(w, ts, b, l->ts_contents))
		goto unreadable;
	uint8_t tt = (uint8_t)get(b, l->ts_contents, 8, 1);
	uint64_t n;
	if (tt == LUA_TAG_SHRSTR)
		n = get(b, l->ts_contents, l->ts_shrlen, 1);
	else if (tt == LUA_TAG_LNGSTR)
		n = get(b, l->ts_contents, l->ts_lnglen, 8);
	else
		goto unreadable;
	if (n > cap) {
		n = cap;
		*flags |= PERF_LUA_PROTO_CUT;
	}
	if (n && rd(w, ts + l->ts_contents, dst, (size_t)n))
		goto unreadable;
	return (size_t)n;
unreadable:
	*flags |= PERF_LUA_PROTO_READ_FAILED;
	return 0;
}

/* Reads an array of count elements of size bytes at addr into dst, at most cap elements:
 * how many were read. */
static uint32_t read_array(const struct walker *w, uint64_t addr, int64_t count, size_t size,
			   uint32_t cap, uint8_t *dst, uint16_t *flags)
{
	if (count <= 0)
		return 0;
	uint32_t n = count > cap ? cap : (uint32_t)count;
	if (count > cap)
		*flags |= PERF_LUA_PROTO_CUT;
	if (rd(w, addr, dst, n * size)) {
		*flags |= PERF_LUA_PROTO_READ_FAILED;
		return 0;
	}
	return n;
}

/* The names block of a proto record (interp_records.h) being written at d, at most cap
 * bytes, and its counts. */
struct names {
	uint8_t *d;
	size_t n, cap;
	uint16_t nkstr, nlocvars, nupvals;
	uint16_t *flags;
};

/* Appends head (hlen bytes) and the TString at ts, cut to PERF_LUA_NAME_MAX: false when
 * it does not fit, or the string is unreadable (nothing appended). */
static bool add_name(const struct walker *w, struct names *nm, const void *head, size_t hlen,
		     uint64_t ts)
{
	uint8_t buf[PERF_LUA_NAME_MAX];
	uint16_t f = 0;
	size_t len = read_string(w, ts, buf, sizeof(buf), &f);
	if (f & PERF_LUA_PROTO_READ_FAILED)
		return false;
	if (nm->n + hlen + 1 + len > nm->cap) {
		*nm->flags |= PERF_LUA_PROTO_CUT;
		return false;
	}
	if (hlen)
		memcpy(nm->d + nm->n, head, hlen);
	nm->d[nm->n + hlen] = (uint8_t)len;
	memcpy(nm->d + nm->n + hlen + 1, buf, len);
	nm->n += hlen + 1 + len;
	return true;
}

/* The names a called function may go by: string constants, locals, upvalues. */
static void read_names(struct walker *w, const uint8_t *b, struct names *nm)
{
	const struct lua_layout *l = w->lay;
	uint8_t *a = w->array;
	int32_t count = (int32_t)get(b, l->p_size, l->p_sizek, 4);
	uint32_t n = read_array(w, get(b, l->p_size, l->p_k, 8), count, l->tvalue_size, K_READ,
				a, nm->flags);
	for (uint32_t i = 0; i < n && nm->nkstr < PERF_LUA_KSTR_MAX; i++) {
		uint8_t tag = a[i * l->tvalue_size + 8];
		uint64_t ts;
		memcpy(&ts, a + i * l->tvalue_size, 8);
		if ((tag & LUA_TAG_TYPE_MASK) == LUA_TAG_SHRSTR && (tag & LUA_TAG_COLLECTABLE) &&
		    add_name(w, nm, &i, 4, ts))
			nm->nkstr++;
	}
	count = (int32_t)get(b, l->p_size, l->p_sizelocvars, 4);
	n = read_array(w, get(b, l->p_size, l->p_locvars, 8), count, l->locvar_size,
		       PERF_LUA_LOCVARS_MAX, a, nm->flags);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t ts;
		int32_t pcs[2];
		memcpy(&ts, a + i * l->locvar_size, 8);
		memcpy(&pcs[0], a + i * l->locvar_size + l->locvar_startpc, 4);
		memcpy(&pcs[1], a + i * l->locvar_size + l->locvar_endpc, 4);
		if (!add_name(w, nm, pcs, 8, ts))
			break; /* locals count by position: one missing shifts the rest */
		nm->nlocvars++;
	}
	count = (int32_t)get(b, l->p_size, l->p_sizeupvalues, 4);
	n = read_array(w, get(b, l->p_size, l->p_upvalues, 8), count, l->upvaldesc_size,
		       PERF_LUA_UPVALS_MAX, a, nm->flags);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t ts;
		memcpy(&ts, a + i * l->upvaldesc_size, 8);
		if (!add_name(w, nm, "", 0, ts))
			break; /* upvalues count by position too */
		nm->nupvals++;
	}
}

/* The record of the prototype keyed k: emitted, or unmarked to be tried again. */
static int emit_proto(struct walker *w, const uint64_t *k, rec_interp_emit_fn emit, void *arg)
{
	const struct lua_layout *l = w->lay;
	uint8_t b[256];
	if (rd(w, k[0], b, l->p_size)) {
		unsee(w->p, k);
		return 0;
	}
	uint16_t flags = 0;
	uint8_t *d = w->proto.data;
	size_t at = read_string(w, k[1], d, PERF_LUA_SOURCE_MAX, &flags), src = at;
	int32_t sizelineinfo = (int32_t)get(b, l->p_size, l->p_sizelineinfo, 4);
	uint32_t nline = read_array(w, k[2], sizelineinfo, 1, PERF_LUA_LINEINFO_MAX, d + at,
				    &flags);
	at += nline;
	int32_t sizeabs = (int32_t)get(b, l->p_size, l->p_sizeabslineinfo, 4);
	uint32_t nabs = read_array(w, get(b, l->p_size, l->p_abslineinfo, 8), sizeabs, 8,
				   PERF_LUA_ABS_MAX, d + at, &flags);
	at += (size_t)nabs * 8;
	int32_t sizecode = (int32_t)get(b, l->p_size, l->p_sizecode, 4);
	uint32_t ncode = read_array(w, get(b, l->p_size, l->p_code, 8), sizecode, 4,
				    PERF_LUA_CODE_MAX, d + at, &flags);
	at += (size_t)ncode * 4;
	struct names nm = { .d = d + at, .cap = PERF_LUA_NAMES_MAX, .flags = &flags };
	read_names(w, b, &nm);
	at += nm.n;
	w->proto.h = (struct perf_lua_proto_head){
		.magic = PERF_LUA_MAGIC, .type = PERF_LUA_PROTO, .flags = flags,
		.pid = w->stack.h.pid, .proto = k[0],
		.linedefined = (int32_t)get(b, l->p_size, l->p_linedefined, 4),
		.lastlinedefined = (int32_t)get(b, l->p_size, l->p_lastlinedefined, 4),
		.sizecode = (uint32_t)sizecode, .source_len = (uint16_t)src,
		.lineinfo_len = nline, .nabs = nabs, .ncode = ncode, .names_len = (uint32_t)nm.n,
		.nkstr = nm.nkstr, .nlocvars = nm.nlocvars, .nupvals = nm.nupvals,
	};
	int r = emit(&w->proto, sizeof(w->proto.h) + at, arg);
	if (r)
		unsee(w->p, k);
	return r;
}

static struct perf_lua_frame *push(struct walker *w)
{
	uint32_t n = w->stack.h.nframes;
	if (n >= PERF_LUA_MAX_FRAMES) {
		w->stack.h.flags |= PERF_LUA_STACK_CUT;
		return NULL;
	}
	w->stack.h.nframes = n + 1;
	w->stack.f[n] = (struct perf_lua_frame){ .pc = -1 };
	return &w->stack.f[n];
}

/* The pc of the innermost Lua frame, when a register of the stopped thread points into
 * its code (luaV_execute keeps its pc, the next instruction, in a local): the savedpc of
 * a running function is only stored before calls and errors. -1 when none does. */
static int32_t register_pc(const struct walker *w, uint64_t code, int64_t sizecode)
{
	const struct user_regs_struct *r = w->th->regs;
	const uint64_t regs[] = { r->rbx, r->rbp, r->r12, r->r13, r->r14, r->r15, r->rdi,
				  r->rsi, r->rdx, r->rcx, r->r8, r->r9, r->r10, r->r11, r->rax };
	if (sizecode <= 0)
		return -1;
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		if (regs[i] > code && regs[i] <= code + 4 * (uint64_t)sizecode &&
		    !((regs[i] - code) & 3))
			return (int32_t)((regs[i] - code) / 4 - 1);
	return -1;
}

/* A Lua frame: its prototype and pc; 0, or -1 when unreadable. */
static int lua_frame(struct walker *w, uint64_t closure, uint64_t savedpc, bool innermost,
		     struct perf_lua_frame *f)
{
	const struct lua_layout *l = w->lay;
	uint8_t cl[64], b[256];
	if (rd(w, closure, cl, l->cl_size) || get(cl, l->cl_size, 8, 1) != LUA_TAG_LCL)
		return -1;
	uint64_t proto = get(cl, l->cl_size, l->cl_proto, 8);
	if (rd(w, proto, b, l->p_size) || get(b, l->p_size, 8, 1) != LUA_TAG_PROTO)
		return -1;
	uint64_t code = get(b, l->p_size, l->p_code, 8);
	int64_t sizecode = (int32_t)get(b, l->p_size, l->p_sizecode, 4);
	f->addr = proto;
	if (savedpc > code && sizecode > 0 && savedpc <= code + 4 * (uint64_t)sizecode &&
	    !((savedpc - code) & 3))
		f->pc = (int32_t)((savedpc - code) / 4 - 1);
	int32_t reg = innermost ? register_pc(w, code, sizecode) : -1;
	if (reg >= 0) {
		f->pc = reg;
		f->fflags |= PERF_LUA_FRAME_PC_REG;
	}
	uint64_t k[3] = { proto, get(b, l->p_size, l->p_source, 8),
			  get(b, l->p_size, l->p_lineinfo, 8) };
	if (w->nnew < NEW_PROTOS && !seen_before(w->p, k))
		memcpy(w->newproto[w->nnew++], k, sizeof(k));
	return 0;
}

/* One CallInfo at ci as the stack's next frame; *ci then its caller's. 0 to go on, 1 at
 * the end of the state's chain or of the stack. */
static int ci_step(struct walker *w, const struct state *s, uint64_t *ci, bool innermost)
{
	const struct lua_layout *l = w->lay;
	uint8_t b[64], tv[16];
	if (*ci == s->addr + l->state_base_ci)
		return 1;
	struct perf_lua_frame *f = push(w);
	if (!f)
		return 1;
	if (comes_back(w, *ci) || rd(w, *ci, b, l->ci_size))
		goto failed;
	uint16_t status = (uint16_t)get(b, l->ci_size, l->ci_callstatus, 2);
	uint64_t func = get(b, l->ci_size, l->ci_func, 8);
	*ci = get(b, l->ci_size, l->ci_previous, 8);
	if (status & l->cist_tail)
		f->fflags |= PERF_LUA_FRAME_TAIL;
	if (func >= w->window_at && func - w->window_at <= w->window_n &&
	    w->window_n - (func - w->window_at) >= sizeof(tv))
		memcpy(tv, w->window + (func - w->window_at), sizeof(tv));
	else if (rd(w, func, tv, sizeof(tv)))
		goto failed;
	uint64_t value = get(tv, sizeof(tv), 0, 8);
	uint8_t tag = (uint8_t)get(tv, sizeof(tv), 8, 1);
	if (tag == (LUA_TAG_LCL | LUA_TAG_COLLECTABLE)) {
		if (lua_frame(w, value, get(b, l->ci_size, l->ci_savedpc, 8), innermost, f))
			goto failed;
	} else if (tag == LUA_TAG_LCF) {
		f->addr = value;
		f->fflags |= PERF_LUA_FRAME_C;
	} else if (tag == (LUA_TAG_CCL | LUA_TAG_COLLECTABLE)) {
		uint8_t cl[64];
		if (rd(w, value, cl, l->cl_size) || get(cl, l->cl_size, 8, 1) != LUA_TAG_CCL)
			goto failed;
		f->addr = get(cl, l->cl_size, l->cl_cfunc, 8);
		f->fflags |= PERF_LUA_FRAME_C;
	} else {
		goto failed;
	}
	return *ci ? 0 : 1;
failed:
	*f = (struct perf_lua_frame){ .pc = -1, .fflags = PERF_LUA_FRAME_FAILED };
	w->stack.h.flags |= PERF_LUA_STACK_READ_FAILED;
	return -1;
}

/* The state's Lua stack, up to its top (at most STACK_WINDOW bytes): where its frames'
 * function values lie, read once instead of once a frame. Nothing when unreadable. */
static void read_window(struct walker *w, const struct state *s)
{
	w->window_at = s->stack;
	w->window_n = 0;
	if (!s->stack || s->top <= s->stack)
		return;
	size_t n = s->top - s->stack > STACK_WINDOW ? STACK_WINDOW : (size_t)(s->top - s->stack);
	if (!rd(w, s->stack, w->window, n))
		w->window_n = n;
}

/* The frames of every found state, innermost first. */
static void walk_states(struct walker *w)
{
	for (size_t i = 0; i < w->nstates; i++) {
		const struct state *s = &w->states[i];
		uint64_t ci = s->ci;
		uint32_t before = w->stack.h.nframes;
		restart_cycles(w);
		read_window(w, s);
		int r = 0;
		for (uint32_t k = 0; !r && ci && k < PERF_LUA_MAX_FRAMES; k++)
			r = ci_step(w, s, &ci, i == 0 && k == 0);
		if (w->stack.h.nframes > before)
			w->stack.f[w->stack.h.nframes - 1].fflags |= PERF_LUA_FRAME_THREAD;
		if (r < 0 || (w->stack.h.flags & PERF_LUA_STACK_CUT))
			return;
	}
}

int rec_lua_walk(struct rec_lua_proc *p, const struct rec_mem *mem,
		 const struct rec_interp_thread *th, rec_interp_emit_fn emit, void *arg)
{
	static __thread struct walker w; /* 90 KiB: not on the stack */
	w.p = p;
	w.lay = p->lay;
	w.mem = mem;
	w.th = th;
	w.nnew = 0;
	w.stack.h = (struct perf_lua_stack_head){ .magic = PERF_LUA_MAGIC, .type = PERF_LUA_STACK,
						  .pid = th->pid, .tid = th->tid,
						  .release = p->lay->release };
	find_states(&w);
	if (!w.nstates)
		w.stack.h.flags |= PERF_LUA_STACK_NO_STATE;
	walk_states(&w);
	for (size_t i = 0; i < w.nnew; i++) {
		int r = emit_proto(&w, w.newproto[i], emit, arg);
		if (r)
			return r;
	}
	return emit(&w.stack, sizeof(w.stack.h) + w.stack.h.nframes * sizeof(w.stack.f[0]), arg);
}
