/*
 * The Lua module's call, return and count hook (sample, exact and mixed modes): keeps the
 * shadow stack in step with the real one, incrementally while the same lua_State runs,
 * by a rebuild when another one does or an error unwound frames without return hooks;
 * exact mode's count hook charges one unit to the current line of the running function.
 */
#include "ltally.h"

static void on_count(struct ltally *s, lua_State *L, lua_Debug *ar)
{
	if (L != s->co.cur)
		ltally_rebuild(s, L);
	int rc = lua_getinfo(L, "l", ar) ? tally_agent_cost(s->t, (uint64_t)ar->currentline, 1) : 0;
	if (rc)
		ltally_fail(s, rc);
}

/* A tail call replaces its caller's frame; no return event will come for it. */
static void on_tail_call(struct ltally *s, lua_State *L, lua_Debug *ar)
{
	uint32_t d = s->shadow->depth;
	uint64_t from = s->mixed && d && d <= s->shadow->max_depth ? s->shadow->frames[d - 1].call_pc : 0;
	ltally_shadow_leave(s);
	ltally_shadow_enter(s, ltally_fn_frame(s, L, ar), from);
}

/* The shadow's top is the function returning, unless an error unwound frames that never
 * returned: compared by object, which costs no lookup. */
static void on_return(struct ltally *s, lua_State *L, lua_Debug *ar)
{
	uint32_t d = s->shadow->depth;
	if (!d || (d <= s->objs_cap && s->objs[d - 1] != ltally_fn_object(L, ar)))
		ltally_rebuild(s, L);
	ltally_shadow_leave(s);
}

void ltally_hook(lua_State *L, lua_Debug *ar)
{
	struct ltally *s = ltally_state();
	if (!s->agent) {
		lua_sethook(L, NULL, 0, 0); /* a coroutine that inherited the hook before stop */
		return;
	}
	if (ar->event == LUA_HOOKCOUNT) {
		on_count(s, L, ar);
		return;
	}
	if (L != s->co.cur) {
		ltally_rebuild(s, L); /* level 0 is the function called, tail-called or returning */
		if (ar->event == LUA_HOOKRET)
			ltally_shadow_leave(s);
		return;
	}
	switch (ar->event) {
	case LUA_HOOKCALL:
		ltally_shadow_enter(s, ltally_fn_frame(s, L, ar),
				    ltally_wants_call_lines(s) ? ltally_call_line(L, 1) : 0);
		break;
	case LUA_HOOKTAILCALL:
		on_tail_call(s, L, ar);
		break;
	case LUA_HOOKRET:
		on_return(s, L, ar);
		break;
	}
}
