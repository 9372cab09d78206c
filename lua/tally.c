/*
 * The Lua 5.4 module (build/lua/tally.so): profiles a Lua program with the agent
 * (include/tally/agent.h), through Lua's public C API only (lua_sethook, lua_getinfo,
 * lua_getstack). `lua5.4 -ltally script.lua` starts profiling when the module loads;
 * docs/agent.md describes the environment variables and tally.start{...}/tally.stop().
 *
 * Lua's dispatch loop is not ours, so the module cannot store a pc before each
 * instruction. It keeps the agent's shadow stack with call and return hooks instead (a
 * frame per Lua or C function, as lua_getinfo names it), which the agent's sampler reads;
 * exact mode adds a count hook that fires at every VM instruction and charges one unit to
 * the current line of the running Lua function, through the agent's exact hooks (the
 * calling-context tree of the profile module, as the sBPF CU profile).
 *
 * Mixed mode (`tally record`, docs/agent.md) needs the shadow stack in a native frame of
 * ours below the Lua code, where the kernel's copy of the stack carries it: tally.run(f,
 * ...) calls f in a C frame that holds a struct tally_agent_loop and the frames, and the
 * hooks write there while it runs (elsewhere into a state nobody reads). The module has
 * no frame in Lua's own dispatch loop, so the Lua frames replace tally.run's native frame
 * and Lua's native frames (its dispatch loop, string.rep's code, ...) sit above them all.
 * Without a line hook a Lua frame's pc is the line it last called from (or its first
 * line): what the call and return hooks see.
 *
 * Timer mode costs the program nothing per call or instruction: a timer of the process
 * (CLOCK_MONOTONIC, SIGPROF to the Lua thread) arms a one-shot hook with lua_sethook from
 * the signal handler, which Lua allows (lua.c does it on SIGINT); at the next instruction,
 * call or return the hook walks the stack with lua_getstack, publishes it as the thread's
 * shadow stack (the innermost frame's current line as its pc) and takes one sample of it
 * with tally_agent_sample (opts.caller_samples): the agent's sampler thread writes those
 * to the same stream as sample mode's, so a crash leaves them readable up to the last
 * flush. Hooks are per lua_State: the main state's is armed, so time inside a coroutine
 * is charged to the resume that ran it.
 *
 * A function's identity is where it was defined and the name it was called by (for Lua
 * functions) or its C function pointer (C functions), kept in a hash table that maps it to
 * an agent id; each is registered once, the first time it is called.
 *
 * The shadow stack follows the real one incrementally. Two things break that and are
 * repaired by rebuilding it from the real stacks (lua_getstack): a switch to another
 * coroutine (a hook called with another lua_State), and frames an error unwound without
 * return hooks (found at the next return, whose function is not the shadow's top). A
 * coroutine's frames sit above those of the coroutines that resumed it: the module keeps
 * the chain of resumers (each running its resume call, so alive while it is in the chain)
 * and a rebuild walks each of them, oldest first.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "tally/agent.h"

#define LUA_TALLY_API __attribute__((visibility("default")))

/* A function as the hash table keeps it. For a Lua function, src is its chunk's source
 * string (ar.source) and line its first line; for a C function, src is the function
 * pointer and line -1. name is what lua_getinfo named it. The copies verify a hit: a
 * source string freed by the collector may be reused at the same address. */
struct slot {
	const void *src;
	const char *name;
	int line;
	uint32_t id; /* 0: empty */
	char *src_copy, *name_copy;
};

/* The module's own mode beside the agent's: sampled by a timer (TALLY_AGENT_SAMPLE with
 * caller_samples inside). */
#define MODE_TIMER 0x100

struct config {
	unsigned mode;
	const char *output, *exact_output, *registry_dir;
	uint32_t hz;
};

/* Frames a shadow stack holds (mixed mode's on tally.run's native stack: 8 KiB). */
#define SHADOW_FRAMES 512

#define CHAIN_MAX 64

struct frame {
	uint32_t id;
	const void *obj;
	uint64_t first; /* its first pc: a Lua function's first line, 0 for C */
};

