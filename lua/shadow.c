/*
 * The Lua module's shadow stack: the agent's record of the running Lua frames, which its
 * sampler reads, pushed and popped as functions are called and return (exact mode also
 * enters and exits the agent's calling-context tree), walked afresh from a lua_State's
 * real stack where it has to be rebuilt, and moved into tally.run's native frame in mixed
 * mode.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ltally.h"

uint64_t ltally_call_line(lua_State *L, int level)
{
	lua_Debug d;
	if (!lua_getstack(L, level, &d) || !lua_getinfo(L, "l", &d) || d.currentline < 0)
		return 0;
	return (uint64_t)d.currentline;
}

/* Call sites are needed by exact mode, and by mixed mode (the replay checks each frame's
 * pc against its function's lines). */
bool ltally_wants_call_lines(const struct ltally *s)
{
	return s->exact || s->mixed;
}

/* Keeps fr's object beside its shadow frame at depth d, for the return hook to compare;
 * without memory the frame has none and is not compared. */
static void keep_object(struct ltally *s, uint32_t d, const void *obj)
{
	if (d == s->objs_cap) {
		size_t cap = s->objs_cap ? s->objs_cap * 2 : 256;
		const void **o = realloc(s->objs, cap * sizeof(*o));
		if (o) {
			s->objs = o;
			s->objs_cap = cap;
		}
	}
	if (d < s->objs_cap)
		s->objs[d] = obj;
}

void ltally_shadow_enter(struct ltally *s, struct ltally_frame fr, uint64_t call_pc)
{
	keep_object(s, s->shadow->depth, fr.obj);
	TALLY_AGENT_PUSH(s->shadow, fr.id, call_pc);
	TALLY_AGENT_PC(s->shadow, fr.first);
	if (s->exact) {
		int rc = tally_agent_enter(s->t, fr.id, call_pc);
		if (rc)
			ltally_fail(s, rc);
	}
}

void ltally_shadow_leave(struct ltally *s)
{
	uint32_t d = s->shadow->depth;
	if (!d)
		return;
	/* The caller is back at the line it called from. */
	if (d <= s->shadow->max_depth)
		TALLY_AGENT_PC(s->shadow, s->shadow->frames[d - 1].call_pc);
	TALLY_AGENT_POP(s->shadow);
	if (s->exact) {
		int rc = tally_agent_exit(s->t);
		if (rc)
			ltally_fail(s, rc);
	}
}

void ltally_shadow_clear(struct ltally *s)
{
	while (s->shadow->depth)
		ltally_shadow_leave(s);
}

/* L's frames into s->walk, innermost first: how many (fewer when out of memory). */
size_t ltally_shadow_collect(struct ltally *s, lua_State *L)
{
	size_t n = 0;
	lua_Debug d;
	for (int level = 0; lua_getstack(L, level, &d); level++) {
		if (n == s->walk_cap) {
			size_t cap = s->walk_cap ? s->walk_cap * 2 : 64;
			struct ltally_frame *w = realloc(s->walk, cap * sizeof(*w));
			if (!w) {
				ltally_fail(s, -ENOMEM);
				break;
			}
			s->walk = w;
			s->walk_cap = cap;
		}
		s->walk[n++] = ltally_fn_frame(s, L, &d);
	}
	return n;
}

/* Enters L's frames, outermost first. */
void ltally_shadow_walk(struct ltally *s, lua_State *L)
{
	size_t n = ltally_shadow_collect(s, L);
	bool lines = ltally_wants_call_lines(s);
	for (size_t i = n; i-- > 0;)
		ltally_shadow_enter(s, s->walk[i], lines && i + 1 < n ? ltally_call_line(L, (int)i + 1) : 0);
}

/* Moves the shadow stack to the record to (the frames it holds: the depth is kept). */
void ltally_shadow_move(struct ltally *s, struct tally_agent_thread *to)
{
	struct tally_agent_thread *from = s->shadow;
	uint32_t n = from->depth < from->max_depth ? from->depth : from->max_depth;
	if (n > to->max_depth)
		n = to->max_depth;
	memcpy(to->frames, from->frames, n * sizeof(*to->frames));
	to->depth = from->depth;
	to->pc = from->pc;
	s->shadow = to;
}
