/*
 * Program-derived addresses from the Solana SDK's own test vectors: the input holds the
 * program id (32 bytes), the SeedPubey... key (32 bytes) and a mode byte (1: pass 17 seeds).
 */
#include "solana.h"

struct seed {
	const u8 *p;
	u64 len;
};

extern u64 sol_create_program_address(const struct seed *seeds, u64 n, const u8 *program_id, u8 *out);
extern u64 sol_try_find_program_address(const struct seed *seeds, u64 n, const u8 *program_id,
					 u8 *out, u8 *bump);
extern void sol_log_pubkey(const u8 *key);

/* Upstream clang limits a BPF function's frame to 512 bytes (sBPF allows 4 KiB): the
 * helpers keep their arrays out of entrypoint's frame. */
__attribute__((noinline)) static void create(const struct seed *s, u64 n, const u8 *program_id)
{
	u8 out[32];
	if (sol_create_program_address(s, n, program_id, out) == 0)
		sol_log_pubkey(out);
	else
		sol_log_("on curve", 8);
}

__attribute__((noinline)) static void too_many(const u8 *program_id)
{
	static const u8 one[1] = { 1 };
	struct seed many[17];
	for (int i = 0; i < 17; i++)
		many[i] = (struct seed){ one, 1 };
	create(many, 17, program_id);
}

u64 entrypoint(const u8 *input)
{
	static const u8 one[1] = { 1 }, zero[1] = { 0 };
	static const char sun[] = "\xe2\x98\x89";
	const u8 *program_id = input, *seed_key = input + 32;
	struct seed s1[] = { { (const u8 *)"", 0 }, { one, 1 } };
	struct seed s2[] = { { (const u8 *)sun, 3 }, { zero, 1 } };
	struct seed s3[] = { { (const u8 *)"Talking", 7 }, { (const u8 *)"Squirrels", 9 } };
	struct seed s4[] = { { seed_key, 32 }, { one, 1 } };
	create(s1, 2, program_id);
	create(s2, 2, program_id);
	create(s3, 2, program_id);
	create(s4, 2, program_id);
	u8 found[32], again[32], bump = 0;
	if (sol_try_find_program_address(s3, 1, program_id, found, &bump))
		return 1;
	struct seed with_bump[] = { s3[0], { &bump, 1 } };
	sol_create_program_address(with_bump, 2, program_id, again);
	u64 same = 1;
	for (int i = 0; i < 32; i++)
		same &= found[i] == again[i];
	sol_log_64_(bump, same, 0, 0, 0);
	if (input[64] == 1)
		too_many(program_id);
	return 0;
}
