/*
 * Rebuilding the Lua module's shadow stack from the real stacks when the hooks lost track
 * of it: a switch to another coroutine, or frames an error unwound without return hooks.
 * A coroutine's frames sit above those of the coroutines that resumed it, so the module
 * keeps the chain of resumers (each running its resume call, so alive while it is in the
 * chain) and a rebuild walks each of them, oldest first.
 */
#include "ltally.h"

/* Whether L is running a resume of another coroutine: it has frames and has not yielded
 * (a dead coroutine has none, a suspended one has yielded). */
static bool resuming(lua_State *L)
{
	lua_Debug d;
	return lua_status(L) == LUA_OK && lua_getstack(L, 0, &d);
}

/* The chain as it is with L running. Coming from cur, L is either one of cur's resumers
 * (cur yielded, returned or failed) or a coroutine cur resumed. */
static void follow(struct ltally_coroutines *co, lua_State *L)
{
	size_t k = co->nchain;
	while (k && co->chain[k - 1] != L)
		k--;
	if (k)
		co->nchain = k - 1;
	else if (co->cur && co->cur != L && !co->chain_lost && resuming(co->cur)) {
		if (co->nchain < LTALLY_CHAIN_MAX)
			co->chain[co->nchain++] = co->cur;
		else
			co->chain_lost = true;
	}
	if (co->chain_lost)
		co->nchain = 0;
}

/* Replaces the shadow stack by the real stacks of L and the coroutines that resumed it. */
void ltally_rebuild(struct ltally *s, lua_State *L)
{
	ltally_shadow_clear(s);
	follow(&s->co, L);
	for (size_t i = 0; i < s->co.nchain; i++)
		ltally_shadow_walk(s, s->co.chain[i]);
	ltally_shadow_walk(s, L);
	s->co.cur = L;
}
