/*
 * Log framing and instruction error texts (runtime_log.h). The texts are those of the
 * InstructionError Display of the Solana SDK (solana-instruction-error), which is what
 * "Program <id> failed: ..." prints for every error that reaches the runtime as one.
 */
#include "solana/runtime_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name, *text;
} instruction_errors[] = {
	{ "GenericError", "generic instruction error" },
	{ "InvalidArgument", "invalid program argument" },
	{ "InvalidInstructionData", "invalid instruction data" },
	{ "InvalidAccountData", "invalid account data for instruction" },
	{ "AccountDataTooSmall", "account data too small for instruction" },
	{ "InsufficientFunds", "insufficient funds for instruction" },
	{ "IncorrectProgramId", "incorrect program id for instruction" },
	{ "MissingRequiredSignature", "missing required signature for instruction" },
	{ "AccountAlreadyInitialized", "instruction requires an uninitialized account" },
	{ "UninitializedAccount", "instruction requires an initialized account" },
	{ "UnbalancedInstruction", "sum of account balances before and after instruction do not match" },
	{ "ModifiedProgramId", "instruction illegally modified the program id of an account" },
	{ "ExternalAccountLamportSpend", "instruction spent from the balance of an account it does not own" },
	{ "ExternalAccountDataModified", "instruction modified data of an account it does not own" },
	{ "ReadonlyLamportChange", "instruction changed the balance of a read-only account" },
	{ "ReadonlyDataModified", "instruction modified data of a read-only account" },
	{ "DuplicateAccountIndex", "instruction contains duplicate accounts" },
	{ "ExecutableModified", "instruction changed executable bit of an account" },
	{ "RentEpochModified", "instruction modified rent epoch of an account" },
	{ "NotEnoughAccountKeys", "insufficient account keys for instruction" },
	{ "AccountDataSizeChanged", "program other than the account's owner changed the size of the account data" },
	{ "AccountNotExecutable", "instruction expected an executable account" },
	{ "AccountBorrowFailed", "instruction tries to borrow reference for an account which is already borrowed" },
	{ "AccountBorrowOutstanding", "instruction left account with an outstanding borrowed reference" },
	{ "DuplicateAccountOutOfSync", "instruction modifications of multiply-passed account differ" },
	{ "InvalidError", "program returned invalid error code" },
	{ "ExecutableDataModified", "instruction changed executable accounts data" },
	{ "ExecutableLamportChange", "instruction changed the balance of an executable account" },
	{ "ExecutableAccountNotRentExempt", "executable accounts must be rent exempt" },
	{ "UnsupportedProgramId", "Unsupported program id" },
	{ "CallDepth", "Cross-program invocation call depth too deep" },
	{ "MissingAccount", "An account required by the instruction is missing" },
	{ "ReentrancyNotAllowed", "Cross-program invocation reentrancy not allowed for this instruction" },
	{ "MaxSeedLengthExceeded", "Length of the seed is too long for address generation" },
	{ "InvalidSeeds", "Provided seeds do not result in a valid address" },
	{ "InvalidRealloc", "Failed to reallocate account data" },
	{ "ComputationalBudgetExceeded", "Computational budget exceeded" },
	{ "PrivilegeEscalation", "Cross-program invocation with unauthorized signer or writable account" },
	{ "ProgramEnvironmentSetupFailure", "Failed to create program execution environment" },
	{ "ProgramFailedToComplete", "Program failed to complete" },
	{ "ProgramFailedToCompile", "Program failed to compile" },
	{ "Immutable", "Account is immutable" },
	{ "IncorrectAuthority", "Incorrect authority provided" },
	{ "BorshIoError", "Failed to serialize or deserialize account data" },
	{ "AccountNotRentExempt", "An account does not have enough lamports to be rent-exempt" },
	{ "InvalidAccountOwner", "Invalid account owner" },
	{ "ArithmeticOverflow", "Program arithmetic overflowed" },
	{ "UnsupportedSysvar", "Unsupported sysvar" },
	{ "IllegalOwner", "Provided owner is not allowed" },
	{ "MaxAccountsDataAllocationsExceeded", "Accounts data allocations exceeded the maximum allowed per transaction" },
	{ "MaxAccountsExceeded", "Max accounts exceeded" },
	{ "MaxInstructionTraceLengthExceeded", "Max instruction trace length exceeded" },
	{ "BuiltinProgramsMustConsumeComputeUnits", "Builtin programs must consume compute units" },
};

const char *sol_instruction_error_text(const char *name, char *buf, size_t size)
{
	unsigned long code;
	char *end;
	if (!strncmp(name, "Custom(", 7)) {
		code = strtoul(name + 7, &end, 10);
		if (end == name + 7 || strcmp(end, ")"))
			return NULL;
		/* Rust's {:#x}: C's %#lx would print 0 without its 0x */
		snprintf(buf, size, "custom program error: 0x%lx", code);
		return buf;
	}
	for (size_t i = 0; i < sizeof(instruction_errors) / sizeof(instruction_errors[0]); i++) {
		if (!strcmp(name, instruction_errors[i].name)) {
			snprintf(buf, size, "%s", instruction_errors[i].text);
			return buf;
		}
	}
	return NULL;
}

/* A public key in base58: 32 to 44 characters of the base58 alphabet. */
static size_t base58_key_len(const char *s)
{
	static const char alphabet[] =
		"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
	size_t n = 0;
	while (s[n] && strchr(alphabet, s[n]))
		n++;
	return n >= 32 && n <= 44 ? n : 0;
}

bool sol_log_is_framing(const char *line)
{
	if (!strncmp(line, "Program return: ", 16))
		return base58_key_len(line + 16) && line[16 + base58_key_len(line + 16)] == ' ';
	if (strncmp(line, "Program ", 8))
		return false;
	size_t n = base58_key_len(line + 8);
	if (!n)
		return false;
	const char *rest = line + 8 + n;
	return !strcmp(rest, " success") || !strncmp(rest, " invoke [", 9) ||
	       !strncmp(rest, " consumed ", 10) || !strncmp(rest, " failed: ", 9);
}
