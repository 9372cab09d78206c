/*
 * Prints what tally's DWARF reader says of types in an ELF file, for
 * tests/dwarf/types.test.sh to compare with gdb:
 *   type_member ELF TYPE PATH...   "TYPE.PATH offset size bit_offset bit_size" per path
 *   type_member ELF TYPE           "TYPE size"
 * A path or type not found prints "TYPE.PATH missing".
 */
#include <stdio.h>

#include "base/err.h"
#include "dwarf/types.h"

int main(int argc, char **argv)
{
	if (argc < 3)
		return fprintf(stderr, "usage: type_member ELF TYPE [PATH...]\n"), 2;
	struct elf_file *elf;
	struct dwarf *d;
	struct dwarf_types *t;
	if (elf_open(argv[1], &elf) || dwarf_open(elf, &d) || dwarf_types_open(d, &t))
		return fprintf(stderr, "tally: %s\n", err_msg()), 1;
	uint64_t type, size;
	int err = dwarf_type_find(t, argv[2], &type);
	if (err)
		printf("%s missing (%d)\n", argv[2], err);
	else if (argc == 3) {
		if (dwarf_type_size(t, type, &size))
			printf("%s missing\n", argv[2]);
		else
			printf("%s %llu\n", argv[2], (unsigned long long)size);
	}
	for (int i = 3; !err && i < argc; i++) {
		struct dwarf_member m;
		if (dwarf_type_member(t, type, argv[i], &m))
			printf("%s.%s missing\n", argv[2], argv[i]);
		else
			printf("%s.%s %llu %llu %llu %u\n", argv[2], argv[i],
			       (unsigned long long)m.offset, (unsigned long long)m.size,
			       (unsigned long long)m.bit_offset, m.bit_size);
	}
	dwarf_types_close(t);
	dwarf_close(d);
	elf_close(elf);
	return 0;
}
