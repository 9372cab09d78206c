/*
 * The fixture side of `tally sbpf`: `run FIXTURE.json` and `test DIR` (cmd_sbpf_test.c).
 */
#ifndef TALLY_CLI_CMD_SBPF_TEST_H
#define TALLY_CLI_CMD_SBPF_TEST_H

#include <stdbool.h>

struct cli_sbpf_outputs;

/* Runs one fixture, prints the outcome (text, or one JSON object with the differences on
 * stderr) and every difference from its `expect`, and writes the profile outputs asked
 * for (outs may be NULL); CLI_OK when all held. */
int cli_sbpf_run_fixture(const char *path, bool json, const struct cli_sbpf_outputs *outs);
/* `tally sbpf test DIR`: every *.json below DIR; "N passed, N failed". */
int cli_sbpf_test(int argc, char **argv);

#endif
