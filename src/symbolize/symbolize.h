/*
 * Address -> frames for one module (an executable, shared object, object file or debug
 * file), innermost inline frame first. Function names, files, lines and columns follow
 * llvm-symbolizer's rules (DWARF, with the outermost frame named from the symbol table when
 * it has a symbol there), with two fallbacks: a separate debug file's .symtab where the
 * module's own tables have nothing, then nothing at all ("??"), with the range of the
 * function the unwind tables place the address in (tally_frame's from_cfi).
 *
 * A module is indexed lazily, unit by unit, under a lock; lookups are safe from several
 * threads at once.
 */
#ifndef TALLY_SYMBOLIZE_H
#define TALLY_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tally/tally.h"

struct sym_module;

struct sym_opts {
	const char *debug_dir; /* searched before /usr/lib/debug, or NULL */
	bool no_demangle;
	/* Many lookups will follow: all the DWARF is read at open, without first trying to
	 * answer from the front of a large .debug_info (see front.c). */
	bool many;
	/* Use the debug cache (elf_debug_cache_dir(): its directory comes from the
	 * environment): a separate debug file is looked up there first, and a compressed one
	 * is stored there decompressed when the module is closed. A debug file on no disk
	 * is then asked of debuginfod, when the environment names servers
	 * (elf_debuginfod_open()). */
	bool debug_cache;
};

int sym_open(const char *path, const struct sym_opts *opts, struct sym_module **out);
void sym_close(struct sym_module *m);
/* The path the module was opened with. */
const char *sym_path(const struct sym_module *m);

/* Which name the outermost frame gets: llvm-symbolizer's (the symbol table's, when the
 * address has a symbol) or addr2line's (the DWARF subprogram's). */
enum sym_style { SYM_STYLE_LLVM, SYM_STYLE_GNU };

/* Fills at most max frames for addr; returns how many frames the address has (at least
 * 1: an unknown address is one frame of unknowns), or a negative code. */
int sym_lookup(struct sym_module *m, uint64_t addr, enum sym_style style,
	       struct tally_frame *frames, size_t max);

/* Tells the module which n addresses are about to be looked up (on any number of
 * threads). Optional: lookups build the unit indexes they need one at a time either way;
 * with the plan a thread that would wait for a unit another thread is building builds one
 * the batch needs later instead (see prepare.c). Reads all of the DWARF (sym_read_all). */
int sym_prepare(struct sym_module *m, const uint64_t *addrs, size_t n);

/* Reads all of the module's DWARF now. Without it, the first few lookups in a large
 * .debug_info read only as much of it as they need (see front.c); a caller
 * about to look up many addresses saves that detour. */
void sym_read_all(struct sym_module *m);

/* The name tally gives a function known only from the unwind tables (struct tally_frame's
 * from_cfi): "MODULE!fn_START", MODULE the base name of module_path, START the function's
 * start address in the file, in lower-case hex without 0x. Returns buf. */
const char *sym_cfi_name(const char *module_path, uint64_t start, char *buf, size_t size);

/* name (a demangled C++ name as libiberty spells it) as LLVM's demangler spells it, in buf
 * when it differs; name itself when it does not or buf is too small. */
const char *sym_llvm_spelling(const char *name, char *buf, size_t size);

#endif
