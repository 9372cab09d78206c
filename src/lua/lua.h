/*
 * Lua 5.4's in-memory layouts, as tally reads them from a stopped process that has no
 * debug information (Debian's stripped lua5.4, liblua5.4.so.0): which release a mapped
 * file is (the "$LuaVersion: Lua 5.4.N" ident string lua.h's LUA_COPYRIGHT puts in every
 * build), the offsets of the few fields the frame walk reads (our own table, facts from
 * each release's lstate.h and lobject.h, x86-64), and the line of an instruction from a
 * prototype's lineinfo and abslineinfo (ldebug.c's rule). Nothing here reads memory.
 */
#ifndef TALLY_LUA_LUA_H
#define TALLY_LUA_LUA_H

#include <stddef.h>
#include <stdint.h>

/* Where the walk's fields lie in one release (byte offsets, x86-64 LP64). */
struct lua_layout {
	unsigned release;          /* N of 5.4.N */
	/* lua_State */
	uint16_t state_status, state_top, state_l_g, state_ci, state_stack, state_base_ci,
		state_size;
	/* global_State */
	uint16_t g_mainthread;
	/* CallInfo */
	uint16_t ci_func, ci_previous, ci_savedpc, ci_callstatus, ci_size;
	uint16_t cist_c, cist_tail;
	/* closures (LClosure's p, CClosure's f: the same place) */
	uint16_t cl_proto, cl_cfunc, cl_size;
	/* Proto */
	uint16_t p_sizecode, p_sizelineinfo, p_sizeabslineinfo, p_linedefined,
		p_lastlinedefined, p_code, p_lineinfo, p_abslineinfo, p_source, p_size;
	uint16_t p_sizeupvalues, p_sizek, p_sizelocvars, p_k, p_upvalues, p_locvars;
	/* a TValue (k), a LocVar (varname, startpc, endpc), an Upvaldesc (name first) */
	uint16_t tvalue_size, locvar_size, locvar_startpc, locvar_endpc, upvaldesc_size;
	/* TString */
	uint16_t ts_shrlen, ts_lnglen, ts_contents;
};

/* Type tags: a GC object's own tt byte, and a TValue's tt_ (collectable ones with
 * BIT_ISCOLLECTABLE, 0x40): lobject.h's makevariant(LUA_T*, variant). The same in every
 * 5.4 release. */
#define LUA_TAG_THREAD 0x08     /* LUA_VTHREAD */
#define LUA_TAG_LCL 0x06        /* LUA_VLCL, a Lua closure */
#define LUA_TAG_LCF 0x16        /* LUA_VLCF, a light C function (not collectable) */
#define LUA_TAG_CCL 0x26        /* LUA_VCCL, a C closure */
#define LUA_TAG_PROTO 0x0a      /* LUA_VPROTO */
#define LUA_TAG_SHRSTR 0x04     /* LUA_VSHRSTR */
#define LUA_TAG_LNGSTR 0x14     /* LUA_VLNGSTR */
#define LUA_TAG_COLLECTABLE 0x40 /* BIT_ISCOLLECTABLE */
#define LUA_TAG_TYPE_MASK 0x0f   /* a tag's basic type (LUA_TSTRING: 4) */

/* ldebug.h: a lineinfo byte that says "see abslineinfo"; lineinfo deltas are signed. */
#define LUA_ABSLINEINFO (-0x80)

/* The release named by the ident string in buf (a file's bytes): 0 with *release set to
 * N of 5.4.N; -ENOENT when buf holds no Lua ident; -ENOTSUP for another version (a 5.1-5.3
 * or 5.5 ident), with *major and *minor set. */
int lua_release_in(const void *buf, size_t n, unsigned *major, unsigned *minor,
		   unsigned *release);

/* The layout of 5.4.release, NULL for a release whose layout is not in the table. */
const struct lua_layout *lua_layout_of(unsigned release);

/* The line of instruction pc (0-based) of a function defined at linedefined, from its
 * lineinfo (nlineinfo signed deltas, one per instruction) and abslineinfo (nabs pairs
 * pc, line): luaG_getfuncline's rule. -1 when the function has no line information or
 * pc lies outside it. Bounded by what it is given (the input may be hostile). */
int32_t lua_line_of(const int8_t *lineinfo, uint32_t nlineinfo, const int32_t *abs_pairs,
		    uint32_t nabs, int32_t linedefined, int32_t pc);

/* What a function's name is worked out from (ldebug.c's funcnamefromcode): the calling
 * function's code, its string constants by index, its local variables and its upvalues'
 * names. Arrays of what a record held (cut short ones simply know fewer names). */
struct lua_kname {
	uint32_t index;
	const char *name;
};
struct lua_locvar {
	int32_t startpc, endpc;
	const char *name;
};
struct lua_names {
	const uint8_t *code; /* ncode instructions, 4 bytes each, little-endian, unaligned */
	uint32_t ncode;
	const struct lua_kname *k; /* ascending index */
	uint32_t nk;
	const struct lua_locvar *loc;
	uint32_t nloc;
	const char *const *upv;
	uint32_t nupv;
};

/* The name the function called by instruction pc of p goes by, as Lua's debug
 * information gives it: its kind ("global", "local", "method", "field", "upvalue",
 * "constant", "for iterator", "metamethod"), *name, and for a field of a global table
 * *table that global's name (string.rep: "field", "rep", "string"), else NULL. NULL when
 * there is none. Bounded by what p holds (hostile input). */
const char *lua_funcname(const struct lua_names *p, int32_t pc, const char **name,
			 const char **table);

#endif
