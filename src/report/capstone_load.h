/*
 * capstone, loaded when the first disassembler opens rather than with tally (see
 * capstone_load.c).
 */
#ifndef TALLY_REPORT_CAPSTONE_LOAD_H
#define TALLY_REPORT_CAPSTONE_LOAD_H

#include <capstone/capstone.h>

/* The capstone functions the annotator calls. */
struct capstone_api {
	cs_err (*open)(cs_arch arch, cs_mode mode, csh *handle);
	cs_insn *(*malloc)(csh handle);
	bool (*disasm_iter)(csh handle, const uint8_t **code, size_t *size, uint64_t *address,
			    cs_insn *insn);
	void (*free)(cs_insn *insn, size_t count);
	cs_err (*close)(csh *handle);
};

/* The library's functions, or NULL (with the error set) when it cannot be loaded. */
const struct capstone_api *capstone_api(void);

#endif
