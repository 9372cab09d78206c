/*
 * The System program (11111111111111111111111111111111), the builtin that creates
 * accounts, moves lamports out of system accounts, allocates their data and assigns them
 * to a program: CreateAccount, Assign, Transfer, Allocate and their WithSeed forms, and the
 * durable nonce instructions (Advance, Withdraw, Initialize, Authorize, Upgrade), with the
 * checks and log lines of agave's system_processor. It runs on the transaction's
 * accounts directly (a builtin has no VM and no serialized input) and costs what agave's
 * declare_process_instruction charges before it runs (SOL_SYSTEM_UNITS).
 */
#ifndef TALLY_SOLANA_SYSTEM_PROGRAM_H
#define TALLY_SOLANA_SYSTEM_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "solana/serialize.h"

enum {
	SOL_SYSTEM_UNITS = 150, /* system_processor's DEFAULT_COMPUTE_UNITS */
};

/* Its name in profiles (program:NAME), as agave names the builtin's crate. */
#define SOL_SYSTEM_PROGRAM_NAME "system_program"

/* The builtin's account, as the runtime holds it: its name as data, the native loader's. */
#define SOL_SYSTEM_PROGRAM_ACCOUNT_DATA "solana_system_program"
#define SOL_NATIVE_LOADER_ID "NativeLoader1111111111111111111111111111111"

bool sol_is_system_program(const uint8_t id[32]);

/* Where the program's log lines (the runtime's ic_msg: bare lines) go. */
struct sol_system_log {
	int (*line)(void *ctx, const char *line);
	void *ctx;
};

/* What the nonce instructions read of the runtime: the blockhash the transaction runs
 * under and its fee per signature (a durable nonce stores both), and the Rent sysvar. */
struct sol_system_env {
	const uint8_t *blockhash; /* 32 bytes */
	uint64_t lamports_per_signature;
	const uint8_t *rent; /* 24 bytes, the sysvar's layout */
};

/* Runs one System instruction: data, on the instruction's accounts ix[0..n) of accounts.
 * 0 with *error NULL on success or the InstructionError's name ("Custom(0)" for
 * SystemError::AccountAlreadyInUse, "MissingRequiredSignature", ...); negative when tally
 * failed (no memory). */
int sol_system_program_run(struct sol_account *accounts, const struct sol_ix_account *ix,
			   size_t n, const uint8_t *data, size_t data_len,
			   const struct sol_system_env *env, const struct sol_system_log *log,
			   const char **error);

#endif
