/*
 * The Lua frame source (lua.h). A stack record waits on its thread until that thread's
 * next sample takes it, as Python's do. Splicing, innermost first: each C function among
 * the Lua frames (string.rep, coroutine.resume, lua.c's pmain, a C module's function) is
 * matched to the native frame of the function that starts at its address (FDE starts:
 * a stripped lua5.4 names none of them), in order; the Lua frames between two such
 * anchors replace the first run of the interpreter's native frames between their native
 * frames (luaV_execute, luaD_call, lua_pcallk...: every frame of a module that defines
 * Lua's API), the outermost of the run taking them and the others dropped. Native frames
 * of other modules stay where they are (libc's memcpy above the Lua frame that ran it),
 * and the anchors are named as Lua names them (the name their caller's code gives:
 * "string.rep"), Lua frames likewise ("chain_a", "__index"; else "source:linedefined").
 * A run of Lua frames with no such run to take
 * them, or a C function with no frame of its own, keeps the sample native.
 */
#include "replay/sources/lua/lua.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/idmap.h"
#include "base/vec.h"
#include "lua/lua.h"
#include "profile/counters.h"
#include "replay/sources/lua/modules.h"
#include "replay/sources/lua/payload.h"

#define READ_FAILED_NAME "[read failed]"
/* A native frame the splice drops, one that keeps its name (none of ours). */
#define DROP (-2)
#define NATIVE (-1)

struct proto {
	uint32_t pid, epoch;
	uint64_t addr;
	const char *name, *file; /* name: "source:linedefined" or "main chunk" */
	int32_t linedefined;
	const int8_t *lineinfo;
	uint32_t nline;
	const int32_t *abs;
	uint32_t nabs;
	struct lua_names names; /* for the names of the functions it calls */
};

/* The name a call site gives the function it calls, once worked out: by the caller's
 * index + 1 (0: a free slot) and the call's pc. name NULL: none. */
struct callee {
	uint32_t proto;
	int32_t pc;
	const char *name;
};

struct proc {
	uint32_t pid, epoch;
};

struct thread {
	uint32_t pid;
	bool pending;
	uint16_t flags;
	uint64_t time;
	VEC(struct perf_lua_frame) frames;
};

/* Lua frames [first, end) of the sample, innermost first: one splice. */
struct segment {
	uint32_t first, end;
};

struct lua_source {
	const char *path;
	struct replay_lua_stats *stats, own;
	bool warned, any_record;
	struct arena strings;
	VEC(struct proto) protos;
	uint32_t *slots;
	size_t nslots;
	VEC(struct proc) procs;
	struct idmap proc_index, thread_index;
	VEC(struct thread) threads;
	struct replay_lua_modules mods;
	/* the sample being named: its stack record's frames and flags */
	VEC(struct perf_lua_frame) frames;
	uint16_t flags;
	VEC(const struct proto *) frame_protos;
	VEC(struct segment) segments;
	VEC(int32_t) place; /* per native frame: a segment, DROP or NATIVE */
	VEC(int32_t) anchor; /* per native frame: the C function's Lua frame, or -1 */
	struct callee *callees;
	size_t ncallees, callee_slots;
};

static uint64_t proto_hash(uint32_t pid, uint32_t epoch, uint64_t addr)
{
	return ((addr >> 3) ^ ((uint64_t)pid << 32 | epoch)) * 0x9e3779b97f4a7c15ull;
}

static uint32_t *proto_slot(struct lua_source *s, uint32_t pid, uint32_t epoch, uint64_t addr)
{
	size_t mask = s->nslots - 1;
	for (size_t i = proto_hash(pid, epoch, addr) >> 20 & mask;; i = (i + 1) & mask) {
		uint32_t *sl = &s->slots[i];
		const struct proto *p = *sl ? &s->protos.v[*sl - 1] : NULL;
		if (!p || (p->pid == pid && p->epoch == epoch && p->addr == addr))
			return sl;
	}
}

static int grow_slots(struct lua_source *s)
{
	size_t n = s->nslots ? s->nslots * 2 : 1024;
	uint32_t *old = s->slots;
	size_t nold = s->nslots;
	if (!(s->slots = calloc(n, sizeof(*s->slots)))) {
		s->slots = old;
		return -ENOMEM;
	}
	s->nslots = n;
	for (size_t i = 0; i < nold; i++)
		if (old[i]) {
			const struct proto *p = &s->protos.v[old[i] - 1];
			*proto_slot(s, p->pid, p->epoch, p->addr) = old[i];
		}
	free(old);
	return 0;
}

