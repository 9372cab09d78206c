/*
 * Syscall tables: which syscalls a program may call, keyed by the murmur3 hash of the name
 * (the key a v0 relocation or a v3 static call carries). A table is built once and shared
 * by every program and VM that uses it; the standard set lives in syscalls_*.c.
 */
#ifndef TALLY_SBPF_SYSCALL_H
#define TALLY_SBPF_SYSCALL_H

#include <stddef.h>
#include <stdint.h>

struct sbpf_vm;

/* A syscall: five arguments (r1..r5), a return value (r0). It returns 0, or a negative
 * code after setting the VM's error through sbpf_vm_fail() / sbpf_vm_syscall_error(). */
typedef int (*sbpf_syscall_fn)(struct sbpf_vm *vm, const uint64_t args[5], uint64_t *ret);

struct sbpf_syscall {
	const char *name;
	uint32_t hash;
	sbpf_syscall_fn fn; /* NULL: known to the runtime, refused by tally at load time */
};

/* Sorted by hash. Owns v. */
struct sbpf_syscalls {
	struct sbpf_syscall *v;
	size_t n, cap;
};

/* Adds a syscall; -EEXIST when another one has the same hash. */
int sbpf_syscalls_add(struct sbpf_syscalls *s, const char *name, sbpf_syscall_fn fn);
const struct sbpf_syscall *sbpf_syscalls_find(const struct sbpf_syscalls *s, uint32_t hash);
void sbpf_syscalls_free(struct sbpf_syscalls *s);

enum {
	/* The reference VM's test syscall `log(ptr, len)`, 0 CU, for the conformance ELFs.
	 * Only for bare ELF runs: the Solana runtime has no such syscall. */
	SBPF_SYSCALLS_TEST_LOG = 1u << 0,
};
/* Registers the syscalls tally implements (sol_log_ and friends, memory, return data,
 * abort/panic, the heap allocator, sha256 and keccak256), plus the optional ones. */
int sbpf_syscalls_standard(struct sbpf_syscalls *s, unsigned flags);
/* The parts of the standard set in syscalls_rt.c, _sysvar.c, _pda.c and _hash.c. The sysvar
 * part also registers the runtime syscalls tally lacks: most fail when called
 * (UnsupportedSyscall); those with fn NULL make a program that calls them fail to load. */
int sbpf_syscalls_runtime(struct sbpf_syscalls *s);
int sbpf_syscalls_sysvars(struct sbpf_syscalls *s);
int sbpf_syscalls_pda(struct sbpf_syscalls *s);
int sbpf_syscalls_hash(struct sbpf_syscalls *s);
/* What every sol_get_*_sysvar does: charges the runtime's base cost plus one CU per byte,
 * then writes the sysvar's bytes at addr. 0, -1 when the budget ran out, -EFAULT when addr
 * is not writable. */
int sbpf_sysvar_copy(struct sbpf_vm *vm, uint64_t addr, const uint8_t *bytes, size_t len);

#endif
