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
#include <stdint.h>

/* The JIT directory of the recording at data_path: "DATA.jit". 0, or -ENAMETOOLONG with
 * the message set when it does not fit size. */
int perf_jit_dir(const char *data_path, char *buf, size_t size);
/* tally record --rotate's series of recordings at data_path: the file begun at ms
 * (milliseconds since the epoch), "DATA.YYYYMMDDTHHMMSS.mmmZ" in UTC, ISO 8601's basic
 * format: fixed width, so that names sort in time. 0, or -ENAMETOOLONG with the message set. */
int perf_series_name(const char *data_path, uint64_t ms, char *buf, size_t size);
/* The newest file of the series at data_path (the greatest name), into buf: false when
 * there is none. */
bool perf_series_newest(const char *data_path, char *buf, size_t size);
/* Whether a file name is an agent's mixed-mode registry: tally-vm-PID-N.dump. */
bool perf_vm_registry_name(const char *name);
/* Whether a mapped path is a jitdump's marker: a JIT that writes jit-PID.dump maps it
 * executable so that the recording has an mmap record of it (perf's convention), whose
 * path's last component is jit-DIGITS.dump. */
bool perf_jitdump_marker(const char *path);

/* Where the running kernel's kallsyms copy is (whether or not it exists): false when the
 * kernel has no build-id or the path does not fit size. */
bool perf_kallsyms_copy_path(char *buf, size_t size);
/* Copies /proc/kallsyms there, replacing a copy that differs, so that reports need not
 * make the kernel format 120,000 lines again. Failures are silent: reports then read
 * /proc. */
void perf_kallsyms_save(void);

#endif
