/*
 * Addresses in pprof files. profile.proto says a Location's address is a runtime address
 * and its Mapping gives memory_start and file_offset, so address - memory_start +
 * file_offset is a FILE OFFSET; the model's module-relative addresses are ELF virtual
 * addresses. The two differ for non-PIE executables and wherever a linker placed code at
 * a vaddr other than its offset (lld), so both the pprof reader and writer translate
 * through the module's PT_LOAD segments when its file is at hand. Because that file may be
 * missing when a profile is read back, tally's export also records, per mapping, the
 * vaddr memory_start stands for (PPROF_MAPPING_COMMENT).
 */
#ifndef TALLY_PROFILE_PPROF_ADDR_H
#define TALLY_PROFILE_PPROF_ADDR_H

#include <stddef.h>
#include <stdint.h>

/* A comment "tally.mapping=0xSTART,0xOFFSET,0xVADDR,FILENAME" per mapping of tally's
 * export: the mapping with that memory_start, file_offset and filename has its
 * memory_start at ELF vaddr VADDR, so an address A there is the vaddr A - START + VADDR. */
#define PPROF_MAPPING_COMMENT "tally.mapping="

/* A PT_LOAD segment with bytes in the file. */
struct pprof_seg {
	uint64_t vaddr, offset, filesz, memsz;
};

/* The loadable segments of the file a mapping names (path and build-id in hex, as the
 * profile has them): 0 and a malloc'd array (*n may be 0), or -ENOENT with no message set
 * when the file is not at hand. The model does not read files: its callers say how
 * (report/pprof_segments.h). */
typedef int (*prof_pprof_segments_fn)(const char *path, const char *build_id_hex,
				      struct pprof_seg **out, size_t *n);

#endif
