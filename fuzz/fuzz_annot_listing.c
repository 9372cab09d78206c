/*
 * libFuzzer target for the reader of the agent's bytecode listing (report/annotate_bytecode.c):
 * the input's first line is the function's name, the rest the listing. It is read at the
 * pcs 0, 0x1b and UINT64_MAX; what it gives must be instructions in increasing pc order
 * inside [lo, hi), each text a string without a line break. Seeds: fuzz/corpus/
 * annot_listing/ (the listings of examples/stackvm.c and of a hostile test program).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/annotate_impl.h"

static void check(const struct annot_listing *l)
{
	for (size_t i = 0; i < l->insns.n; i++) {
		const struct annot_insn *in = &l->insns.v[i];
		if (in->addr < l->lo || in->addr >= l->hi || strchr(in->text, '\n') ||
		    (i && in->addr <= l->insns.v[i - 1].addr))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *nl = memchr(text, '\n', size);
	if (!nl)
		return 0;
	char *name = strndup(text, (size_t)(nl - text));
	if (!name)
		return 0;
	static const uint64_t pcs[] = { 0, 0x1b, UINT64_MAX };
	for (size_t i = 0; i < sizeof(pcs) / sizeof(pcs[0]); i++) {
		struct annot_listing l;
		memset(&l, 0, sizeof(l));
		if (!annot_bytecode_parse("fuzz.lst", nl + 1, size - (size_t)(nl + 1 - text), name, pcs[i], &l))
			check(&l);
		annot_free(&l);
	}
	free(name);
	return 0;
}
