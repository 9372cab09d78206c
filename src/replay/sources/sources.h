/*
 * The frame sources a replay asks, in their order (sources.c), and the ELF source that is
 * asked last about every frame.
 */
#ifndef TALLY_REPLAY_SOURCES_SOURCES_H
#define TALLY_REPLAY_SOURCES_SOURCES_H

#include <stddef.h>

#include "replay/sources/source.h"

/* Opens every listed source that d has something for into out[0..*n), in the order they
 * are asked about a frame; more than cap is an error. 0, or a negative code with the
 * message set (the sources opened so far closed). */
int replay_sources_open(struct perf_data *d, struct replay_frame_source *out, size_t cap,
			size_t *n);
/* Closes v[0..n). */
void replay_sources_close(const struct replay_frame_source *v, size_t n);

/* The ELF source: tally_symbolize on the file the unwinder read, inline frames, PLT stubs
 * as "[plt]", frames without a symbol as their module and address. It names every frame.
 * 0, or -ENOMEM with the message set. */
int replay_elf_source_new(struct replay_frame_source *out);

#endif