/* One profiled Lua state per process: the module's state. */
static struct {
	struct tally_agent *agent;
	struct tally_agent_thread *t; /* the registered thread (sampling, exact mode) */
	/* The shadow stack the hooks keep: t's, or in mixed mode tally.run's record while it
	 * runs and spare outside it. */
	struct tally_agent_thread *shadow;
	struct tally_agent_thread spare;
	struct tally_agent_frame spare_frames[SHADOW_FRAMES];
	bool mixed;
	lua_State *cur; /* whose stack the shadow stack holds; NULL: rebuild at the next hook */
	bool exact;
	struct slot *slots;
	size_t cap, n;
	struct frame *walk; /* the frames of a rebuild, innermost first */
	size_t walk_cap;
	const void **objs; /* the function object of each shadow frame (lua_topointer) */
	size_t objs_cap;
	lua_State *chain[CHAIN_MAX]; /* the resumers of cur, oldest first */
	size_t nchain;
	bool chain_lost; /* resumed deeper than CHAIN_MAX: stacks start at the running state */
	int failed; /* the first failure inside a hook, reported at stop */
	/* Timer mode: the state whose hook the signal arms (NULL: none), the timer and the
	 * handler SIGPROF had. */
	lua_State *armed; /* atomic: read by the handler */
	bool timer_made;
	timer_t timer;
	struct sigaction old_prof;
} P;

#define SOURCE_CMP_MAX 256

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

static size_t slot_hash(const void *src, const char *name, int line)
{
	return (size_t)mix((uintptr_t)src ^ mix((uintptr_t)name) ^ ((uint64_t)(unsigned)line << 40));
}

static bool slot_matches(const struct slot *s, const void *src, const char *name, int line)
{
	if (s->src != src || s->name != name || s->line != line)
		return false;
	if (line < 0)
		return true; /* a C function pointer stays what it is */
	return !strncmp(s->src_copy, src, SOURCE_CMP_MAX) &&
	       (name ? s->name_copy && !strcmp(s->name_copy, name) : !s->name_copy);
}

static void fail(int rc)
{
	if (!P.failed)
		P.failed = rc;
}

static int grow(void)
{
	size_t cap = P.cap ? P.cap * 2 : 1024;
	struct slot *s = calloc(cap, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < P.cap; i++) {
		if (!P.slots[i].id)
			continue;
		size_t j = slot_hash(P.slots[i].src, P.slots[i].name, P.slots[i].line) & (cap - 1);
		while (s[j].id)
			j = (j + 1) & (cap - 1);
		s[j] = P.slots[i];
	}
	free(P.slots);
	P.slots = s;
	P.cap = cap;
	return 0;
}

/* A C function's name as Lua's own tracebacks find it: "string.rep" for the field rep of
 * package.loaded.string ("_G." dropped). Leaves the stack as it was; false if not found. */
static bool global_name(lua_State *L, lua_CFunction fn, char *out, size_t size)
{
	bool found = false;
	int top = lua_gettop(L);
	if (lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE) != LUA_TTABLE) {
		lua_settop(L, top);
		return false;
	}
	lua_pushnil(L);
	while (!found && lua_next(L, -2)) {
		if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TTABLE) {
			lua_pushnil(L);
			while (lua_next(L, -2)) {
				if (lua_type(L, -2) == LUA_TSTRING && lua_tocfunction(L, -1) == fn) {
					const char *mod = lua_tostring(L, -4), *field = lua_tostring(L, -2);
					if (!strcmp(mod, "_G"))
						snprintf(out, size, "%s", field);
					else
						snprintf(out, size, "%s.%s", mod, field);
					found = true;
					lua_pop(L, 2);
					break;
				}
				lua_pop(L, 1);
			}
		}
		lua_pop(L, 1);
	}
	lua_settop(L, top);
	return found;
}

/* The active lines of the Lua function ar describes, sorted, each its own pc (lua_getinfo
 * "L" leaves them as the keys of a table); NULL when there are none or no memory. */
