/*
 * The static size view of an sBPF program: how many instructions each function holds, and
 * within it each inline frame (from DWARF), as a profile (metric instructions/count) that
 * the report outputs take: a binary-size view, since deployment cost grows with the
 * program's size. lddw counts as one instruction (two slots).
 */
#ifndef TALLY_CUPROF_SIZE_H
#define TALLY_CUPROF_SIZE_H

struct prof;
struct sbpf_program;

/* path: the program's file (symbols and DWARF), NULL for none. A finished profile. */
int cuprof_size_profile(const struct sbpf_program *prog, const char *path, struct prof **out);

#endif