static struct proc *proc_of(struct lua_source *s, uint32_t pid)
{
	uint32_t i = idmap_get(&s->proc_index, pid);
	if (i != IDMAP_NONE)
		return &s->procs.v[i];
	if (!vec_reserve(&s->procs, 1) || idmap_put(&s->proc_index, pid, (uint32_t)s->procs.n))
		return NULL;
	struct proc *p = vec_push(&s->procs);
	*p = (struct proc){ .pid = pid };
	return p;
}

static struct thread *thread_of(struct lua_source *s, uint32_t tid, bool make)
{
	uint32_t i = idmap_get(&s->thread_index, tid);
	if (i != IDMAP_NONE)
		return &s->threads.v[i];
	if (!make || !vec_reserve(&s->threads, 1) ||
	    idmap_put(&s->thread_index, tid, (uint32_t)s->threads.n))
		return NULL;
	struct thread *t = vec_push(&s->threads);
	memset(t, 0, sizeof(*t));
	return t;
}

static const struct proto *proto_of(struct lua_source *s, uint32_t pid, uint64_t addr)
{
	uint32_t i = idmap_get(&s->proc_index, pid);
	if (i == IDMAP_NONE || !s->nslots)
		return NULL;
	uint32_t sl = *proto_slot(s, pid, s->procs.v[i].epoch, addr);
	return sl ? &s->protos.v[sl - 1] : NULL;
}

/* The source as Lua shows it (luaO_chunkid): a file without its '@', a name without its
 * '=', a chunk of text as [string "its first line"]. */
static const char *short_source(struct lua_source *s, const char *src, size_t n)
{
	if (n && (src[0] == '@' || src[0] == '='))
		return arena_strndup(&s->strings, src + 1, n - 1);
	size_t line = 0;
	while (line < n && line < 40 && src[line] != '\n' && src[line] != '\r')
		line++;
	char buf[64];
	snprintf(buf, sizeof(buf), "[string \"%.*s%s\"]", (int)line, src,
		 line < n ? "..." : "");
	return arena_strdup(&s->strings, buf);
}

/* The names block of a proto record (checked whole by the parser) as arrays in the
 * arena. */
static int read_names(struct lua_source *s, const struct replay_lua_payload *pl,
		      struct lua_names *n)
{
	struct lua_kname *k = arena_alloc(&s->strings, (pl->nkstr + 1) * sizeof(*k));
	struct lua_locvar *loc = arena_alloc(&s->strings, (pl->nlocvars + 1) * sizeof(*loc));
	const char **upv = arena_alloc(&s->strings, (pl->nupvals + 1) * sizeof(*upv));
	*n = (struct lua_names){ .ncode = pl->ncode, .k = k, .loc = loc, .upv = upv };
	n->code = pl->ncode ? arena_copy(&s->strings, pl->code, (size_t)pl->ncode * 4) : NULL;
	if (!k || !loc || !upv || (pl->ncode && !n->code))
		return -ENOMEM;
	const uint8_t *d = pl->names;
	for (uint16_t i = 0; i < pl->nkstr; i++, n->nk++) {
		memcpy(&k[i].index, d, 4);
		if (!(k[i].name = arena_strndup(&s->strings, (const char *)d + 5, d[4])))
			return -ENOMEM;
		d += 5 + d[4];
	}
	for (uint16_t i = 0; i < pl->nlocvars; i++, n->nloc++) {
		memcpy(&loc[i].startpc, d, 4);
		memcpy(&loc[i].endpc, d + 4, 4);
		if (!(loc[i].name = arena_strndup(&s->strings, (const char *)d + 9, d[8])))
			return -ENOMEM;
		d += 9 + d[8];
	}
	for (uint16_t i = 0; i < pl->nupvals; i++, n->nupv++) {
		if (!(upv[i] = arena_strndup(&s->strings, (const char *)d + 1, d[0])))
			return -ENOMEM;
		d += 1 + d[0];
	}
	return 0;
}

