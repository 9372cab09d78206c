/*
 * Parsing the Lua records (payload.h).
 */
#include "replay/sources/lua/payload.h"

#include <errno.h>
#include <string.h>

#include "base/err.h"

bool replay_lua_is_payload(const uint8_t *raw, size_t size)
{
	uint32_t magic;
	if (size < 4)
		return false;
	memcpy(&magic, raw, 4);
	return magic == PERF_LUA_MAGIC;
}

static int parse_stack(const uint8_t *raw, size_t size, struct replay_lua_payload *out)
{
	struct perf_lua_stack_head h;
	if (size < sizeof(h))
		return err_set(-EINVAL, "lua record: a stack of %zu bytes", size);
	memcpy(&h, raw, sizeof(h));
	if (h.nframes > PERF_LUA_MAX_FRAMES ||
	    (size - sizeof(h)) / sizeof(struct perf_lua_frame) < h.nframes)
		return err_set(-EINVAL, "lua record: %u frames in %zu bytes", h.nframes, size);
	*out = (struct replay_lua_payload){ .type = h.type, .flags = h.flags, .pid = h.pid,
					    .tid = h.tid, .nframes = h.nframes,
					    .frames = raw + sizeof(h) };
	return 0;
}

/* Whether the names block holds its counts' entries, each within it. */
static bool names_fit(const uint8_t *d, size_t n, const struct perf_lua_proto_head *h)
{
	size_t at = 0;
	const size_t heads[3] = { 4, 8, 0 };
	const unsigned counts[3] = { h->nkstr, h->nlocvars, h->nupvals };
	for (int kind = 0; kind < 3; kind++)
		for (unsigned i = 0; i < counts[kind]; i++) {
			if (n - at < heads[kind] + 1)
				return false;
			at += heads[kind];
			size_t len = d[at++];
			if (len > PERF_LUA_NAME_MAX || n - at < len)
				return false;
			at += len;
		}
	return at == n;
}

static int parse_proto(const uint8_t *raw, size_t size, struct replay_lua_payload *out)
{
	struct perf_lua_proto_head h;
	if (size < sizeof(h))
		return err_set(-EINVAL, "lua record: a prototype of %zu bytes", size);
	memcpy(&h, raw, sizeof(h));
	uint64_t need = (uint64_t)h.source_len + h.lineinfo_len + (uint64_t)h.nabs * 8 +
			(uint64_t)h.ncode * 4 + h.names_len;
	if (h.source_len > PERF_LUA_SOURCE_MAX || h.lineinfo_len > PERF_LUA_LINEINFO_MAX ||
	    h.nabs > PERF_LUA_ABS_MAX || h.ncode > PERF_LUA_CODE_MAX ||
	    h.names_len > PERF_LUA_NAMES_MAX || need > size - sizeof(h))
		return err_set(-EINVAL, "lua record: a prototype's lengths (%u, %u, %u pairs, %u "
			       "instructions, %u) run past its %zu bytes", h.source_len,
			       h.lineinfo_len, h.nabs, h.ncode, h.names_len, size);
	const uint8_t *d = raw + sizeof(h), *code = d + h.source_len + h.lineinfo_len + h.nabs * 8;
	if (!names_fit(code + (size_t)h.ncode * 4, h.names_len, &h))
		return err_set(-EINVAL, "lua record: a prototype's names (%u, %u, %u) do not "
			       "fill their %u bytes", h.nkstr, h.nlocvars, h.nupvals, h.names_len);
	*out = (struct replay_lua_payload){
		.type = h.type, .flags = h.flags, .pid = h.pid, .proto = h.proto,
		.linedefined = h.linedefined, .source = (const char *)d,
		.source_len = h.source_len, .lineinfo = (const int8_t *)(d + h.source_len),
		.lineinfo_len = h.lineinfo_len, .abs = d + h.source_len + h.lineinfo_len,
		.nabs = h.nabs, .code = code, .ncode = h.ncode,
		.names = code + (size_t)h.ncode * 4, .names_len = h.names_len,
		.nkstr = h.nkstr, .nlocvars = h.nlocvars, .nupvals = h.nupvals,
	};
	return 0;
}

int replay_lua_parse(const uint8_t *raw, size_t size, struct replay_lua_payload *out)
{
	uint16_t type;
	if (!replay_lua_is_payload(raw, size) || size < 8)
		return err_set(-EINVAL, "lua record: no magic");
	memcpy(&type, raw + 4, 2);
	if (type == PERF_LUA_STACK)
		return parse_stack(raw, size, out);
	if (type == PERF_LUA_PROTO)
		return parse_proto(raw, size, out);
	return err_set(-EINVAL, "lua record: type %u", type);
}

struct perf_lua_frame replay_lua_frame_at(const struct replay_lua_payload *p, uint32_t i)
{
	struct perf_lua_frame f;
	memcpy(&f, p->frames + (size_t)i * sizeof(f), sizeof(f));
	return f;
}
