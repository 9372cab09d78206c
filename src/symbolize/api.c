/*
 * The public symbolization API of include/tally/tally.h, over src/symbolize. Options are
 * read by their size (base/opts.h); frames of a size other than this version's are looked
 * up here and copied out one by one, so the library never writes past a caller's frames.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/opts.h"
#include "symbolize/symbolize.h"

/* Frames copied out per lookup without allocating: deeper inline chains are rare. */
#define LOCAL_FRAMES 32

/* struct tally_symbolizer is the public name of struct sym_module. */
int tally_symbolizer_open(const char *path, const struct tally_symbolizer_opts *opts,
			  struct tally_symbolizer **out)
{
	struct tally_symbolizer_opts known;
	int rc = OPTS_READ(tally_symbolizer_opts, debug_cache, &known, opts);
	if (rc)
		return rc;
	struct sym_opts o = {
		.debug_dir = known.debug_dir,
		.no_demangle = known.no_demangle,
		.debug_cache = known.debug_cache,
	};
	return sym_open(path, &o, (struct sym_module **)out);
}

/* The caller's frames are another version's struct tally_frame: the fields both versions
 * know (its first frame_sz bytes, or all of ours), then zero for fields only it knows. */
static int symbolize_resized(struct sym_module *m, uint64_t addr, char *out, size_t max,
			     size_t frame_sz)
{
	struct tally_frame local[LOCAL_FRAMES], *fr = local;
	size_t room = max < LOCAL_FRAMES ? max : LOCAL_FRAMES;
	int n = sym_lookup(m, addr, SYM_STYLE_LLVM, fr, room);
	if (n > 0 && (size_t)n > room && max > room) {
		room = (size_t)n < max ? (size_t)n : max;
		if (!(fr = malloc(room * sizeof(*fr))))
			return err_set(-ENOMEM, "out of memory");
		n = sym_lookup(m, addr, SYM_STYLE_LLVM, fr, room);
	}
	size_t both = frame_sz < sizeof(*fr) ? frame_sz : sizeof(*fr);
	for (size_t i = 0; n > 0 && i < (size_t)n && i < room; i++) {
		memcpy(out + i * frame_sz, &fr[i], both);
		memset(out + i * frame_sz + both, 0, frame_sz - both);
	}
	if (fr != local)
		free(fr);
	return n;
}

int tally_symbolize_sized(struct tally_symbolizer *s, uint64_t addr, struct tally_frame *frames,
			  size_t max, size_t frame_sz)
{
	if (frame_sz < OFFSETOF_END(struct tally_frame, function))
		return err_set(-EINVAL, "tally_frame: frame size %zu does not hold its first field",
			       frame_sz);
	if (frame_sz == sizeof(*frames))
		return sym_lookup((struct sym_module *)s, addr, SYM_STYLE_LLVM, frames, max);
	return symbolize_resized((struct sym_module *)s, addr, (char *)frames, max, frame_sz);
}

void tally_symbolizer_close(struct tally_symbolizer *s)
{
	sym_close((struct sym_module *)s);
}