static int add_proto(struct lua_source *s, const struct replay_lua_payload *pl)
{
	struct proc *pr = proc_of(s, pl->pid);
	if (!pr || (s->protos.n + 1 > s->nslots / 2 && grow_slots(s)) ||
	    !vec_reserve(&s->protos, 1))
		return -ENOMEM;
	struct proto p = { .pid = pl->pid, .epoch = pr->epoch, .addr = pl->proto,
			   .linedefined = pl->linedefined, .nline = pl->lineinfo_len,
			   .nabs = pl->nabs };
	bool failed = (pl->flags & PERF_LUA_PROTO_READ_FAILED) && !pl->source_len;
	p.file = failed ? READ_FAILED_NAME : short_source(s, pl->source, pl->source_len);
	if (!p.file)
		return -ENOMEM;
	char buf[600];
	if (pl->linedefined == 0)
		snprintf(buf, sizeof(buf), "main chunk");
	else
		snprintf(buf, sizeof(buf), "%s:%d", p.file, pl->linedefined);
	p.name = arena_strdup(&s->strings, buf);
	if (read_names(s, pl, &p.names))
		return -ENOMEM;
	p.lineinfo = pl->lineinfo_len ? arena_copy(&s->strings, pl->lineinfo, pl->lineinfo_len)
				      : NULL;
	p.abs = pl->nabs ? arena_copy(&s->strings, pl->abs, (size_t)pl->nabs * 8) : NULL;
	if (!p.name || (pl->lineinfo_len && !p.lineinfo) || (pl->nabs && !p.abs))
		return -ENOMEM;
	*vec_push(&s->protos) = p;
	*proto_slot(s, p.pid, p.epoch, p.addr) = (uint32_t)s->protos.n;
	return 0;
}

static int add_stack(struct lua_source *s, const struct replay_lua_payload *pl, uint64_t time)
{
	struct thread *t = thread_of(s, pl->tid, true);
	if (!t)
		return -ENOMEM;
	t->frames.n = 0;
	if (!vec_reserve(&t->frames, pl->nframes))
		return -ENOMEM;
	for (uint32_t i = 0; i < pl->nframes; i++)
		t->frames.v[t->frames.n++] = replay_lua_frame_at(pl, i);
	t->pid = pl->pid;
	t->flags = pl->flags;
	t->time = time;
	t->pending = true;
	s->stats->records++;
	s->stats->read_failed += (pl->flags & PERF_LUA_STACK_READ_FAILED) != 0;
	s->stats->no_state += (pl->flags & PERF_LUA_STACK_NO_STATE) != 0;
	return 0;
}

static int on_payload(struct lua_source *s, const struct perf_event_rec *ev)
{
	if (!ev->raw_data || !replay_lua_is_payload(ev->raw_data, ev->raw_size))
		return 0;
	s->any_record = true;
	struct replay_lua_payload pl;
	if (replay_lua_parse(ev->raw_data, ev->raw_size, &pl)) {
		s->stats->malformed++;
		if (!s->warned)
			fprintf(stderr, "tally: warning: %s: at 0x%llx: %s (such records are left out)\n",
				s->path, (unsigned long long)ev->file_off, err_msg());
		s->warned = true;
		err_clear();
		return 0;
	}
	int r = pl.type == PERF_LUA_PROTO ? add_proto(s, &pl) : add_stack(s, &pl, ev->time);
	return r ? err_set(r, "out of memory") : 0;
}

static int record(void *self, const struct perf_event_rec *ev)
{
	struct lua_source *s = self;
	if (replay_is_bpf_output(ev))
		return on_payload(s, ev);
	if (ev->type == PERF_RECORD_COMM && (ev->misc & PERF_RECORD_MISC_COMM_EXEC) &&
	    ev->pid == ev->tid) {
		struct proc *p = proc_of(s, ev->pid);
		if (!p)
			return err_set(-ENOMEM, "out of memory");
		p->epoch++;
	} else if (ev->type == PERF_RECORD_EXIT) {
		struct thread *t = thread_of(s, ev->tid, false);
		if (t)
			t->pending = false;
	}
	return 0;
}