static struct tally_agent_line *active_lines(lua_State *L, const lua_Debug *ar, size_t *n)
{
	lua_Debug d = *ar;
	struct tally_agent_line *lines = NULL;
	size_t cap = 0;
	*n = 0;
	int top = lua_gettop(L);
	if (lua_getinfo(L, "L", &d) && lua_istable(L, -1)) {
		lua_pushnil(L);
		while (lua_next(L, -2)) {
			lua_pop(L, 1);
			if (!lua_isinteger(L, -1))
				continue;
			if (*n == cap) {
				cap = cap ? cap * 2 : 16;
				struct tally_agent_line *g = realloc(lines, cap * sizeof(*lines));
				if (!g) {
					free(lines);
					lines = NULL;
					*n = 0;
					break;
				}
				lines = g;
			}
			uint32_t l = (uint32_t)lua_tointeger(L, -1);
			size_t k = (*n)++;
			for (; k && lines[k - 1].pc > l; k--)
				lines[k] = lines[k - 1];
			lines[k] = (struct tally_agent_line){ l, l };
		}
	}
	lua_settop(L, top);
	return lines;
}

/* Registers the function ar describes (lua_getinfo "Sn" filled it; the function itself
 * is on the stack top when it is a C function). Lua functions are named "NAME
 * (FILE:LINE)" and get a line table of their active lines, pc = line; C functions "NAME
 * [C]". */
static uint32_t register_fn(lua_State *L, lua_Debug *ar, const void *src, int line)
{
	char name[256];
	struct tally_agent_function f = { .sz = sizeof(f), .name = name };
	struct tally_agent_line *lines = NULL;
	const char *called = ar->name ? ar->name : *ar->what == 'm' ? "main chunk" : "?";
	if (line < 0) {
		char global[200];
		if (!global_name(L, (lua_CFunction)(uintptr_t)src, global, sizeof(global)))
			snprintf(global, sizeof(global), "%s", called);
		snprintf(name, sizeof(name), "%s [C]", global);
		f.file = "[C]";
	} else {
		snprintf(name, sizeof(name), "%s (%s:%d)", called, ar->short_src, ar->linedefined);
		f.file = ar->short_src;
		f.line = (uint32_t)ar->linedefined;
		f.start = (uint64_t)ar->linedefined;
		f.end = (uint64_t)(ar->lastlinedefined > ar->linedefined ? ar->lastlinedefined : ar->linedefined) + 1;
		lines = active_lines(L, ar, &f.nlines);
		f.lines = lines;
		/* A main chunk's span is 0 to 0: its lines say how far it goes. */
		if (f.nlines && lines[f.nlines - 1].pc >= f.end)
			f.end = lines[f.nlines - 1].pc + 1;
	}
	uint32_t id = 0;
	int rc = tally_agent_register(P.agent, &f, &id);
	free(lines);
	if (rc)
		fail(rc);
	return rc ? 0 : id;
}

/* The function object ar's frame runs (a pointer to compare, never followed). */
static const void *fn_object(lua_State *L, lua_Debug *ar)
{
	lua_Debug d = *ar;
	if (!lua_checkstack(L, 1) || !lua_getinfo(L, "f", &d))
		return NULL;
	const void *obj = lua_topointer(L, -1);
	lua_pop(L, 1);
	return obj;
}

/* The frame of the function ar describes (a hook's or a lua_getstack's record): its id
 * and object. */
