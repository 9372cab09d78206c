/*
 * libFuzzer target for the USDT parsers: an input starting with the ELF magic goes through
 * elf_open_mem + usdt_read (notes, addresses, argument specs); anything else is a note
 * descriptor (first byte picks 32/64-bit, byte order and the argument architecture).
 */
#include <stdint.h>
#include <string.h>

#include "base/arena.h"
#include "elf/elf.h"
#include "probes/usdt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char buf[128];
	if (size >= 4 && !memcmp(data, "\177ELF", 4)) {
		struct elf_file *f;
		if (elf_open_mem("fuzz", data, size, &f))
			return 0;
		struct usdt_list l;
		if (!usdt_read(f, &l)) {
			for (size_t i = 0; i < l.n; i++)
				for (size_t k = 0; k < l.v[i].nargs; k++)
					usdt_arg_describe(&l.v[i].args[k], l.arch, buf, sizeof(buf));
			usdt_list_free(&l);
		}
		elf_close(f);
		return 0;
	}
	if (size < 1)
		return 0;
	struct arena a = { 0 };
	struct usdt_probe p;
	enum usdt_arch arch = data[0] & 2 ? USDT_ARCH_AARCH64 : USDT_ARCH_X86_64;
	if (!usdt_parse_desc(data + 1, size - 1, data[0] & 1, data[0] & 4, &a, &p)) {
		struct usdt_arg *args;
		size_t n;
		if (!usdt_parse_args(p.args_text, arch, &a, &args, &n))
			for (size_t k = 0; k < n; k++)
				usdt_arg_describe(&args[k], arch, buf, sizeof(buf));
	}
	arena_free(&a);
	return 0;
}
