/*
 * A called function's name from its caller's code (lua.h's lua_funcname): ldebug.c's
 * funcnamefromcode, getobjname and findsetreg, written over our own decoding of Lua 5.4's
 * instructions. The facts: an instruction is op (7 bits), A (8, from bit 7), k (bit 15),
 * B (8, from bit 16), C (8, from bit 24), Bx (17, from bit 15), sJ (25 from bit 7, offset
 * 2^24 - 1); the opcode numbers of lopcodes.h (the same from 5.4.0 to 5.4.8); which
 * opcodes set register A and which are metamethod fallbacks (lopcodes.c's opmodes).
 */
#include "lua/lua.h"

#include <stdbool.h>
#include <string.h>

enum {
	OP_MOVE = 0, OP_LOADK = 3, OP_LOADKX = 4, OP_LOADNIL = 8, OP_GETUPVAL = 9,
	OP_GETTABUP = 11, OP_GETTABLE = 12, OP_GETI = 13, OP_GETFIELD = 14, OP_SETTABUP = 15,
	OP_SETTABLE = 16, OP_SETI = 17, OP_SETFIELD = 18, OP_SELF = 20, OP_MMBIN = 46,
	OP_MMBINI = 47, OP_MMBINK = 48, OP_UNM = 49, OP_BNOT = 50, OP_LEN = 52, OP_CONCAT = 53,
	OP_CLOSE = 54, OP_JMP = 56, OP_EQ = 57, OP_LT = 58, OP_LE = 59, OP_LTI = 62,
	OP_LEI = 63, OP_GTI = 64, OP_GEI = 65, OP_CALL = 68, OP_TAILCALL = 69, OP_RETURN = 70,
	OP_TFORCALL = 76, OP_EXTRAARG = 82,
};

/* Opcodes that set register A (opmodes' bit 3), as a bitmap of 83 bits. */
static bool sets_a(unsigned op)
{
	static const uint8_t a[] = { 0xff, 0x7b, 0xf8, 0xff, 0xff, 0x3f, 0x3e, 0x00, 0x38,
				     0xa6, 0x03 };
	return op < 83 && a[op / 8] >> (op % 8) & 1;
}

#define MAX_DEPTH 16 /* OP_MOVE chains followed at most */

static uint32_t insn(const struct lua_names *p, int32_t pc)
{
	uint32_t i;
	memcpy(&i, p->code + (size_t)pc * 4, 4);
	return i;
}

#define OP(i) ((i) & 0x7f)
#define A(i) ((int)((i) >> 7 & 0xff))
#define K(i) ((i) >> 15 & 1)
#define B(i) ((int)((i) >> 16 & 0xff))
#define C(i) ((int)((i) >> 24 & 0xff))
#define BX(i) ((uint32_t)((i) >> 15))
#define AX(i) ((uint32_t)((i) >> 7))
#define SJ(i) ((int32_t)((i) >> 7 & 0x1ffffff) - 0xffffff)