static struct frame fn_frame(lua_State *L, lua_Debug *ar)
{
	/* the pushes of "f", "L" and global_name, on a coroutine's stack too */
	if (!lua_checkstack(L, 8) || !lua_getinfo(L, "Snf", ar))
		return (struct frame){ 0, NULL, 0 };
	struct frame fr = { 0, lua_topointer(L, -1),
			    *ar->what == 'C' || ar->linedefined < 0 ? 0 : (uint64_t)ar->linedefined };
	const void *src = ar->source;
	int line = ar->linedefined;
	bool is_c = *ar->what == 'C';
	if (is_c) {
		src = (const void *)(uintptr_t)lua_tocfunction(L, -1);
		line = -1;
	}
	const char *name = is_c ? NULL : ar->name;
	if (P.n * 2 >= P.cap && grow()) {
		fail(-ENOMEM);
		lua_pop(L, 1);
		return fr;
	}
	size_t i = slot_hash(src, name, line) & (P.cap - 1);
	while (P.slots[i].id && !slot_matches(&P.slots[i], src, name, line))
		i = (i + 1) & (P.cap - 1);
	struct slot *s = &P.slots[i];
	if (!s->id) {
		/* A new function, or the same key whose strings were reused: a new entry. */
		uint32_t id = register_fn(L, ar, src, line);
		char *sc = is_c ? NULL : strndup(src, SOURCE_CMP_MAX);
		char *nc = name ? strdup(name) : NULL;
		if (!id || (!is_c && !sc) || (name && !nc)) {
			free(sc);
			free(nc);
			fail(id ? -ENOMEM : P.failed);
		} else {
			*s = (struct slot){ src, name, line, id, sc, nc };
			P.n++;
		}
	}
	lua_pop(L, 1);
	fr.id = s->id;
	return fr;
}

/* The line a Lua function at level is at (0 for a C function): its call site. */
static uint64_t call_line(lua_State *L, int level)
{
	lua_Debug d;
	if (!lua_getstack(L, level, &d) || !lua_getinfo(L, "l", &d) || d.currentline < 0)
		return 0;
	return (uint64_t)d.currentline;
}

/* Whether call sites are needed: by exact mode, and by mixed mode (the replay checks each
 * frame's pc against its function's lines). */
static bool want_call_lines(void)
{
	return P.exact || P.mixed;
}

static void enter(struct frame fr, uint64_t call_pc)
{
	uint32_t d = P.shadow->depth, id = fr.id;
	if (d == P.objs_cap) {
		size_t cap = P.objs_cap ? P.objs_cap * 2 : 256;
		const void **o = realloc(P.objs, cap * sizeof(*o));
		if (o) {
			P.objs = o;
			P.objs_cap = cap;
		}
	}
	if (d < P.objs_cap)
		P.objs[d] = fr.obj;
	TALLY_AGENT_PUSH(P.shadow, id, call_pc);
	TALLY_AGENT_PC(P.shadow, fr.first);
	if (P.exact) {
		int rc = tally_agent_enter(P.t, id, call_pc);
		if (rc)
			fail(rc);
	}
}

static void leave(void)
{
	uint32_t d = P.shadow->depth;
	if (!d)
		return;
	/* The caller is back at the line it called from. */
	if (d <= P.shadow->max_depth)
		TALLY_AGENT_PC(P.shadow, P.shadow->frames[d - 1].call_pc);
	TALLY_AGENT_POP(P.shadow);
	if (P.exact) {
		int rc = tally_agent_exit(P.t);
		if (rc)
			fail(rc);
	}
}

/* Enters L's frames, outermost first. */
/* L's frames into P.walk, innermost first: how many (fewer when out of memory). */
static size_t collect(lua_State *L)
{
	size_t n = 0;
	lua_Debug d;
	for (int level = 0; lua_getstack(L, level, &d); level++) {
		if (n == P.walk_cap) {
			size_t cap = P.walk_cap ? P.walk_cap * 2 : 64;
			struct frame *w = realloc(P.walk, cap * sizeof(*w));
			if (!w) {
				fail(-ENOMEM);
				break;
			}
			P.walk = w;
			P.walk_cap = cap;
		}
		P.walk[n++] = fn_frame(L, &d);
	}
	return n;
}

static void walk_state(lua_State *L)
{
	size_t n = collect(L);
	for (size_t i = n; i-- > 0;)
		enter(P.walk[i], want_call_lines() && i + 1 < n ? call_line(L, (int)i + 1) : 0);
}

/* Whether L is running a resume of another coroutine: it has frames and has not yielded
 * (a dead coroutine has none, a suspended one has yielded). */
