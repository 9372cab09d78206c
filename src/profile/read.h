/*
 * Reading profiles back from files: pprof (gzipped or plain profile.proto, ours and other
 * tools') and folded stacks (Brendan Gregg's "a;b;c N" lines). Each reader has a sniffer
 * that looks at the first bytes only, so that a caller (src/cli/profile_input.c) can try
 * readers in turn, including ones from other modules (perf.data), without this module
 * knowing them. name is used in error messages ("NAME: at 0x1a: ...").
 */
#ifndef TALLY_PROFILE_READ_H
#define TALLY_PROFILE_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "profile/pprof_addr.h"

struct prof;

/* gzip magic, or a plausible profile.proto first field. */
bool prof_sniff_pprof(const void *data, size_t size);
/* Text whose first non-empty line ends in a count. */
bool prof_sniff_folded(const void *data, size_t size);

/* Each returns 0 and a new finished profile, or a negative code with the message set.
 * prof_read_pprof_files asks segments for the loadable segments of a mapping's file, to
 * turn file offsets into vaddrs (profile/pprof_addr.h); prof_read_pprof looks at no file
 * (addresses without tally's mapping comment stay file offsets). */
int prof_read_pprof_files(const char *name, const void *data, size_t size,
			  prof_pprof_segments_fn segments, struct prof **out);
int prof_read_pprof(const char *name, const void *data, size_t size, struct prof **out);
int prof_read_folded(const char *name, const void *data, size_t size, struct prof **out);

#endif
