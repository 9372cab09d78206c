/*
 * libFuzzer target: the whole symbolizer (ELF, DWARF, index, lookups, functions from the
 * unwind tables where nothing else names an address: the seed tiny_stripped) on an
 * arbitrary file, handed over through a memfd since modules are opened by path. Addresses
 * tried: a spread over the first 16 KiB.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/symbolize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", 0);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	struct sym_module *m;
	struct sym_opts o = { .debug_dir = "/nonexistent" };
	if (!sym_open(path, &o, &m)) {
		struct tally_frame f[16];
		for (uint64_t a = 0; a < 0x4000; a += 7)
			sym_lookup(m, a, a & 1 ? SYM_STYLE_GNU : SYM_STYLE_LLVM, f, 16);
		sym_close(m);
	}
	close(fd);
	return 0;
}
