/*
 * `tally sbpf link`: an eBPF object written as a deployable sBPF program (cmd_sbpf_link.c).
 */
#ifndef TALLY_CLI_CMD_SBPF_LINK_H
#define TALLY_CLI_CMD_SBPF_LINK_H

int cli_sbpf_link(int argc, char **argv);

#endif
