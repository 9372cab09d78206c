/*
 * perf-PID.map files: the text maps a JIT runtime (V8's --perf-basic-prof, OpenJDK's
 * -XX:+DumpPerfMapAtExit) writes of the code it compiled, one `START SIZE NAME` line each.
 * A later line wins over earlier ones where their ranges overlap (V8 reuses code space), so
 * the map is turned into disjoint ranges, each named by the latest line covering it.
 */
#ifndef TALLY_REPLAY_SOURCES_PERFMAP_H
#define TALLY_REPLAY_SOURCES_PERFMAP_H

#include <stdint.h>
#include <stdio.h>

#include "replay/sources/source.h"

/* Ownership: a map owns its names; replay_perfmap_free releases them. */
struct replay_perfmap;

/* Reads the map in f, which name names in warnings. A bad line (not hex, no name, a range
 * past 2^64, a NUL byte, longer than 64 KiB, the last one cut short) is left out with a
 * warning on warn ("tally: NAME: line 7: ..."; NULL: none), so is everything past the caps
 * on lines and names (memory stays bounded). 0, or -ENOMEM with the message set. */
int replay_perfmap_read(FILE *f, const char *name, FILE *warn, struct replay_perfmap **out);
/* The name of the code at pc and the start of the line that named it; NULL when none. */
const char *replay_perfmap_find(const struct replay_perfmap *m, uint64_t pc, uint64_t *start);
void replay_perfmap_free(struct replay_perfmap *m);

/* The perf-map source: a frame in memory no ELF file backs (anonymous memory: JIT code) of
 * a process that has a perf-PID.map, named as a PROF_JIT frame by the latest line covering
 * it, its module the map file. A process's map is jit_dir/perf-PID.map when the directory
 * jit_dir exists (the recording's copies, see perf_jit_dir; NULL: none), else
 * /tmp/perf-PID.map; bad lines are warned about on stderr and left out. Frames no line
 * covers are left to the next source. 0, or -ENOMEM with the message set. */
int replay_perfmap_source_new(const char *jit_dir, struct replay_frame_source *out);
/* The same for a recording: jit_dir is perf_jit_dir(d->path). */
extern const struct replay_source_type replay_perfmap_source;

#endif
