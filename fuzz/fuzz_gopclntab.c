/*
 * libFuzzer target: Go's .gopclntab (elf/gopclntab.h). The input is the section's bytes.
 * Every function up to a cap is read, looked up by its entry and its last byte (which must
 * find a function holding the address), and its file, line and frames read at both (no
 * inline frames: the trees lie outside the section, in the ELF file). The seed is a
 * real go1.19 table (tests/unwind/go/main.go built with -s -w) cut down to
 * its twelve main.* functions by fuzz/gopclntab_seed.py.
 */
#include <stdint.h>
#include <stdlib.h>

#include "base/err.h"
#include "elf/gopclntab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_gopclntab *t;
	if (elf_gopclntab_open_mem("fuzz.gopclntab", data, size, &t)) {
		err_clear();
		return 0;
	}
	size_t n = elf_gopclntab_nfuncs(t);
	for (size_t i = 0; i < n && i < 256; i++) {
		struct elf_gofunc fn, at;
		if (!elf_gopclntab_func(t, i, &fn))
			continue;
		uint64_t pcs[2] = { fn.entry, fn.end - 1 };
		for (int k = 0; k < 2; k++) {
			const char *file = NULL;
			uint32_t line = 0;
			elf_gopclntab_line(t, &fn, pcs[k], &file, &line);
			struct elf_goframe fr[4];
			if (elf_gopclntab_frames(t, &fn, pcs[k], fr, 4) - 1 >= 4)
				abort();
			if (elf_gopclntab_find(t, pcs[k], &at) &&
			    (pcs[k] < at.entry || pcs[k] >= at.end))
				abort();
		}
	}
	elf_gopclntab_close(t);
	return 0;
}