static bool take_record(struct lua_source *s, const struct replay_stack *st)
{
	struct thread *t = thread_of(s, st->ev->tid, false);
	if (!t || !t->pending)
		return false;
	t->pending = false;
	if (t->pid != st->ev->pid || t->time > st->ev->time)
		return false;
	s->frames.n = 0;
	if (!vec_reserve(&s->frames, t->frames.n))
		return false;
	memcpy(s->frames.v, t->frames.v, t->frames.n * sizeof(*t->frames.v));
	s->frames.n = t->frames.n;
	s->flags = t->flags;
	return true;
}

static bool is_interp(struct lua_source *s, const struct unw_frame *fr)
{
	if (!fr->mod)
		return false;
	const struct replay_lua_module *m = replay_lua_module_of(&s->mods, fr->mod);
	return m && m->interp;
}

/* Places Lua frames [a, b) on the first run of interpreter frames among native frames
 * [lo, hi): false when there is none. The run's outermost frame takes them and the others
 * are dropped; but frames a stack record cut short (its outer frames missing) go on the
 * run's innermost frame, the rest of the run staying native: where their part of it ends
 * is not known. */
static bool place(struct lua_source *s, const struct replay_stack *st, uint32_t a, uint32_t b,
		  size_t lo, size_t hi, bool partial)
{
	if (a == b)
		return true;
	size_t r0 = lo;
	while (r0 < hi && !is_interp(s, &st->frames[r0]))
		r0++;
	if (r0 == hi)
		return false;
	size_t r1 = r0;
	while (r1 < hi && is_interp(s, &st->frames[r1]))
		r1++;
	struct segment *g = vec_push(&s->segments);
	if (!g)
		return false;
	*g = (struct segment){ a, b };
	if (partial)
		r1 = r0 + 1;
	for (size_t i = r0; i + 1 < r1; i++)
		s->place.v[i] = DROP;
	s->place.v[r1 - 1] = (int32_t)(s->segments.n - 1);
	return true;
}

/* The splice of the taken frames (see the top of the file); false when the native
 * frames do not agree with them. */
static bool splice(struct lua_source *s, const struct replay_stack *st)
{
	bool native_whole = st->end == UNW_END_OUTERMOST;
	uint32_t first = 0, m = (uint32_t)s->frames.n;
	size_t lo = 0;
	for (uint32_t j = 0; j < m; j++) {
		const struct perf_lua_frame *f = &s->frames.v[j];
		if (!(f->fflags & PERF_LUA_FRAME_C))
			continue;
		size_t k = lo;
		while (k < st->n && !replay_lua_frame_starts_at(&s->mods, st->frames, k, f->addr))
			k++;
		if (k == st->n) {
			if (j == 0) { /* called, but not entered yet: not on the native stack */
				first = 1;
				continue;
			}
			return !native_whole && place(s, st, first, j, lo, st->n, false);
		}
		if (!place(s, st, first, j, lo, k, false))
			return false;
		s->anchor.v[k] = (int32_t)j;
		lo = k + 1;
		first = j + 1;
	}
	return place(s, st, first, m, lo, st->n,
		     s->flags & (PERF_LUA_STACK_CUT | PERF_LUA_STACK_READ_FAILED));
}

static int begin_stack(void *self, const struct replay_stack *st)
{
	struct lua_source *s = self;
	s->segments.n = 0;
	s->place.n = 0;
	s->anchor.n = 0;
	s->frame_protos.n = 0;
	if (!take_record(s, st) || !s->frames.n)
		return 0;
	if (!vec_reserve(&s->place, st->n) || !vec_reserve(&s->anchor, st->n) ||
	    !vec_reserve(&s->frame_protos, s->frames.n))
		return err_set(-ENOMEM, "out of memory");
	for (size_t i = 0; i < st->n; i++) {
		s->place.v[s->place.n++] = NATIVE;
		s->anchor.v[s->anchor.n++] = -1;
	}
	for (size_t j = 0; j < s->frames.n; j++) {
		const struct perf_lua_frame *f = &s->frames.v[j];
		const struct proto *p = NULL;
		if (!(f->fflags & (PERF_LUA_FRAME_C | PERF_LUA_FRAME_FAILED)) &&
		    !(p = proto_of(s, st->ev->pid, f->addr))) {
			s->stats->proto_unknown++;
			s->place.n = 0;
			return 0;
		}
		s->frame_protos.v[s->frame_protos.n++] = p;
	}
	if (!splice(s, st)) {
		s->stats->inconsistent++;
		s->place.n = 0;
		s->anchor.n = 0;
		s->segments.n = 0;
		return 0;
	}
	if (s->segments.n) {
		s->stats->samples++;
		for (size_t g = 0; g < s->segments.n; g++)
			s->stats->frames += s->segments.v[g].end - s->segments.v[g].first;
	}
	return 0;
}

