/*
 * libFuzzer target for replay's reader of the Lua records (replay/sources/lua/payload.h)
 * and what replay computes from a prototype's record: every line (lua_line_of) and the
 * name each instruction would give the function it calls (lua_funcname), whose
 * findsetreg-like scans and OP_MOVE chains must stay bounded by the record.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "lua/lua.h"
#include "replay/sources/lua/payload.h"

/* The names block as lua_names arrays, the strings NUL-terminated in str. */
static void names_of(const struct replay_lua_payload *p, struct lua_names *n,
		     struct lua_kname *k, struct lua_locvar *loc, const char **upv, char *str)
{
	const uint8_t *d = p->names;
	*n = (struct lua_names){ .code = p->code, .ncode = p->ncode, .k = k, .loc = loc,
				 .upv = upv };
	for (unsigned i = 0; i < p->nkstr; i++, n->nk++) {
		memcpy(&k[i].index, d, 4);
		k[i].name = memcpy(str, d + 5, d[4]);
		str[d[4]] = 0, str += d[4] + 1, d += 5 + d[4];
	}
	for (unsigned i = 0; i < p->nlocvars; i++, n->nloc++) {
		memcpy(&loc[i].startpc, d, 4);
		memcpy(&loc[i].endpc, d + 4, 4);
		loc[i].name = memcpy(str, d + 9, d[8]);
		str[d[8]] = 0, str += d[8] + 1, d += 9 + d[8];
	}
	for (unsigned i = 0; i < p->nupvals; i++, n->nupv++) {
		upv[i] = memcpy(str, d + 1, d[0]);
		str[d[0]] = 0, str += d[0] + 1, d += 1 + d[0];
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct replay_lua_payload p;
	if (replay_lua_parse(data, size, &p)) {
		err_clear();
		return 0;
	}
	if (p.type == PERF_LUA_STACK) {
		for (uint32_t i = 0; i < p.nframes; i++)
			replay_lua_frame_at(&p, i);
		return 0;
	}
	static struct lua_kname k[65536];
	static struct lua_locvar loc[65536];
	static const char *upv[65536];
	static char str[2 * PERF_LUA_NAMES_MAX];
	static int32_t abs[2 * PERF_LUA_ABS_MAX];
	struct lua_names n;
	names_of(&p, &n, k, loc, upv, str);
	memcpy(abs, p.abs, (size_t)p.nabs * 8);
	for (uint32_t pc = 0; pc < p.ncode || pc < p.lineinfo_len; pc++) {
		const char *name, *table;
		lua_line_of(p.lineinfo, p.lineinfo_len, abs, p.nabs, p.linedefined, (int32_t)pc);
		lua_funcname(&n, (int32_t)pc, &name, &table);
	}
	return 0;
}
