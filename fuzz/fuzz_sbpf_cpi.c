/*
 * libFuzzer target for cross-program invocation: a caller program passes fuzz bytes to
 * sol_invoke_signed_c or sol_invoke_signed_rust. The caller's input holds a writable
 * account it owns, the callee's program account, and the fuzz bytes as instruction data;
 * its five syscall arguments are the first 40 fuzz bytes, the three pointers among them
 * added to the address of the instruction data, so pointers into the fuzz bytes are easy
 * to find. Whatever the
 * structures say, the runtime must fail cleanly or run the callee, never crash.
 *
 * A valid C call to start from (offsets into the fuzz bytes; A = 0x400000008, the account's
 * record, B = A - 8 + 20752, the fuzz bytes): 0: u64 48, 96, 1, 0, 0; 40: 0 (C, 1 for Rust);
 * 48: SolInstruction { B+200, B+240, 1, B+300, 4 }; 96: SolAccountInfo { A+8, A+72, 64,
 * A+88, A+40, 0, 1, 1, 0 }; 200: the callee id (2, then 31 zeroes); 240: SolAccountMeta
 * { A+8, 1, 0 }; 300: 4 data bytes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sbpf/isa.h"
#include "solana/runtime.h"
#include "solana/syscalls.h"

#define I(op, dst, src, off, imm)                                                            \
	(uint8_t)(op), (uint8_t)((src) << 4 | (dst)), (uint8_t)((off) & 0xff),               \
		(uint8_t)(((off) >> 8) & 0xff), (uint8_t)((imm) & 0xff),                     \
		(uint8_t)(((imm) >> 8) & 0xff), (uint8_t)(((imm) >> 16) & 0xff),            \
		(uint8_t)(((uint32_t)(imm) >> 24) & 0xff)

/* Where the instruction data starts: the count, one account with 64 bytes of data, one
 * without, then the data length. */
enum { IX_DATA = 8 + (88 + 64 + 10240 + 8) + (88 + 10240 + 8) + 8 };

/* a pointer argument (relative to the instruction data), or a count */
#define PTR(r) I(0x79, r, 6, IX_DATA + 8 * ((r) - 1), 0), I(0x07, r, 0, 0, IX_DATA), \
	       I(0x0f, r, 6, 0, 0)
#define VAL(r) I(0x79, r, 6, IX_DATA + 8 * ((r) - 1), 0)

static struct sbpf_program *load(const struct sbpf_syscalls *sys, const uint8_t *code,
				 size_t len)
{
	struct sbpf_load_options opt = { .version = SBPF_V0, .raw = true };
	struct sbpf_program *p = NULL;
	sbpf_program_load("fuzz", code, len, sys, &opt, &p);
	return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sbpf_syscalls sys;
	static struct sbpf_program *caller[2], *callee;
	if (!sys.n) {
		if (sol_syscalls_standard(&sys, 0) || sol_syscalls_cpi(&sys))
			abort();
		const uint32_t hashes[2] = { sbpf_hash("sol_invoke_signed_c", 19),
					     sbpf_hash("sol_invoke_signed_rust", 22) };
		for (int i = 0; i < 2; i++) {
			const uint8_t code[] = { I(0xbf, 6, 1, 0, 0), PTR(1), PTR(2), VAL(3), PTR(4),
						 VAL(5), I(0x85, 0, 0, 0, (int32_t)hashes[i]),
						 I(0x95, 0, 0, 0, 0) };
			caller[i] = load(&sys, code, sizeof(code));
		}
		/* the callee returns at once */
		const uint8_t ret[] = { I(0xb7, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0) };
		callee = load(&sys, ret, sizeof(ret));
		if (!caller[0] || !caller[1] || !callee)
			abort();
	}
	if (size < 41)
		return 0;
	uint8_t ids[2][32] = { { 1 }, { 2 } };
	struct sol_account acc[2] = { 0 };
	memset(acc[0].key, 3, 32);
	memcpy(acc[0].owner, ids[0], 32);
	acc[0].lamports = 1000;
	acc[0].len = 64;
	acc[0].data = calloc(1, 64);
	memcpy(acc[1].key, ids[1], 32);
	acc[1].executable = true;
	acc[1].lamports = 1;
	struct sol_program progs[2] = {
		{ .id = ids[0], .name = "caller", .prog = caller[data[40] & 1], .aligned = true },
		{ .id = ids[1], .name = "callee", .prog = callee, .aligned = true },
	};
	struct sol_runtime rt = { .accounts = acc, .naccounts = 2, .programs = progs,
				   .nprograms = 2 };
	static const uint8_t clock[40], rent[24];
	rt.clock = clock;
	rt.rent = rent;
	const struct sol_ix_account ix[2] = { { 0, true, true }, { 1, false, false } };
	struct sol_invoke_result res;
	if (acc[0].data)
		sol_runtime_invoke(&rt, NULL, ids[0], ix, 2, data, size, 200000, &res);
	for (size_t i = 0; i < rt.nlogs; i++)
		free(rt.logs[i]);
	free(rt.logs);
	free(rt.return_data);
	sol_runtime_trace_free(&rt);
	free(acc[0].data);
	free(acc[1].data);
	return 0;
}
