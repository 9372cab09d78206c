/*
 * The Solana runtime's log framing (agave's stable_log): the lines it writes around each
 * instruction's own logs, "Program <id> invoke [<depth>]", "... consumed N of M compute
 * units", "Program return: <id> <base64>", "... success" / "... failed: <error>", and the
 * text of the instruction errors that "failed:" shows.
 */
#ifndef TALLY_SOLANA_RUNTIME_LOG_H
#define TALLY_SOLANA_RUNTIME_LOG_H

#include <stdbool.h>
#include <stddef.h>

/* Whether line is one of the framing lines above (not something a program logged). */
bool sol_log_is_framing(const char *line);

/* The runtime's text for an InstructionError named as tally names it ("Custom(1)" gives
 * "custom program error: 0x1", "PrivilegeEscalation" gives "Cross-program invocation with
 * unauthorized signer or writable account"), written to buf; NULL when name is not an
 * InstructionError (a VM error, or a syscall's own error such as "Abort"). */
const char *sol_instruction_error_text(const char *name, char *buf, size_t size);

#endif
