/*
 * The files behind pprof mappings, for the address translation of profile/pprof_addr.h:
 * the model reads no file, so the pprof writer (report/pprof.c) and the commands that
 * read pprof files look here for the ELF file a mapping names.
 */
#ifndef TALLY_REPORT_PPROF_SEGMENTS_H
#define TALLY_REPORT_PPROF_SEGMENTS_H

#include <stddef.h>

#include "profile/pprof_addr.h"

struct prof;

/* The loadable segments of the ELF file at path, when it is a regular file whose GNU
 * build-id is build_id_hex (any file when build_id_hex is NULL or ""), else of its copy in
 * perf's build-id cache (elf_open_build_id). Returns 0 and a malloc'd array (*n may be 0:
 * an object file has no segments), or -ENOENT with no message set when there is no such
 * file (missing, not ELF, another build). A prof_pprof_segments_fn. */
int rep_pprof_segments(const char *path, const char *build_id_hex, struct pprof_seg **out,
		       size_t *n);
/* prof_read_pprof_files with the mappings' files found by rep_pprof_segments. */
int rep_read_pprof(const char *name, const void *data, size_t size, struct prof **out);

#endif
