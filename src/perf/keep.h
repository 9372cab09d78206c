/*
 * What a recording keeps beside its perf.data, which tally record writes and reports read:
 * DATA.jit, a directory of copies of the recorded processes' perf maps (perf-PID.map) and
 * agent VM registries (tally-vm-PID-N.dump), and the copy of the kernel's symbols in perf's
 * build-id cache ([kernel.kallsyms]/BUILD-ID/kallsyms, which perf record writes too).
 */
#ifndef TALLY_PERF_KEEP_H
#define TALLY_PERF_KEEP_H

#include <stdbool.h>
#include <stddef.h>

/* The JIT directory of the recording at data_path: "DATA.jit". 0, or -ENAMETOOLONG with
 * the message set when it does not fit size. */
int perf_jit_dir(const char *data_path, char *buf, size_t size);
/* Whether a file name is an agent's mixed-mode registry: tally-vm-PID-N.dump. */
bool perf_vm_registry_name(const char *name);

/* Where the running kernel's kallsyms copy is (whether or not it exists): false when the
 * kernel has no build-id or the path does not fit size. */
bool perf_kallsyms_copy_path(char *buf, size_t size);
/* Copies /proc/kallsyms there, replacing a copy that differs, so that reports need not
 * make the kernel format 120,000 lines again. Failures are silent: reports then read
 * /proc. */
void perf_kallsyms_save(void);

#endif
