/*
 * Lua 5.4's layouts by release (lua.h). One table row per group of releases whose fields
 * lie alike, each offset worked out from that release's lstate.h and lobject.h (x86-64:
 * pointers and size_t 8 bytes, int 4, a struct aligned to its widest member):
 *  - lua_State: CommonHeader (next 0, tt 8, marked 9), status 10, allowhook 11, nci 12,
 *    top 16, l_G 24, ci 32 in every 5.4. 5.4.0 keeps 'const Instruction *oldpc' after ci
 *    (5.4.1 turned it into an int at the end): stack at 56, then 48. 5.4.3 added 'StkId
 *    tbclist' after openupval: base_ci (a CallInfo, 64 bytes) at 96, 88, 96.
 *  - global_State: ten words, the string table (16), l_registry and nilvalue (TValues, 16
 *    each), seed, ten lu_byte GC fields (eleven from 5.4.3: gcstopem) padded to 112, then
 *    the GC lists: 5.4.0 has 16 of them before twups and panic, 5.4.1 on 17 (old1,
 *    firstold1, finobjold1): mainthread at 256 and 264.
 *  - CallInfo: func 0, top 8, previous 16, next 24, u.l.savedpc 32, u2 56, nresults 60,
 *    callstatus 62 (5.4.6's StkIdRel is a union of the same size). CIST_C is 1 << 1
 *    throughout; 5.4.2 inserted CIST_FRESH at bit 2, moving CIST_TAIL from bit 4 to 5.
 *  - LClosure and CClosure: ClosureHeader (CommonHeader, nupvalues 10, gclist 16), then
 *    p or f at 24.
 *  - Proto: lu_bytes at 10-12, then eleven ints from 16 (sizeupvalues, sizek, sizecode 24,
 *    sizelineinfo 28, sizep, sizelocvars, sizeabslineinfo 40, linedefined 44,
 *    lastlinedefined 48), then pointers from 56 (k, code 64, p, upvalues 80, lineinfo 88,
 *    abslineinfo 96, locvars 104, source 112, gclist): unchanged from 5.4.0 to 5.4.8.
 *    TValue: value 0, tt_ 8 (16 bytes); LocVar: varname 0, startpc 8, endpc 12;
 *    Upvaldesc: name 0, then three bytes (16).
 *  - TString: extra 10, shrlen 11, hash 12, u.lnglen 16, contents 24 (5.4.7 marks a long
 *    string's shrlen 0xff; its tt tells the same).
 */
#include "lua/lua.h"

#include <errno.h>
#include <string.h>

#define COMMON                                                                       \
	.state_status = 10, .state_top = 16, .state_l_g = 24, .state_ci = 32,         \
	.ci_func = 0,                                                                 \
	.ci_previous = 16, .ci_savedpc = 32, .ci_callstatus = 62, .ci_size = 64,      \
	.cist_c = 1u << 1, .cl_proto = 24, .cl_cfunc = 24, .cl_size = 32,             \
	.p_sizecode = 24, .p_sizelineinfo = 28, .p_sizeabslineinfo = 40,             \
	.p_linedefined = 44, .p_lastlinedefined = 48, .p_code = 64, .p_lineinfo = 88, \
	.p_abslineinfo = 96, .p_source = 112, .p_size = 128, .ts_shrlen = 11,         \
	.ts_lnglen = 16, .ts_contents = 24, .p_sizeupvalues = 16, .p_sizek = 20,          \
	.p_sizelocvars = 36, .p_k = 56, .p_upvalues = 80, .p_locvars = 104,           \
	.tvalue_size = 16, .locvar_size = 16, .locvar_startpc = 8, .locvar_endpc = 12, \
	.upvaldesc_size = 16

