/*
 * libFuzzer target: line-number programs. The input is a .debug_line section; its first
 * program is decoded for a DWARF 5 unit with 8-byte addresses, then looked up at every
 * row's address, file and discriminator.
 */
#include <stddef.h>
#include <stdint.h>

#include "dwarf/dwarf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_file elf = { .path = "fuzz" };
	struct dwarf_sect none = { 0 }, line = { data, size };
	struct dwarf *d;
	if (dwarf_open_sections(&elf, &none, &none, &none, &line, &d))
		return 0;
	struct dwarf_unit u = { .version = 5, .addr_size = 8, .offset_size = 4, .comp_dir = "/c" };
	struct dwarf_line_table t;
	if (!dwarf_line_read(d, &u, 0, NULL, &t)) {
		for (size_t i = 0; i < t.nrows; i++) {
			const struct dwarf_line_row *r = dwarf_line_lookup(&t, t.rows[i].addr);
			if (r)
				dwarf_line_discriminator(&t, r);
			dwarf_line_file(&t, t.rows[i].file);
		}
		dwarf_line_free(&t);
	}
	dwarf_close(d);
	return 0;
}
