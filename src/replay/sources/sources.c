/*
 * The frame sources, in the order the namer asks them about a frame. Python, Ruby and Lua
 * first: the eval loops' frames are the interpreters', in a file, which the others would
 * name. The agent's VM frames next, for the same reason. jitdump before perf maps: a dump
 * names code by the moment of the sample, with lines.
 */
#include "replay/sources/sources.h"

#include <errno.h>

#include "base/err.h"

#include "replay/sources/jitdump/jitdump.h"
#include "replay/sources/lua/lua.h"
#include "replay/sources/perfmap/perfmap.h"
#include "replay/sources/python/python.h"
#include "replay/sources/ruby/ruby.h"
#include "replay/sources/vm/vm.h"

static const struct replay_source_type *const listed[] = {
	&replay_python_source,
	&replay_ruby_source,
	&replay_lua_source,
	&replay_vm_source,
	&replay_jitdump_source,
	&replay_perfmap_source,
};

#define NLISTED (sizeof(listed) / sizeof(listed[0]))

void replay_sources_close(const struct replay_frame_source *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].ops->close)
			v[i].ops->close(v[i].self);
}

int replay_sources_open(struct perf_data *d, struct replay_frame_source *out, size_t cap,
			size_t *n)
{
	*n = 0;
	for (size_t i = 0; i < NLISTED; i++) {
		struct replay_frame_source src;
		int r = listed[i]->open(d, &src);
		if (!r && src.ops && *n == cap) {
			replay_sources_close(&src, 1);
			r = err_set(-E2BIG, "more than %zu frame sources", cap);
		}
		if (r) {
			replay_sources_close(out, *n);
			*n = 0;
			return r;
		}
		if (src.ops)
			out[(*n)++] = src;
	}
	return 0;
}
