/*
 * The runtime's log framing lines and instruction error texts (runtime_log.c). Oracles:
 * the lines of agave's stable_log tests and the Display texts of the SDK's InstructionError.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "solana/runtime_log.h"

#define ID "At1SK9cAV81Kkf5WBrXJTtRAtFX3kMNRqRXqRutpSbiR"

static void framing_lines_are_recognised(void **state)
{
	assert_true(sol_log_is_framing("Program " ID " invoke [1]"));
	assert_true(sol_log_is_framing("Program 11111111111111111111111111111111 invoke [5]"));
	assert_true(sol_log_is_framing("Program " ID " consumed 322 of 198306 compute units"));
	assert_true(sol_log_is_framing("Program " ID " success"));
	assert_true(sol_log_is_framing("Program " ID " failed: custom program error: 0x1"));
	assert_true(sol_log_is_framing("Program return: " ID " b2s="));
}

static void program_lines_are_not_framing(void **state)
{
	assert_false(sol_log_is_framing("Program log: Program " ID " success"));
	assert_false(sol_log_is_framing("Program log: tick"));
	assert_false(sol_log_is_framing("Program data: aGk="));
	assert_false(sol_log_is_framing("Program consumption: 1000 units remaining"));
	assert_false(sol_log_is_framing(ID "'s signer privilege escalated"));
	/* not a key: too short, a character outside base58 (0, O, I, l), nothing after it */
	assert_false(sol_log_is_framing("Program abc invoke [1]"));
	assert_false(sol_log_is_framing("Program At1SK9cAV81Kkf5WBrXJTtRAtFX3kMNRqRXqRutpSbi0 success"));
	assert_false(sol_log_is_framing("Program " ID));
	assert_false(sol_log_is_framing("Program " ID " successful"));
	assert_false(sol_log_is_framing("Program return: " ID));
	assert_false(sol_log_is_framing(""));
}

static void instruction_errors_read_as_the_sdk_displays_them(void **state)
{
	char buf[200];
	assert_string_equal(sol_instruction_error_text("Custom(1)", buf, sizeof(buf)),
			    "custom program error: 0x1");
	assert_string_equal(sol_instruction_error_text("Custom(4294967295)", buf, sizeof(buf)),
			    "custom program error: 0xffffffff");
	assert_string_equal(sol_instruction_error_text("Custom(0)", buf, sizeof(buf)),
			    "custom program error: 0x0");
	assert_string_equal(sol_instruction_error_text("PrivilegeEscalation", buf, sizeof(buf)),
			    "Cross-program invocation with unauthorized signer or writable account");
	assert_string_equal(sol_instruction_error_text("InvalidArgument", buf, sizeof(buf)),
			    "invalid program argument");
	assert_string_equal(sol_instruction_error_text("ProgramFailedToComplete", buf, sizeof(buf)),
			    "Program failed to complete");
	assert_string_equal(sol_instruction_error_text("ComputationalBudgetExceeded", buf,
							sizeof(buf)),
			    "Computational budget exceeded");
}

static void other_errors_are_not_instruction_errors(void **state)
{
	char buf[200];
	assert_null(sol_instruction_error_text("AccessViolation", buf, sizeof(buf)));
	assert_null(sol_instruction_error_text("Abort", buf, sizeof(buf)));
	assert_null(sol_instruction_error_text("Custom()", buf, sizeof(buf)));
	assert_null(sol_instruction_error_text("Custom(1", buf, sizeof(buf)));
	assert_null(sol_instruction_error_text("Custom(x)", buf, sizeof(buf)));
	assert_null(sol_instruction_error_text("", buf, sizeof(buf)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(framing_lines_are_recognised),
		cmocka_unit_test(program_lines_are_not_framing),
		cmocka_unit_test(instruction_errors_read_as_the_sdk_displays_them),
		cmocka_unit_test(other_errors_are_not_instruction_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
