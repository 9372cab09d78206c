/*
 * How a program hands a result back or ends, charged as agave charges it with its default
 * execution costs: return data (syscall_base_cost 100, plus a byte cost of 1 CU per
 * cpi_bytes_per_unit 250 bytes), abort and sol_panic_ (which end the run with the
 * runtime's error names). sol_remaining_compute_units is not here: agave registers it only
 * under remaining_compute_units_syscall_enabled, which LiteSVM 1.5 (mainnet's feature set)
 * leaves off, so a program calling it fails there.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sbpf/vm.h"
#include "solana/runtime.h"
#include "solana/syscalls.h"

enum {
	SYSCALL_BASE_COST = 100,
	CPI_BYTES_PER_UNIT = 250,
	MAX_RETURN_DATA = 1024,
};

/* sol_set_return_data(data, len) */
static int sys_set_return_data(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	*ret = 0;
	if (sbpf_vm_consume(vm, a[1] / CPI_BYTES_PER_UNIT + SYSCALL_BASE_COST))
		return -1;
	if (a[1] > MAX_RETURN_DATA)
		return sbpf_vm_syscall_error(vm, "ReturnDataTooLarge", "Return data too large (%llu > %d)",
					     (unsigned long long)a[1], MAX_RETURN_DATA);
	uint8_t *p = NULL;
	if (sbpf_vm_map(vm, a[0], a[1], false, &p))
		return -EFAULT;
	struct sol_invocation *inv = sbpf_vm_user(vm);
	if (inv)
		memcpy(inv->rt->return_program, inv->program_id, 32);
	return sbpf_vm_set_return_data(vm, p, a[1]);
}

/* sol_get_return_data(data, len, program_id) -> full length, and the program that set the
 * data (or started last, which clears it). Bare runs have no program id: it reads as 32
 * zero bytes. */
static int sys_get_return_data(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	*ret = 0;
	if (sbpf_vm_consume(vm, SYSCALL_BASE_COST))
		return -1;
	size_t have;
	const uint8_t *data = sbpf_vm_return_data(vm, &have);
	uint64_t n = a[1] < have ? a[1] : have;
	if (n) {
		if (sbpf_vm_consume(vm, (n + 32) / CPI_BYTES_PER_UNIT))
			return -1;
		uint8_t *dst, *id;
		if (sbpf_vm_map(vm, a[0], n, true, &dst) || sbpf_vm_map(vm, a[2], 32, true, &id))
			return -EFAULT;
		const struct sol_invocation *inv = sbpf_vm_user(vm);
		memcpy(dst, data, n);
		if (inv)
			memcpy(id, inv->rt->return_program, 32);
		else
			memset(id, 0, 32);
	}
	*ret = have;
	return 0;
}

static int sys_abort(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	return sbpf_vm_syscall_error(vm, "Abort", "SBF program panicked");
}

/* sol_panic_(file, len, line, column): charged len CU, then the run fails. */
static int sys_panic(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	if (sbpf_vm_consume(vm, a[1]))
		return -1;
	uint8_t *file;
	if (sbpf_vm_map(vm, a[0], a[1], false, &file))
		return -EFAULT;
	int rc = sol_check_utf8(vm, file, a[1]);
	if (rc)
		return rc;
	char name[128];
	size_t n = a[1] < sizeof(name) - 1 ? a[1] : sizeof(name) - 1;
	memcpy(name, file, n);
	name[n] = 0;
	return sbpf_vm_syscall_error(vm, "Panic", "SBF program Panicked in %s at %llu:%llu", name,
				     (unsigned long long)a[2], (unsigned long long)a[3]);
}

int sol_syscalls_return(struct sbpf_syscalls *s)
{
	static const struct sol_syscall_def calls[] = {
		{ "sol_set_return_data", sys_set_return_data },
		{ "sol_get_return_data", sys_get_return_data },
		{ "abort", sys_abort },
		{ "sol_panic_", sys_panic },
	};
	return sol_syscalls_add_all(s, calls, sizeof(calls) / sizeof(calls[0]));
}
