/*
 * The standard set of the Solana runtime's syscalls (syscalls.h): the parts that make it
 * up, each registered by the file that implements it, and the table walk they share.
 */
#include "solana/syscalls.h"

int sol_syscalls_add_all(struct sbpf_syscalls *s, const struct sol_syscall_def *defs, size_t n)
{
	int rc = 0;
	for (size_t i = 0; !rc && i < n; i++)
		rc = sbpf_syscalls_add(s, defs[i].name, defs[i].fn);
	return rc;
}

int sol_syscalls_standard(struct sbpf_syscalls *s, unsigned flags)
{
	static int (*const parts[])(struct sbpf_syscalls *) = {
		sol_syscalls_memory, sol_syscalls_return, sol_syscalls_sysvars,
		sol_syscalls_context, sol_syscalls_pda, sol_syscalls_hash,
		sol_syscalls_crypto, sol_syscalls_curve, sol_syscalls_bn254,
	};
	int rc = sol_syscalls_log(s, flags);
	for (size_t i = 0; !rc && i < sizeof(parts) / sizeof(parts[0]); i++)
		rc = parts[i](s);
	return rc;
}
