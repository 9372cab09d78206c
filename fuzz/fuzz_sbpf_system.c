/*
 * libFuzzer target for the System program (src/solana/system_program.c): a caller may hand
 * it any instruction data, so fuzz bytes are the instruction, run on three accounts (a
 * funded signer, an empty one keyed as the RecentBlockhashes sysvar, one with 80 bytes of
 * data, a nonce account's size); the first byte picks their privileges. An input longer
 * than 80 bytes gives its last 80 as that data and takes the accounts in reverse: that one
 * first, where the nonce instructions take theirs, then the sysvar-keyed one.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "solana/encoding.h"
#include "solana/syscalls.h"
#include "solana/system_program.h"

static int drop_line(void *ctx, const char *line)
{
	(void)ctx;
	(void)line;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	struct sol_account acc[3] = { 0 };
	static const uint64_t lamports[3] = { 1000000, 0, 5 };
	for (int i = 0; i < 3; i++) {
		acc[i].key[0] = (uint8_t)(i + 1);
		if (i == 1)
			sol_base58_decode(SOL_SYSVAR_RECENT_BLOCKHASHES_ID, acc[i].key, 32);
		acc[i].lamports = lamports[i];
		acc[i].len = i == 2 ? 80 : 0;
		acc[i].data = calloc(1, 80);
	}
	bool nonce = size > 80;
	if (acc[2].data && nonce)
		memcpy(acc[2].data, data + size - 80, 80);
	struct sol_ix_account ix[3];
	for (int i = 0; i < 3; i++)
		ix[i] = (struct sol_ix_account){ (uint32_t)(nonce ? 2 - i : i),
						 (data[0] >> (2 * i)) & 1,
						 (data[0] >> (2 * i + 1)) & 1 };
	const struct sol_system_log log = { drop_line, NULL };
	uint8_t rent[24];
	sol_default_rent(rent);
	const struct sol_system_env env = { sol_default_blockhash,
					    SOL_DEFAULT_LAMPORTS_PER_SIGNATURE, rent };
	const char *error;
	if (acc[0].data && acc[1].data && acc[2].data)
		sol_system_program_run(acc, ix, (size_t)(data[0] >> 6), data + 1, size - 1, &env,
				       &log, &error);
	for (int i = 0; i < 3; i++)
		free(acc[i].data);
	return 0;
}
