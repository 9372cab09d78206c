/*
 * libFuzzer target for `tally sbpf link` (sbpf/linker.h): arbitrary bytes as one or two
 * relocatable eBPF objects, linked as sBPF v0 (dynamic relocations) and v3, with their
 * DWARF; what is written is loaded back by the loader inside sbpf_link_elf. The first byte
 * picks the version (bit 0) and whether a 4-byte length of the first object follows and
 * a second object after it (bit 1).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "sbpf/linker.h"
#include "solana/syscalls.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sbpf_syscalls sys;
	if (!sys.n)
		sol_syscalls_standard(&sys, 0);
	if (size < 1)
		return 0;
	uint8_t how = data[0];
	data++, size--;
	struct sbpf_object objs[2] = { { "a.o", data, size }, { "b.o", NULL, 0 } };
	size_t n = 1;
	if (how & 2) {
		if (size < 4)
			return 0;
		size_t first = data[0] | data[1] << 8 | (size_t)data[2] << 16 | (size_t)data[3] << 24;
		if (first > size - 4)
			return 0;
		objs[0] = (struct sbpf_object){ "a.o", data + 4, first };
		objs[1] = (struct sbpf_object){ "b.o", data + 4 + first, size - 4 - first };
		n = 2;
	}
	struct sbpf_link_opts opt = { .sz = sizeof(opt), .version = how & 1 ? SBPF_V0 : SBPF_V3 };
	uint8_t *out = NULL;
	size_t len = 0;
	if (!sbpf_link_elf(objs, n, &sys, &opt, &out, &len))
		free(out);
	return 0;
}
