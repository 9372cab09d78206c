/*
 * Fuzzes CFI parsing and expression evaluation: the input is an .eh_frame (or, when the
 * first byte is odd, a .debug_frame) at vaddr 0x1000; rows are looked up across it and
 * every expression found is evaluated against a fake register file and memory.
 */
#include <stddef.h>
#include <stdint.h>

#include "dwarf/cfi.h"

static int fake_reg(void *arg, unsigned regno, uint64_t *val)
{
	*val = 0x7ffc0000 + regno * 8;
	return 0;
}

static int fake_mem(void *arg, uint64_t addr, unsigned size, uint64_t *val)
{
	*val = addr ^ 0x5555;
	return addr & 1 ? -1 : 0;
}

static int each(uint64_t start, uint64_t end, void *arg)
{
	struct dwarf_cfi *c = arg;
	struct dwarf_cfi_row row;
	struct dwarf_expr_env env = { fake_reg, fake_mem, NULL, 8, false };
	uint64_t v;
	for (uint64_t pc = start; pc < end && pc - start < 64; pc += 7) {
		if (dwarf_cfi_row_at(c, pc, &row))
			continue;
		if (row.cfa.kind == DWARF_CFA_EXPR)
			dwarf_expr_eval(row.cfa.expr, row.cfa.expr_len, &env, false, 0, &v);
		for (int i = 0; i < DWARF_CFI_NREGS; i++)
			if (row.regs[i].expr)
				dwarf_expr_eval(row.regs[i].expr, row.regs[i].expr_len, &env, true,
						0x1000, &v);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	struct dwarf_cfi_src src = { .name = "fuzz", .addr_size = 8 };
	struct dwarf_cfi_section s = { data + 1, size - 1, 0x1000 };
	if (data[0] & 1)
		src.debug_frame = s;
	else
		src.eh_frame = s;
	struct dwarf_cfi *c;
	if (dwarf_cfi_open(&src, &c))
		return 0;
	dwarf_cfi_each_fde(c, each, c);
	struct dwarf_cfi_row row;
	dwarf_cfi_row_at(c, 0x1000, &row);
	dwarf_cfi_close(c);
	return 0;
}