static size_t callee_hash(uint32_t proto, int32_t pc)
{
	return (size_t)(((uint64_t)proto << 32 | (uint32_t)pc) * 0x9e3779b97f4a7c15ull >> 20);
}

static struct callee *callee_slot(struct callee *v, size_t nslots, uint32_t proto, int32_t pc)
{
	for (size_t i = callee_hash(proto, pc) & (nslots - 1);; i = (i + 1) & (nslots - 1))
		if (!v[i].proto || (v[i].proto == proto && v[i].pc == pc))
			return &v[i];
}

/* The name Lua gives the function called by caller at pc ("chain_a", "string.rep",
 * "__index", "for iterator"), NULL when none; worked out once per call site. */
static const char *callee_name(struct lua_source *s, const struct proto *caller, int32_t pc)
{
	uint32_t id = (uint32_t)(caller - s->protos.v) + 1;
	if (s->ncallees + 1 > s->callee_slots / 2) {
		size_t n = s->callee_slots ? s->callee_slots * 2 : 1024;
		struct callee *v = calloc(n, sizeof(*v));
		if (!v)
			return NULL;
		for (size_t i = 0; i < s->callee_slots; i++)
			if (s->callees[i].proto)
				*callee_slot(v, n, s->callees[i].proto, s->callees[i].pc) = s->callees[i];
		free(s->callees);
		s->callees = v;
		s->callee_slots = n;
	}
	struct callee *c = callee_slot(s->callees, s->callee_slots, id, pc);
	if (c->proto)
		return c->name;
	const char *name, *table, *what = lua_funcname(&caller->names, pc, &name, &table);
	char buf[2 * PERF_LUA_NAME_MAX + 8];
	if (!what)
		buf[0] = 0;
	else if (!strcmp(what, "metamethod"))
		snprintf(buf, sizeof(buf), "__%s", name);
	else if (table)
		snprintf(buf, sizeof(buf), "%s.%s", table, name);
	else
		snprintf(buf, sizeof(buf), "%s", name);
	*c = (struct callee){ id, pc, buf[0] ? arena_strdup(&s->strings, buf) : NULL };
	s->ncallees++;
	return c->name;
}

/* The name the caller of Lua frame j (innermost first) gives it: NULL when it was tail
 * called (its caller is gone), called from C, or the caller's code names nothing. */
static const char *name_of(struct lua_source *s, size_t j)
{
	if (j + 1 >= s->frames.n || (s->frames.v[j].fflags & PERF_LUA_FRAME_TAIL))
		return NULL;
	const struct proto *caller = s->frame_protos.v[j + 1];
	if (!caller || s->frames.v[j + 1].pc < 0)
		return NULL;
	return callee_name(s, caller, s->frames.v[j + 1].pc);
}

static void name_lua(struct lua_source *s, size_t j, struct replay_sym_frame *out)
{
	const struct proto *p = s->frame_protos.v[j];
	const struct perf_lua_frame *f = &s->frames.v[j];
	if (!p) {
		out->function = READ_FAILED_NAME;
		return;
	}
	int32_t line = lua_line_of(p->lineinfo, p->nline, p->abs, p->nabs, p->linedefined, f->pc);
	const char *name = name_of(s, j);
	out->function = name ? name : p->name;
	out->file = p->file;
	out->line = line > 0 ? (uint32_t)line : 0;
	out->first_line = p->linedefined > 0 ? (uint32_t)p->linedefined : 0;
	out->addr = f->pc >= 0 ? (uint64_t)f->pc : 0;
}

/* A C function's native frame, named as its Lua caller names it (string.rep); left to
 * the next source (its symbol, in a stripped lua5.4 none) when Lua gives no name. */
