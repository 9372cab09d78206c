/*
 * libFuzzer target: rewriting demangled names into LLVM's spelling, on arbitrary text
 * (names come from hostile files), with a small output buffer to exercise truncation.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/symbolize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name = malloc(size + 1);
	if (!name)
		return 0;
	memcpy(name, data, size);
	name[size] = 0;
	char small[16], big[4096];
	sym_llvm_spelling(name, small, sizeof(small));
	sym_llvm_spelling(name, big, sizeof(big));
	free(name);
	return 0;
}