static const char *kname(const struct lua_names *p, uint32_t index)
{
	uint32_t lo = 0, hi = p->nk;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (p->k[mid].index < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nk && p->k[lo].index == index ? p->k[lo].name : NULL;
}

/* luaF_getlocalname: the n-th (from 1) local active at pc. */
static const char *local_name(const struct lua_names *p, int n, int32_t pc)
{
	for (uint32_t i = 0; i < p->nloc && p->loc[i].startpc <= pc; i++)
		if (pc < p->loc[i].endpc && --n == 0)
			return p->loc[i].name;
	return NULL;
}

/* The last instruction before lastpc that set reg unconditionally, -1 when none. */
static int32_t find_set(const struct lua_names *p, int32_t lastpc, int reg)
{
	if (lastpc < (int32_t)p->ncode && OP(insn(p, lastpc)) >= OP_MMBIN &&
	    OP(insn(p, lastpc)) <= OP_MMBINK)
		lastpc--; /* the instruction before did not run: it fell back to this */
	int32_t setreg = -1, jmptarget = 0;
	for (int32_t pc = 0; pc < lastpc && pc < (int32_t)p->ncode; pc++) {
		uint32_t i = insn(p, pc);
		int a = A(i);
		bool change;
		switch (OP(i)) {
		case OP_LOADNIL:
			change = a <= reg && reg <= a + B(i);
			break;
		case OP_TFORCALL:
			change = reg >= a + 2;
			break;
		case OP_CALL:
		case OP_TAILCALL:
			change = reg >= a;
			break;
		case OP_JMP: {
			int64_t dest = (int64_t)pc + 1 + SJ(i);
			if (dest <= lastpc && dest > jmptarget)
				jmptarget = (int32_t)dest;
			change = false;
			break;
		}
		default:
			change = sets_a(OP(i)) && reg == a;
		}
		if (change)
			setreg = pc < jmptarget ? -1 : pc;
	}
	return setreg;
}

static const char *object_name(const struct lua_names *p, int32_t lastpc, int reg,
			       const char **name, const char **table, int depth);

static const char *upvalue_name(const struct lua_names *p, int index)
{
	return index >= 0 && (uint32_t)index < p->nupv ? p->upv[index] : NULL;
}

/* "global" or "field" for an indexing: global when the table is _ENV. *table: for a
 * field of a global table, that global's name. */
static const char *global_or_field(const struct lua_names *p, int32_t pc, uint32_t i,
				   bool up, const char **table, int depth)
{
	const char *t = NULL, *tt = NULL, *what = NULL;
	if (up)
		t = upvalue_name(p, B(i));
	else
		what = object_name(p, pc, B(i), &t, &tt, depth + 1);
	if (t && !strcmp(t, "_ENV"))
		return "global";
	*table = what && !strcmp(what, "global") ? t : NULL;
	return "field";
}

static const char *object_name(const struct lua_names *p, int32_t lastpc, int reg,
			       const char **name, const char **table, int depth)
{
	*name = NULL;
	*table = NULL;
	if (depth > MAX_DEPTH)
		return NULL;
	if ((*name = local_name(p, reg + 1, lastpc)))
		return "local";
	int32_t pc = find_set(p, lastpc, reg);
	if (pc < 0)
		return NULL;
	uint32_t i = insn(p, pc);
	switch (OP(i)) {
	case OP_MOVE:
		if (B(i) < A(i))
			return object_name(p, pc, B(i), name, table, depth + 1);
		return NULL;
	case OP_GETTABUP:
		*name = kname(p, (uint32_t)C(i));
		return global_or_field(p, pc, i, true, table, depth);
	case OP_GETFIELD:
		*name = kname(p, (uint32_t)C(i));
		return global_or_field(p, pc, i, false, table, depth);
	case OP_GETTABLE: {
		const char *kt, *w = object_name(p, pc, C(i), name, &kt, depth + 1);
		if (!w || strcmp(w, "constant"))
			*name = "?";
		return global_or_field(p, pc, i, false, table, depth);
	}
	case OP_GETI:
		*name = "integer index";
		return "field";
	case OP_GETUPVAL:
		*name = upvalue_name(p, B(i));
		return "upvalue";
	case OP_LOADK:
		return (*name = kname(p, BX(i))) ? "constant" : NULL;
	case OP_LOADKX:
		if (pc + 1 >= (int32_t)p->ncode || OP(insn(p, pc + 1)) != OP_EXTRAARG)
			return NULL;
		return (*name = kname(p, AX(insn(p, pc + 1)))) ? "constant" : NULL;
	case OP_SELF:
		if (K(i))
			*name = kname(p, (uint32_t)C(i));
		else {
			const char *kt;
			const char *w = object_name(p, pc, C(i), name, &kt, depth + 1);
			if (!w || strcmp(w, "constant"))
				*name = "?";
		}
		return "method";
	default:
		return NULL;
	}
}

/* ltm.c's event names, in TMS order (TM_INDEX first), for calls made by metamethods. */
static const char *const events[] = {
	"index", "newindex", "gc", "mode", "len", "eq", "add", "sub", "mul", "mod", "pow",
	"div", "idiv", "band", "bor", "bxor", "shl", "shr", "unm", "bnot", "lt", "le",
	"concat", "call", "close",
};

const char *lua_funcname(const struct lua_names *p, int32_t pc, const char **name,
			 const char **table)
{
	*name = NULL;
	*table = NULL;
	if (pc < 0 || (uint32_t)pc >= p->ncode)
		return NULL;
	uint32_t i = insn(p, pc);
	int tm;
	switch (OP(i)) {
	case OP_CALL:
	case OP_TAILCALL: {
		const char *what = object_name(p, pc, A(i), name, table, 0);
		return what && *name ? what : NULL;
	}
	case OP_TFORCALL:
		*name = "for iterator";
		return "for iterator";
	case OP_SELF: case OP_GETTABUP: case OP_GETTABLE: case OP_GETI: case OP_GETFIELD:
		tm = 0;
		break;
	case OP_SETTABUP: case OP_SETTABLE: case OP_SETI: case OP_SETFIELD:
		tm = 1;
		break;
	case OP_MMBIN: case OP_MMBINI: case OP_MMBINK:
		tm = C(i);
		break;
	case OP_UNM: tm = 18; break;
	case OP_BNOT: tm = 19; break;
	case OP_LEN: tm = 4; break;
	case OP_CONCAT: tm = 22; break;
	case OP_EQ: tm = 5; break;
	case OP_LT: case OP_LTI: case OP_GTI: tm = 20; break;
	case OP_LE: case OP_LEI: case OP_GEI: tm = 21; break;
	case OP_CLOSE: case OP_RETURN: tm = 24; break;
	default:
		return NULL;
	}
	if (tm < 0 || (size_t)tm >= sizeof(events) / sizeof(events[0]))
		return NULL;
	*name = events[tm];
	return "metamethod";
}
