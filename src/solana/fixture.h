/*
 * Fixtures: one Solana instruction with its programs, accounts, compute budget, sysvars
 * and the expected outcome, as JSON (docs/sbpf.md, "Solana runtime"). Loading checks
 * every field and names the file and the field in its errors; running executes the
 * instruction in tally's runtime (serialization, VM, CPI, deserialization) and checking
 * compares the outcome with `expect`.
 *
 * Ownership: a fixture owns everything it points to; running it changes its accounts.
 */
#ifndef TALLY_SOLANA_FIXTURE_H
#define TALLY_SOLANA_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sbpf/vm.h"
#include "solana/serialize.h"

struct sol_fixture_program {
	uint8_t id[32];
	char *elf;  /* path, resolved against the fixture's directory */
	char *name; /* the base58 id when unnamed */
};

struct sol_expect_account {
	uint8_t key[32];
	char *key58;
	bool has_lamports, has_data, has_owner, has_executable, has_rent_epoch;
	uint64_t lamports;
	uint8_t *data;
	size_t len;
	uint8_t owner[32];
	bool executable;
	uint64_t rent_epoch;
};

struct sol_expect {
	char *result; /* NULL: not checked (then the run must succeed) */
	bool has_cu, has_return_data, has_logs;
	uint64_t cu;
	uint8_t *return_data;
	size_t return_len;
	char **logs;
	size_t nlogs;
	struct sol_expect_account *accounts;
	size_t naccounts;
};

struct sol_fixture {
	char *path;
	struct sol_fixture_program *programs;
	size_t nprograms;
	struct sol_account *accounts; /* the fixture's, then the programs' and sysvars' */
	size_t naccounts;
	size_t nlisted; /* accounts[0..nlisted) are those the fixture lists */
	uint8_t program_id[32];
	struct sol_ix_account *ix;
	size_t nix;
	uint8_t *data;
	size_t data_len;
	uint64_t budget;
	uint8_t clock[40]; /* the sysvars as programs see them */
	uint8_t rent[24];
	struct sol_expect expect;
};

int sol_fixture_load(const char *path, struct sol_fixture **out);
/* The same from JSON text in memory; path names it in messages and anchors "elf" paths. */
int sol_fixture_parse(const char *path, const char *text, size_t len,
		      struct sol_fixture **out);
void sol_fixture_free(struct sol_fixture *f);

/* How a run ended. logs are malloc'd strings. */
struct sol_outcome {
	char result[64];   /* "success", "Custom(1)", "AccessViolation", ... */
	char detail[SBPF_DESCRIBE_MAX + 80]; /* a description of the failure ("" on success) */
	uint64_t cu;
	uint64_t program_cu; /* of cu, what the programs' instructions and syscalls consumed */
	char **logs;
	size_t nlogs;
	uint8_t *return_data;
	size_t return_len;
};

struct sol_observer;

/* Loads the programs and runs the instruction. Negative when tally failed (a program
 * that does not load, no memory); the program's own failures land in out->result.
 * observer (NULL: none) watches the run (runtime.h). */
int sol_fixture_run(struct sol_fixture *f, struct sol_outcome *out,
		    const struct sol_observer *observer);
void sol_outcome_free(struct sol_outcome *o);
/* An account as the bank holds it after the run: one left without lamports no longer
 * exists, and reads as the default account (no data, the system program's, rent epoch 0). */
const struct sol_account *sol_fixture_post_state(const struct sol_account *a);
/* Prints every difference from `expect` to f ("FILE: expect.FIELD: expected X, got Y");
 * returns how many there were. */
size_t sol_fixture_check(const struct sol_fixture *fx, const struct sol_outcome *o,
			 FILE *f);

#endif