static int name_c(struct lua_source *s, const struct replay_stack *st, size_t i,
		  struct replay_frames *out)
{
	const char *name = name_of(s, (size_t)s->anchor.v[i]);
	const struct unw_frame *fr = &st->frames[i];
	if (!name)
		return 0;
	struct replay_sym_frame *sf = replay_frames_push(out, PROF_NATIVE);
	if (!sf)
		return 1;
	sf->function = name;
	sf->module = fr->mod->path;
	sf->build_id = fr->mod->build_id;
	sf->addr = fr->rel;
	sf->pc = fr->pc;
	return 1;
}

static int name_frame(void *self, const struct replay_stack *st, size_t i,
		      struct replay_frames *out)
{
	struct lua_source *s = self;
	if (i < s->anchor.n && s->anchor.v[i] >= 0)
		return name_c(s, st, i, out);
	if (i >= s->place.n || s->place.v[i] == NATIVE)
		return 0;
	if (s->place.v[i] == DROP)
		return 1;
	const struct segment *g = &s->segments.v[s->place.v[i]];
	const struct unw_frame *fr = &st->frames[i];
	for (uint32_t k = g->end; k > g->first; k--) { /* outermost first; no C function */
		struct replay_sym_frame *sf = replay_frames_push(out, PROF_VM);
		if (!sf)
			return 1;
		/* No module, as the agent's VM frames: the frame's code is bytecode (addr is
		 * its instruction), which no native annotation or mapping may claim. */
		name_lua(s, k - 1, sf);
		sf->pc = fr->pc;
	}
	return 1;
}

static void counters(void *self, replay_count_fn *count, void *arg)
{
	const struct lua_source *s = self;
	const struct replay_lua_stats *k = s->stats;
	if (!s->any_record)
		return;
	count(arg, PROF_COUNTER_LUA_SAMPLES, k->samples);
	count(arg, PROF_COUNTER_LUA_FRAMES, k->frames);
	count(arg, PROF_COUNTER_LUA_INCONSISTENT, k->inconsistent);
	count(arg, PROF_COUNTER_LUA_PROTO_UNKNOWN, k->proto_unknown);
	if (k->read_failed)
		count(arg, PROF_COUNTER_LUA_READ_FAILED, k->read_failed);
	if (k->no_state)
		count(arg, PROF_COUNTER_LUA_NO_STATE, k->no_state);
	if (k->malformed)
		count(arg, PROF_COUNTER_LUA_MALFORMED, k->malformed);
}

static void close_source(void *self)
{
	struct lua_source *s = self;
	arena_free(&s->strings);
	vec_free(&s->protos);
	free(s->slots);
	vec_free(&s->procs);
	for (size_t i = 0; i < s->threads.n; i++)
		vec_free(&s->threads.v[i].frames);
	vec_free(&s->threads);
	idmap_free(&s->proc_index);
	idmap_free(&s->thread_index);
	replay_lua_modules_free(&s->mods);
	vec_free(&s->frames);
	vec_free(&s->frame_protos);
	vec_free(&s->segments);
	vec_free(&s->place);
	vec_free(&s->anchor);
	free(s->callees);
	free(s);
}

static const struct replay_frame_source_ops lua_ops = {
	.name_frame = name_frame,
	.begin_stack = begin_stack,
	.record = record,
	.counters = counters,
	.close = close_source,
	.per_sample = true,
};

int replay_lua_source_new(const struct perf_data *d, struct replay_lua_stats *stats,
			  struct replay_frame_source *out)
{
	*out = (struct replay_frame_source){ NULL, NULL };
	bool records = false;
	for (size_t i = 0; i < d->nattrs; i++)
		records |= d->attrs[i].attr.type == PERF_TYPE_SOFTWARE &&
			   d->attrs[i].attr.config == PERF_COUNT_SW_BPF_OUTPUT;
	if (!records)
		return 0;
	struct lua_source *s = calloc(1, sizeof(*s));
	if (!s)
		return err_set(-ENOMEM, "out of memory");
	s->path = d->path;
	s->stats = stats ? stats : &s->own;
	memset(s->stats, 0, sizeof(*s->stats));
	*out = (struct replay_frame_source){ &lua_ops, s };
	return 0;
}

static int open_source(struct perf_data *d, struct replay_frame_source *out)
{
	return replay_lua_source_new(d, NULL, out);
}

const struct replay_source_type replay_lua_source = { open_source };
