/*
 * A Ruby interpreter as a mapped file shows it: libruby (Debian's ruby3.1 runs
 * libruby-3.1.so.3.1, stripped), its version from its ruby_version symbol's string, and the
 * places a reader needs, all from exported symbols: the thread-local ruby_current_ec (the
 * thread's execution context) through the GOT slots its relocations fill, the symbol
 * table (for the names of C methods) through the code of rb_id2str, and rb_vm_exec, whose
 * activations run Ruby frames. A static ruby (no libruby) is not recognised.
 */
#ifndef TALLY_RUBY_LIB_H
#define TALLY_RUBY_LIB_H

#include <stdbool.h>
#include <stdint.h>

#include "elf/elf.h"
#include "ruby/layout.h"

/* How ruby_current_ec's address is found from a thread's FS base (x86-64). */
enum rb_tls_model {
	/* General dynamic (Debian's libruby): the GOT pair holds the module id and the
	 * offset in its block; the block is the thread's dtv[module id] (glibc: dtv at FS
	 * base + 8, 16 bytes an entry). */
	RB_TLS_DYNAMIC = 1,
	/* Initial exec: the GOT slot holds the offset from the FS base. */
	RB_TLS_INITIAL_EXEC = 2,
};

/* Link-time addresses (add the load bias); 0 where not found. */
struct rb_lib {
	char version[16];                /* "3.1.2" */
	const struct rb_layout *layout;  /* its version's table */
	enum rb_tls_model tls_model;
	uint64_t ec_got;                 /* the GOT slot(s) of ruby_current_ec */
	uint64_t ec_offset;              /* its offset in the module's TLS block */
	uint64_t global_symbols;         /* rb_symbols_t; 0: C methods stay unnamed */
	uint64_t vm_exec_lo, vm_exec_hi; /* rb_vm_exec */
};

/* Whether a file's path (as a mapping names it) may be libruby: cheap, by name. */
bool rb_lib_may_be(const char *path);

/* Reads f's facts: 0 with *out set; 1 when f is no libruby (no ruby_version or
 * ruby_current_ec); negative with the message set when it is one tally cannot read: a
 * version without a table (-ENOTSUP, the message naming it and the versions known), or
 * no GOT slot for ruby_current_ec. */
int rb_lib_read(struct elf_file *f, struct rb_lib *out);

#endif
