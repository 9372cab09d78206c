/*
 * The profile outputs of `tally sbpf run` and `tally sbpf size`: pprof, SVG flame graph,
 * folded stacks, annotated disassembly (HTML), text report, several at once; and its log
 * lines.
 */
#ifndef TALLY_CLI_SBPF_OUT_H
#define TALLY_CLI_SBPF_OUT_H

#include <stdbool.h>
#include <stdio.h>

struct prof;

struct cli_sbpf_outputs {
	const char *pprof, *flamegraph, *folded, *annotate, *report;
	const char *title; /* of the flame graph */
};

/* True when any output was asked for. */
bool cli_sbpf_outputs_any(const struct cli_sbpf_outputs *o);
/* Parses one of --output/-o, --flamegraph, --folded, --annotate (getopt codes 'o', 'F',
 * 'f', 'A'); false when c is none of them. */
bool cli_sbpf_outputs_option(struct cli_sbpf_outputs *o, int c, const char *arg);
/* Writes every output asked for from the finished profile p; 0, or a negative code with
 * the message set (a file that could not be written is removed). */
int cli_sbpf_outputs_write(const struct cli_sbpf_outputs *o, const struct prof *p);

/* Writes a log line of the VM or the runtime (sbpf_vm_log's form) with the bytes it holds,
 * NULs included: as a JSON string, or as they are. */
void cli_sbpf_log_print(FILE *f, const char *line, bool json);

#endif
