/*
 * The Solana runtime's side of a program run: accounts, the aligned input serialization of
 * the BPF loader (what r1 points at when a program starts) and the deserialization of the
 * accounts a program changed, with the checks the runtime applies to every change (a
 * program may only debit, write or reassign accounts it owns and that are writable, ...).
 *
 * Failures the program causes are the runtime's InstructionError names ("InvalidRealloc",
 * "ExternalAccountLamportSpend", ...), returned as strings; negative codes are tally's own
 * failures (out of memory).
 */
#ifndef TALLY_SOLANA_SERIALIZE_H
#define TALLY_SOLANA_SERIALIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	SOL_MAX_PERMITTED_DATA_INCREASE = 10 * 1024,       /* realloc room per account */
	SOL_MAX_PERMITTED_DATA_LENGTH = 10 * 1024 * 1024,
	SOL_MAX_INSTRUCTION_ACCOUNTS = 255,
	SOL_NON_DUP_MARKER = 0xff,
};

/* An account as the transaction holds it. data is malloc'd and owned. */
struct sol_account {
	uint8_t key[32];
	uint8_t owner[32];
	uint64_t lamports;
	uint64_t rent_epoch;
	uint8_t *data;
	size_t len;
	bool executable;
};

/* One account of an instruction: an index into the transaction's accounts. */
struct sol_ix_account {
	uint32_t index;
	bool is_signer;
	bool is_writable;
};

/* What the running program may do to one account (the runtime's BorrowedAccount). */
struct sol_borrow {
	struct sol_account *a;
	bool writable;
	const uint8_t *program_id; /* the program running the instruction */
};

/* Each changes the account when the runtime allows it; NULL, or the error's name. */
const char *sol_account_set_lamports(struct sol_borrow *b, uint64_t lamports);
const char *sol_account_set_owner(struct sol_borrow *b, const uint8_t owner[32]);
/* Why the data may not become len bytes (agave's can_data_be_resized, then
 * can_data_be_changed), or NULL. */
const char *sol_account_data_error(const struct sol_borrow *b, size_t len);
/* Replaces the data; *oom is set when memory ran out. Unchanged data always passes. */
const char *sol_account_set_data(struct sol_borrow *b, const uint8_t *data, size_t len,
				 bool *oom);

/* A serialized input: the buffer mapped at 0x4_0000_0000 and, per instruction account,
 * where its record starts and its data length at serialization time. */
struct sol_input {
	uint8_t *buf;
	size_t len;
	size_t n;
	size_t *off;      /* record offset (the duplicate marker byte) */
	uint64_t *pre_len;
	int *dup_of;      /* -1, or the position of the first occurrence */
	bool aligned;
};

/* The aligned layout (BPF loader v2, upgradeable loader), or the deprecated loader's
 * unaligned one. Fails with "MaxAccountsExceeded" (*ierr) for more than 255 accounts, or
 * -ENOMEM. */
int sol_serialize(const struct sol_account *accounts, const struct sol_ix_account *ix,
		  size_t n, const uint8_t *data, size_t data_len, const uint8_t program_id[32],
		  bool aligned, struct sol_input *out, const char **ierr);
/* Writes the program's changes back into accounts with the runtime's checks, in the
 * runtime's order (lamports, data, then owner, account by account). 0 with *ierr NULL on
 * success, 0 with *ierr set when the runtime rejects a change, -ENOMEM. */
int sol_deserialize(const struct sol_input *in, struct sol_account *accounts,
		    const struct sol_ix_account *ix, const uint8_t program_id[32],
		    const char **ierr);
void sol_input_free(struct sol_input *in);

/* Offsets inside one aligned account record (from its marker byte). */
enum {
	SOL_SER_SIGNER = 1,
	SOL_SER_WRITABLE = 2,
	SOL_SER_EXECUTABLE = 3,
	SOL_SER_KEY = 8,
	SOL_SER_OWNER = 40,
	SOL_SER_LAMPORTS = 72,
	SOL_SER_DATA_LEN = 80,
	SOL_SER_DATA = 88,
	/* the unaligned layout */
	SOL_UNALIGNED_LAMPORTS = 35,
	SOL_UNALIGNED_DATA = 51,
};

#endif
