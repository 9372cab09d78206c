/*
 * The public symbolization API of include/tally/tally.h, over src/symbolize.
 */
#include <string.h>

#include "symbolize/symbolize.h"

/* struct tally_symbolizer is the public name of struct sym_module. */
int tally_symbolizer_open(const char *path, const struct tally_symbolizer_opts *opts,
			  struct tally_symbolizer **out)
{
	struct sym_opts o = { 0 };
	if (opts && opts->sz >= offsetof(struct tally_symbolizer_opts, no_demangle) + sizeof(bool)) {
		o.debug_dir = opts->debug_dir;
		o.no_demangle = opts->no_demangle;
	}
	if (opts && opts->sz >= offsetof(struct tally_symbolizer_opts, debug_cache) + sizeof(bool))
		o.debug_cache = opts->debug_cache;
	return sym_open(path, &o, (struct sym_module **)out);
}

int tally_symbolize(struct tally_symbolizer *s, uint64_t addr, struct tally_frame *frames,
		    size_t max)
{
	return sym_lookup((struct sym_module *)s, addr, SYM_STYLE_LLVM, frames, max);
}

void tally_symbolizer_close(struct tally_symbolizer *s)
{
	sym_close((struct sym_module *)s);
}
