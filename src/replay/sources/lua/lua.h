/*
 * The Lua frame source: the Lua 5.4 frames tally record read at each sample's instant
 * (ptrace mode: records of perf/interp_records.h's Lua section, handed over in time
 * order through the record op) spliced, as PROF_VM frames, in place of the Lua VM's own
 * native activations (docs/lua.md). A sample whose native frames and Lua frames do not
 * agree keeps its native frames, counted by reason.
 */
#ifndef TALLY_REPLAY_SOURCES_LUA_H
#define TALLY_REPLAY_SOURCES_LUA_H

#include <stdint.h>

#include "replay/sources/source.h"

struct replay_lua_stats {
	uint64_t records;       /* Lua stack records read */
	uint64_t samples;       /* samples with Lua frames spliced */
	uint64_t frames;        /* Lua frames, over all samples */
	uint64_t inconsistent;  /* Lua frames and native frames did not agree: kept native */
	uint64_t proto_unknown; /* a frame's prototype had no record */
	uint64_t read_failed;   /* stack records that say a read failed */
	uint64_t no_state;      /* stack records of threads without a running Lua state */
	uint64_t malformed;     /* records not understood, left out */
};

int replay_lua_source_new(const struct perf_data *d, struct replay_lua_stats *stats,
			  struct replay_frame_source *out);
extern const struct replay_source_type replay_lua_source;

#endif
