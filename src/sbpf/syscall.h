/*
 * Syscall tables: which syscalls a program may call, keyed by the murmur3 hash of the name
 * (the key a v0 relocation or a v3 static call carries). A table is built once and shared
 * by every program and VM that uses it. The VM and the loader know syscalls only through
 * a table; the implementations are the runtime's (src/solana/syscalls.h).
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

/* Sorted by hash; grown as a VEC (base/vec.h). Owns v. */
struct sbpf_syscalls {
	struct sbpf_syscall *v;
	size_t n, cap;
};

/* Adds a syscall; -EEXIST when another one has the same hash. */
int sbpf_syscalls_add(struct sbpf_syscalls *s, const char *name, sbpf_syscall_fn fn);
const struct sbpf_syscall *sbpf_syscalls_find(const struct sbpf_syscalls *s, uint32_t hash);
void sbpf_syscalls_free(struct sbpf_syscalls *s);

#endif
