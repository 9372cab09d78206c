/*
 * The Lua module's function table: a function's identity is where it was defined and the
 * name it was called by (for Lua functions) or its C function pointer (C functions), kept
 * in an open-addressing hash table that maps it to an agent id; each is registered with
 * the agent once, the first time it is called, with its name and line table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "ltally.h"

/* A function as the hash table keeps it. For a Lua function, src is its chunk's source
 * string (ar.source) and line its first line; for a C function, src is the function
 * pointer and line -1. name is what lua_getinfo named it. The copies verify a hit: a
 * source string freed by the collector may be reused at the same address. */
struct ltally_fn_slot {
	const void *src;
	const char *name;
	int line;
	uint32_t id; /* 0: empty */
	char *src_copy, *name_copy;
};

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

static bool slot_matches(const struct ltally_fn_slot *s, const void *src, const char *name, int line)
{
	if (s->src != src || s->name != name || s->line != line)
		return false;
	if (line < 0)
		return true; /* a C function pointer stays what it is */
	return !strncmp(s->src_copy, src, SOURCE_CMP_MAX) &&
	       (name ? s->name_copy && !strcmp(s->name_copy, name) : !s->name_copy);
}

static int grow(struct ltally_fn_table *fns)
{
	size_t cap = fns->cap ? fns->cap * 2 : 1024;
	struct ltally_fn_slot *s = calloc(cap, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < fns->cap; i++) {
		const struct ltally_fn_slot *old = &fns->slots[i];
		if (!old->id)
			continue;
		size_t j = slot_hash(old->src, old->name, old->line) & (cap - 1);
		while (s[j].id)
			j = (j + 1) & (cap - 1);
		s[j] = *old;
	}
	free(fns->slots);
	fns->slots = s;
	fns->cap = cap;
	return 0;
}

void ltally_fn_table_free(struct ltally_fn_table *fns)
{
	for (size_t i = 0; i < fns->cap; i++) {
		free(fns->slots[i].src_copy);
		free(fns->slots[i].name_copy);
	}
	free(fns->slots);
	*fns = (struct ltally_fn_table){ .slots = NULL };
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
static uint32_t register_fn(struct ltally *s, lua_State *L, lua_Debug *ar, const void *src, int line)
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
	int rc = tally_agent_register(s->agent, &f, &id);
	free(lines);
	if (rc)
		ltally_fail(s, rc);
	return rc ? 0 : id;
}

/* The function object ar's frame runs (a pointer to compare, never followed). */
const void *ltally_fn_object(lua_State *L, lua_Debug *ar)
{
	lua_Debug d = *ar;
	if (!lua_checkstack(L, 1) || !lua_getinfo(L, "f", &d))
		return NULL;
	const void *obj = lua_topointer(L, -1);
	lua_pop(L, 1);
	return obj;
}

/* The slot of the key (src, name, line): its own, or the empty one where it goes. */
static struct ltally_fn_slot *find_slot(struct ltally_fn_table *fns, const void *src,
					const char *name, int line)
{
	size_t i = slot_hash(src, name, line) & (fns->cap - 1);
	while (fns->slots[i].id && !slot_matches(&fns->slots[i], src, name, line))
		i = (i + 1) & (fns->cap - 1);
	return &fns->slots[i];
}

/* Fills the empty slot sl with a new function, or the same key whose strings were
 * reused: a new entry. */
static void add_slot(struct ltally *s, struct ltally_fn_slot *sl, lua_State *L, lua_Debug *ar,
		     const void *src, const char *name, int line)
{
	bool is_c = line < 0;
	uint32_t id = register_fn(s, L, ar, src, line);
	char *sc = is_c ? NULL : strndup(src, SOURCE_CMP_MAX);
	char *nc = name ? strdup(name) : NULL;
	if (!id || (!is_c && !sc) || (name && !nc)) {
		free(sc);
		free(nc);
		ltally_fail(s, id ? -ENOMEM : s->failed);
		return;
	}
	*sl = (struct ltally_fn_slot){ src, name, line, id, sc, nc };
	s->fns.n++;
}

/* The frame of the function ar describes (a hook's or a lua_getstack's record): its id
 * and object. */
struct ltally_frame ltally_fn_frame(struct ltally *s, lua_State *L, lua_Debug *ar)
{
	/* the pushes of "f", "L" and global_name, on a coroutine's stack too */
	if (!lua_checkstack(L, 8) || !lua_getinfo(L, "Snf", ar))
		return (struct ltally_frame){ 0, NULL, 0 };
	bool is_c = *ar->what == 'C';
	struct ltally_frame fr = { 0, lua_topointer(L, -1),
				   is_c || ar->linedefined < 0 ? 0 : (uint64_t)ar->linedefined };
	const void *src = is_c ? (const void *)(uintptr_t)lua_tocfunction(L, -1) : ar->source;
	int line = is_c ? -1 : ar->linedefined;
	const char *name = is_c ? NULL : ar->name;
	if (s->fns.n * 2 >= s->fns.cap && grow(&s->fns)) {
		ltally_fail(s, -ENOMEM);
		lua_pop(L, 1);
		return fr;
	}
	struct ltally_fn_slot *sl = find_slot(&s->fns, src, name, line);
	if (!sl->id)
		add_slot(s, sl, L, ar, src, name, line);
	lua_pop(L, 1);
	fr.id = sl->id;
	return fr;
}