static const struct lua_layout layouts[] = {
	{ .release = 0, COMMON, .state_stack = 56, .state_base_ci = 96,
	  .state_size = 200, .g_mainthread = 256,
	  .cist_tail = 1u << 4 },
	{ .release = 1, COMMON, .state_stack = 48, .state_base_ci = 88,
	  .state_size = 192, .g_mainthread = 264,
	  .cist_tail = 1u << 4 },
	{ .release = 2, COMMON, .state_stack = 48, .state_base_ci = 88,
	  .state_size = 192, .g_mainthread = 264,
	  .cist_tail = 1u << 5 },
	{ .release = 3, COMMON, .state_stack = 48, .state_base_ci = 96,
	  .state_size = 200, .g_mainthread = 264,
	  .cist_tail = 1u << 5 },
	{ .release = 4, COMMON, .state_stack = 48, .state_base_ci = 96,
	  .state_size = 200, .g_mainthread = 264,
	  .cist_tail = 1u << 5 },
	{ .release = 5, COMMON, .state_stack = 48, .state_base_ci = 96,
	  .state_size = 200, .g_mainthread = 264,
	  .cist_tail = 1u << 5 },
	{ .release = 6, COMMON, .state_stack = 48, .state_base_ci = 96,
	  .state_size = 200, .g_mainthread = 264,
	  .cist_tail = 1u << 5 },
	{ .release = 7, COMMON, .state_stack = 48, .state_base_ci = 96,
	  .state_size = 200, .g_mainthread = 264,
	  .cist_tail = 1u << 5 },
	{ .release = 8, COMMON, .state_stack = 48, .state_base_ci = 96,
	  .state_size = 200, .g_mainthread = 264,
	  .cist_tail = 1u << 5 },
};

const struct lua_layout *lua_layout_of(unsigned release)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].release == release)
			return &layouts[i];
	return NULL;
}

/* A decimal number at *p (at most 3 digits) before end: its value, or -1. */
static int number(const char **p, const char *end)
{
	int v = -1;
	for (int k = 0; k < 3 && *p < end && **p >= '0' && **p <= '9'; k++, (*p)++)
		v = (v < 0 ? 0 : v * 10) + (**p - '0');
	return v;
}

int lua_release_in(const void *buf, size_t n, unsigned *major, unsigned *minor,
		   unsigned *release)
{
	static const char tag[] = "$LuaVersion: Lua ";
	const char *at = memmem(buf, n, tag, sizeof(tag) - 1), *end = (const char *)buf + n;
	if (!at)
		return -ENOENT;
	const char *p = at + sizeof(tag) - 1;
	int ma = number(&p, end), mi = -1, re = -1;
	if (p < end && *p == '.') {
		p++;
		mi = number(&p, end);
	}
	if (p < end && *p == '.') {
		p++;
		re = number(&p, end);
	}
	if (ma < 0 || mi < 0)
		return -ENOENT;
	*major = (unsigned)ma;
	*minor = (unsigned)mi;
	*release = re < 0 ? 0 : (unsigned)re;
	return ma == 5 && mi == 4 && re >= 0 ? 0 : -ENOTSUP;
}

int32_t lua_line_of(const int8_t *lineinfo, uint32_t nlineinfo, const int32_t *abs_pairs,
		    uint32_t nabs, int32_t linedefined, int32_t pc)
{
	if (!nlineinfo || pc < 0 || (uint32_t)pc >= nlineinfo)
		return -1;
	/* The last absolute line at or before pc (the pairs ascend by pc), then the
	 * deltas after it. Lua's estimate pc / MAXIWTHABS is only a starting point for
	 * the same search. */
	int64_t line = linedefined;
	int32_t base = -1;
	uint32_t lo = 0, hi = nabs;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (abs_pairs[2 * mid] <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo) {
		base = abs_pairs[2 * (lo - 1)];
		line = abs_pairs[2 * (lo - 1) + 1];
		if (base < -1)
			base = -1;
	}
	for (int32_t k = base + 1; k <= pc; k++)
		if (lineinfo[k] != LUA_ABSLINEINFO)
			line += lineinfo[k];
	return line < 0 || line > INT32_MAX ? -1 : (int32_t)line;
}