static bool resuming(lua_State *L)
{
	lua_Debug d;
	return lua_status(L) == LUA_OK && lua_getstack(L, 0, &d);
}

/* Replaces the shadow stack by the real stacks of L and the coroutines that resumed it.
 * Coming from cur, L is either one of cur's resumers (cur yielded, returned or failed) or
 * a coroutine cur resumed. */
static void rebuild(lua_State *L)
{
	while (P.shadow->depth)
		leave();
	size_t k = P.nchain;
	while (k && P.chain[k - 1] != L)
		k--;
	if (k)
		P.nchain = k - 1;
	else if (P.cur && P.cur != L && !P.chain_lost && resuming(P.cur)) {
		if (P.nchain < CHAIN_MAX)
			P.chain[P.nchain++] = P.cur;
		else
			P.chain_lost = true;
	}
	if (P.chain_lost)
		P.nchain = 0;
	for (size_t i = 0; i < P.nchain; i++)
		walk_state(P.chain[i]);
	walk_state(L);
	P.cur = L;
}

static void hook(lua_State *L, lua_Debug *ar)
{
	if (!P.agent) {
		lua_sethook(L, NULL, 0, 0); /* a coroutine that inherited the hook before stop */
		return;
	}
	if (ar->event == LUA_HOOKCOUNT) {
		if (L != P.cur)
			rebuild(L);
		int rc = lua_getinfo(L, "l", ar) ? tally_agent_cost(P.t, (uint64_t)ar->currentline, 1) : 0;
		if (rc)
			fail(rc);
		return;
	}
	if (L != P.cur) {
		rebuild(L); /* level 0 is the function called, tail-called or returning */
		if (ar->event == LUA_HOOKRET)
			leave();
		return;
	}
	switch (ar->event) {
	case LUA_HOOKCALL:
		enter(fn_frame(L, ar), want_call_lines() ? call_line(L, 1) : 0);
		break;
	case LUA_HOOKTAILCALL: { /* replaces its caller's frame; no return event will come */
		uint32_t d = P.shadow->depth;
		uint64_t from = P.mixed && d && d <= P.shadow->max_depth
					? P.shadow->frames[d - 1].call_pc : 0;
		leave();
		enter(fn_frame(L, ar), from);
		break;
	}
	case LUA_HOOKRET: {
		/* The shadow's top is the function returning, unless an error unwound frames
		 * that never returned: compared by object, which costs no lookup. */
		uint32_t d = P.shadow->depth;
		if (!d || (d <= P.objs_cap && P.objs[d - 1] != fn_object(L, ar)))
			rebuild(L);
		leave();
		break;
	}
	}
}

/* Timer mode's one-shot hook: this instant's stack, published as the thread's shadow
 * stack with the innermost frame's current line (0 in a C function) as its pc, is the
 * sample. */
static void sample_hook(lua_State *L, lua_Debug *ar)
{
	(void)ar;
	lua_sethook(L, NULL, 0, 0);
	/* A coroutine made while the hook was armed inherits it (lua_newthread copies the
	 * hook): its stack alone is not the thread's, and the main state takes the sample. */
	if (!P.agent || L != __atomic_load_n(&P.armed, __ATOMIC_RELAXED))
		return;
	size_t n = collect(L);
	while (P.shadow->depth)
		leave();
	for (size_t i = n; i-- > 0;)
		enter(P.walk[i], 0);
	lua_Debug top;
	if (lua_getstack(L, 0, &top) && lua_getinfo(L, "l", &top))
		TALLY_AGENT_PC(P.shadow, top.currentline > 0 ? (uint64_t)top.currentline : 0);
	/* -EAGAIN, a dropped sample, is counted by the agent */
	tally_agent_sample(P.shadow);
}

