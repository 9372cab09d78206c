/*
 * The Lua records (perf/interp_records.h, Lua's section) as replay reads them from the
 * raw data of interpreter-record samples. The parser takes hostile bytes: every length is
 * checked against the raw size (padded to 8 bytes: the payload's own lengths say where it
 * ends).
 */
#ifndef TALLY_REPLAY_SOURCES_LUA_PAYLOAD_H
#define TALLY_REPLAY_SOURCES_LUA_PAYLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf/interp_records.h"

/* One payload, pointing into the bytes it was parsed from. */
struct replay_lua_payload {
	uint16_t type;  /* PERF_LUA_STACK or PERF_LUA_PROTO */
	uint16_t flags;
	uint32_t pid, tid; /* tid: stacks only */
	uint32_t nframes;  /* stack: struct perf_lua_frame each, unaligned */
	const uint8_t *frames;
	/* proto */
	uint64_t proto;
	int32_t linedefined;
	const char *source; /* as Lua keeps it, not NUL-terminated */
	uint16_t source_len;
	const int8_t *lineinfo;
	uint32_t lineinfo_len;
	const uint8_t *abs; /* nabs pairs of __s32 pc, line, unaligned */
	uint32_t nabs;
	const uint8_t *code; /* ncode instructions */
	uint32_t ncode;
	const uint8_t *names; /* the names block, checked whole (interp_records.h) */
	uint32_t names_len;
	uint16_t nkstr, nlocvars, nupvals;
};

/* Whether the raw bytes start with the Lua records' magic. */
bool replay_lua_is_payload(const uint8_t *raw, size_t size);
/* 0, or -EINVAL with the message saying what is wrong ("lua record: ..."). */
int replay_lua_parse(const uint8_t *raw, size_t size, struct replay_lua_payload *out);
/* The i-th frame (i < p->nframes) of a parsed stack. */
struct perf_lua_frame replay_lua_frame_at(const struct replay_lua_payload *p, uint32_t i);

#endif
