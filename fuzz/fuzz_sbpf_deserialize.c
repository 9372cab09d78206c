/*
 * libFuzzer target for the input deserialization: a program may leave any bytes in its
 * input region, so fuzz bytes overwrite a serialized input (three accounts, one of them a
 * duplicate; aligned and unaligned) before it is read back with the runtime's checks.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "solana/serialize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t program[32] = { 7 };
	struct sol_account acc[2] = { 0 };
	for (int i = 0; i < 2; i++) {
		acc[i].key[0] = (uint8_t)(i + 1);
		acc[i].lamports = 100;
		acc[i].len = 16;
		acc[i].data = calloc(1, 16);
		if (i == 0)
			memcpy(acc[i].owner, program, 32);
	}
	const struct sol_ix_account ix[3] = { { 0, true, true }, { 1, false, false }, { 0, true, true } };
	struct sol_input in;
	const char *ierr;
	for (int aligned = 0; aligned < 2; aligned++) {
		if (!acc[0].data || !acc[1].data ||
		    sol_serialize(acc, ix, 3, data, size < 64 ? size : 64, program, aligned, &in,
				  &ierr))
			break;
		memcpy(in.buf + 8, data, size < in.len - 8 ? size : in.len - 8);
		sol_deserialize(&in, acc, ix, program, &ierr);
		sol_input_free(&in);
	}
	free(acc[0].data);
	free(acc[1].data);
	return 0;
}