static void on_tick(int sig)
{
	(void)sig;
	lua_State *L = __atomic_load_n(&P.armed, __ATOMIC_RELAXED);
	if (L)
		lua_sethook(L, sample_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

/* SIGPROF to this thread every 1/hz s. NULL or a message. */
static const char *timer_start(lua_State *L, uint32_t hz)
{
	lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
	lua_State *main = lua_tothread(L, -1);
	lua_pop(L, 1);
	struct sigaction sa = { .sa_handler = on_tick, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	struct sigevent ev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGPROF };
	ev._sigev_un._tid = gettid();
	long ns = 1000000000L / (hz ? hz : 999);
	struct itimerspec every = { { ns / 1000000000L, ns % 1000000000L },
				    { ns / 1000000000L, ns % 1000000000L } };
	__atomic_store_n(&P.armed, main, __ATOMIC_RELAXED);
	if (sigaction(SIGPROF, &sa, &P.old_prof))
		return "tally: cannot handle SIGPROF";
	if (timer_create(CLOCK_MONOTONIC, &ev, &P.timer)) {
		sigaction(SIGPROF, &P.old_prof, NULL);
		return "tally: cannot create the sampling timer";
	}
	P.timer_made = true;
	timer_settime(P.timer, 0, &every, NULL);
	return NULL;
}

/* A signal sent before the timer was deleted may still come: the handler stays unless
 * the program had one of its own (SIG_DFL would end the process), ignoring it. */
static void timer_stop(void)
{
	__atomic_store_n(&P.armed, NULL, __ATOMIC_RELAXED);
	if (!P.timer_made)
		return;
	timer_delete(P.timer);
	P.timer_made = false;
	if (P.old_prof.sa_handler == SIG_DFL && !(P.old_prof.sa_flags & SA_SIGINFO))
		signal(SIGPROF, SIG_IGN);
	else
		sigaction(SIGPROF, &P.old_prof, NULL);
}

static int config_mode(const char *s, unsigned *mode)
{
	if (!strcmp(s, "sample"))
		*mode = TALLY_AGENT_SAMPLE;
	else if (!strcmp(s, "exact"))
		*mode = TALLY_AGENT_EXACT;
	else if (!strcmp(s, "both"))
		*mode = TALLY_AGENT_SAMPLE | TALLY_AGENT_EXACT;
	else if (!strcmp(s, "mixed"))
		*mode = TALLY_AGENT_MIXED;
	else if (!strcmp(s, "timer"))
		*mode = MODE_TIMER;
	else if (!strcmp(s, "off"))
		*mode = 0;
	else
		return -EINVAL;
	return 0;
}

static void stop_hooks(lua_State *L)
{
	timer_stop();
	lua_sethook(L, NULL, 0, 0);
	tally_agent_free(P.agent);
	P.agent = NULL;
	P.t = NULL;
	P.shadow = NULL;
	P.cur = NULL;
	for (size_t i = 0; i < P.cap; i++) {
		free(P.slots[i].src_copy);
		free(P.slots[i].name_copy);
	}
	free(P.slots);
	free(P.walk);
	free(P.objs);
	P.slots = NULL;
	P.walk = NULL;
	P.objs = NULL;
	P.cap = P.n = P.walk_cap = P.objs_cap = 0;
}

/* os.exit() without closing the state ends the process without finalizers: the profile is
 * written from atexit then, the agent's own data only (no Lua call). */
static void at_exit(void)
{
	timer_stop();
	if (P.agent && tally_agent_stop(P.agent))
		fprintf(stderr, "tally: %s\n", tally_errmsg());
}

/* Registers at_exit once, with the module pinned in memory (RTLD_NODELETE): lua_close
 * unloads C modules, and an exit handler must not point into an unmapped library. */
static void hook_exit(void)
{
	static bool done;
	Dl_info di;
	if (done || !dladdr((void *)at_exit, &di) ||
	    !dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE))
		return;
	done = !atexit(at_exit);
}

/* Starts profiling L; NULL or a message (static or in tally_errmsg()). */
static const char *start(lua_State *L, const struct config *c)
{
	if (P.agent)
		return "tally: already profiling";
	bool timer = c->mode & MODE_TIMER;
	TALLY_OPTS(tally_agent_opts, o, .mode = c->mode, .output = c->output,
		   .exact_output = c->exact_output, .freq_hz = c->hz, .omit_thread = true,
		   .jit_dir = c->registry_dir);
	if (timer) {
		o.mode = TALLY_AGENT_SAMPLE;
		o.caller_samples = true;
	}
	P.failed = 0;
	if (tally_agent_new(&o, &P.agent))
		return tally_errmsg();
	bool registered = o.mode & (TALLY_AGENT_SAMPLE | TALLY_AGENT_EXACT);
	if ((registered && tally_agent_thread_register(P.agent, &P.t)) ||
	    tally_agent_start(P.agent)) {
		tally_agent_free(P.agent);
		P.agent = NULL;
		return tally_errmsg();
	}
	hook_exit();
	P.exact = c->mode & TALLY_AGENT_EXACT;
	P.mixed = c->mode & TALLY_AGENT_MIXED;
	P.spare = (struct tally_agent_thread){ .max_depth = SHADOW_FRAMES, .frames = P.spare_frames };
	P.shadow = P.t ? P.t : &P.spare;
	if (timer) {
		const char *err = timer_start(L, c->hz);
		if (err) {
			stop_hooks(L);
			return err;
		}
		return NULL;
	}
	P.cur = NULL; /* the first hook rebuilds the shadow stack from L's */
	P.nchain = 0;
	P.chain_lost = false;
	lua_sethook(L, hook, LUA_MASKCALL | LUA_MASKRET | (P.exact ? LUA_MASKCOUNT : 0), P.exact);
	return NULL;
}

/* Stops and writes; NULL or a message. */
static const char *stop(lua_State *L)
{
	static char msg[512];
	if (!P.agent)
		return "tally: not profiling";
	int rc = tally_agent_stop(P.agent);
	if (rc)
		snprintf(msg, sizeof(msg), "tally: %s", tally_errmsg());
	else if (P.failed)
		snprintf(msg, sizeof(msg), "tally: a hook failed (%s): the profile misses events",
			 strerror(-P.failed));
	bool bad = rc || P.failed;
	stop_hooks(L);
	return bad ? msg : NULL;
}

static const char *opt_string(lua_State *L, const char *key, const char *dflt)
{
	lua_getfield(L, 1, key);
	const char *s = lua_isnil(L, -1) ? dflt : luaL_checkstring(L, -1);
	lua_pop(L, 1); /* the table keeps the string alive */
	return s;
}

/* tally.start{mode = "sample"|"exact"|"both"|"mixed"|"timer", output = PATH, exact_output = PATH,
 * registry_dir = DIR, hz = N} */
static int l_start(lua_State *L)
{
	struct config c = { .mode = TALLY_AGENT_SAMPLE };
	if (!lua_isnoneornil(L, 1)) {
		luaL_checktype(L, 1, LUA_TTABLE);
		const char *mode = opt_string(L, "mode", "sample");
		if (config_mode(mode, &c.mode) || !c.mode)
			return luaL_error(L, "tally.start: mode is sample, exact, both, mixed or timer, not %s",
					  mode);
		c.output = opt_string(L, "output", NULL);
		c.registry_dir = opt_string(L, "registry_dir", NULL);
		c.exact_output = opt_string(L, "exact_output", NULL);
		lua_getfield(L, 1, "hz");
		lua_Integer hz = lua_isnil(L, -1) ? 0 : luaL_checkinteger(L, -1);
		lua_pop(L, 1);
		if (hz < 0 || hz > 100000)
			return luaL_error(L, "tally.start: hz is 1 to 100000");
		c.hz = (uint32_t)hz;
	}
	const char *err = start(L, &c);
	if (err)
		return luaL_error(L, "%s", err);
	return 0;
}

static int l_stop(lua_State *L)
{
	const char *err = stop(L);
	if (err)
		return luaL_error(L, "%s", err);
	return 0;
}

/* Moves the shadow stack to the state to (the frames it holds: the depth is kept). */
static void move_shadow(struct tally_agent_thread *to)
{
	struct tally_agent_thread *from = P.shadow;
	uint32_t n = from->depth < from->max_depth ? from->depth : from->max_depth;
	if (n > to->max_depth)
		n = to->max_depth;
	memcpy(to->frames, from->frames, n * sizeof(*to->frames));
	to->depth = from->depth;
	to->pc = from->pc;
	P.shadow = to;
}

/* tally.run(f, ...): f(...), its results returned. In mixed mode the shadow stack lives
 * in this function's native frame while f runs (a Lua error is caught and raised again
 * once the frame's record is closed: the hooks never write to a frame that is gone). */
static int l_run(lua_State *L)
{
	luaL_checkany(L, 1);
	int base = 1, n = lua_gettop(L) - 1;
	struct tally_agent *a = P.agent;
	if (!a || !P.mixed) {
		lua_call(L, n, LUA_MULTRET);
		return lua_gettop(L) - base + 1;
	}
	struct tally_agent_frame frames[SHADOW_FRAMES];
	struct tally_agent_loop loop;
	struct tally_agent_thread *outer = P.shadow, *t =
		tally_agent_loop_begin(a, &loop, frames, SHADOW_FRAMES);
	move_shadow(t);
	int status = lua_pcall(L, n, LUA_MULTRET, 0);
	if (P.agent == a && P.shadow == t) /* not stopped meanwhile */
		move_shadow(outer);
	tally_agent_loop_end(&loop);
	if (status != LUA_OK)
		return lua_error(L);
	return lua_gettop(L) - base + 1;
}

/* The state closes (the end of lua5.4, or os.exit(code, true)): write what was profiled. */
static int l_gc(lua_State *L)
{
	if (P.agent) {
		const char *err = stop(L);
		if (err)
			fprintf(stderr, "%s\n", err);
	}
	return 0;
}

/* Started by the environment: TALLY_LUA_MODE (sample, the default; exact; both; mixed;
 * timer; off), TALLY_LUA_OUTPUT, TALLY_LUA_EXACT_OUTPUT, TALLY_LUA_REGISTRY_DIR, TALLY_LUA_HZ. */
static void start_from_env(lua_State *L)
{
	const char *mode = getenv("TALLY_LUA_MODE"), *hz = getenv("TALLY_LUA_HZ");
	struct config c = { .mode = TALLY_AGENT_SAMPLE, .output = getenv("TALLY_LUA_OUTPUT"),
			    .exact_output = getenv("TALLY_LUA_EXACT_OUTPUT"),
			    .registry_dir = getenv("TALLY_LUA_REGISTRY_DIR") };
	if (mode && config_mode(mode, &c.mode)) {
		luaL_error(L, "tally: TALLY_LUA_MODE is sample, exact, both, mixed, timer or off, not %s",
			   mode);
		return;
	}
	if (hz) {
		char *end;
		unsigned long v = strtoul(hz, &end, 10);
		if (*end || !v || v > 100000) {
			luaL_error(L, "tally: TALLY_LUA_HZ is 1 to 100000, not %s", hz);
			return;
		}
		c.hz = (uint32_t)v;
	}
	if (!c.mode)
		return;
	const char *err = start(L, &c);
	if (err)
		luaL_error(L, "%s", err);
}

LUA_TALLY_API int luaopen_tally(lua_State *L)
{
	static const luaL_Reg fns[] = { { "start", l_start }, { "stop", l_stop }, { "run", l_run },
					{ NULL, NULL } };
	/* A value in the registry whose finalizer runs when the state closes. */
	if (lua_getfield(L, LUA_REGISTRYINDEX, "tally.closer") == LUA_TNIL) {
		lua_newuserdatauv(L, 1, 0);
		lua_createtable(L, 0, 1);
		lua_pushcfunction(L, l_gc);
		lua_setfield(L, -2, "__gc");
		lua_setmetatable(L, -2);
		lua_setfield(L, LUA_REGISTRYINDEX, "tally.closer");
		start_from_env(L);
	}
	lua_pop(L, 1);
	luaL_newlib(L, fns);
	return 1;
}
