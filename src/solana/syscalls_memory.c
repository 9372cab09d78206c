/*
 * The memory syscalls, charged as agave charges them with its default execution costs:
 * sol_memcpy_, sol_memmove_, sol_memset_ and sol_memcmp_ (the larger of mem_op_base_cost 10
 * and one CU per cpi_bytes_per_unit 250 bytes), and sol_alloc_free_, agave's bump allocator
 * over the heap region (no charge).
 */
#include <errno.h>
#include <string.h>

#include "sbpf/vm.h"
#include "solana/runtime.h"
#include "solana/syscalls.h"

enum {
	MEM_OP_BASE_COST = 10,
	CPI_BYTES_PER_UNIT = 250,
};

static int mem_op_cost(struct sbpf_vm *vm, uint64_t n)
{
	uint64_t by_size = n / CPI_BYTES_PER_UNIT;
	return sbpf_vm_consume(vm, by_size > MEM_OP_BASE_COST ? by_size : MEM_OP_BASE_COST);
}

static bool nonoverlapping(uint64_t src, uint64_t dst, uint64_t n)
{
	return src > dst ? src - dst >= n : dst - src >= n;
}

static int sys_memcpy(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	*ret = 0;
	if (mem_op_cost(vm, a[2]))
		return -1;
	if (!nonoverlapping(a[1], a[0], a[2]))
		return sbpf_vm_syscall_error(vm, "CopyOverlapping", "Overlapping copy");
	uint8_t *dst, *src;
	if (sbpf_vm_map(vm, a[0], a[2], true, &dst) || sbpf_vm_map(vm, a[1], a[2], false, &src))
		return -EFAULT;
	if (a[2])
		memcpy(dst, src, a[2]);
	return 0;
}

static int sys_memmove(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	*ret = 0;
	if (mem_op_cost(vm, a[2]))
		return -1;
	uint8_t *dst, *src;
	if (sbpf_vm_map(vm, a[0], a[2], true, &dst) || sbpf_vm_map(vm, a[1], a[2], false, &src))
		return -EFAULT;
	if (a[2])
		memmove(dst, src, a[2]);
	return 0;
}

static int sys_memset(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	*ret = 0;
	if (mem_op_cost(vm, a[2]))
		return -1;
	uint8_t *dst;
	if (sbpf_vm_map(vm, a[0], a[2], true, &dst))
		return -EFAULT;
	if (a[2])
		memset(dst, (int)(uint8_t)a[1], a[2]);
	return 0;
}

/* sol_memcmp_(a, b, n, result: *mut i32): the difference of the first differing bytes. */
static int sys_memcmp(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	*ret = 0;
	if (mem_op_cost(vm, a[2]))
		return -1;
	uint8_t *x, *y, *out;
	if (sbpf_vm_map(vm, a[0], a[2], false, &x) || sbpf_vm_map(vm, a[1], a[2], false, &y))
		return -EFAULT;
	if (sbpf_vm_map(vm, a[3], 4, true, &out))
		return -EFAULT;
	if (a[3] % 4) /* checked once the i32 maps, as agave's translate_type_mut does */
		return sbpf_vm_syscall_error(vm, "UnalignedPointer", "Unaligned pointer");
	int32_t diff = 0;
	for (uint64_t i = 0; i < a[2]; i++) {
		if (x[i] != y[i]) {
			diff = (int32_t)x[i] - (int32_t)y[i];
			break;
		}
	}
	memcpy(out, &diff, 4);
	return 0;
}

/*
 * sol_alloc_free_(size, free_addr): agave's bump allocator. Frees do nothing; allocations
 * are aligned to 8 bytes (agave's BPF_ALIGN_OF_U128) from the heap's start, to 1 under the
 * deprecated loader (unaligned input), and return 0 when the heap is full.
 */
static int sys_alloc_free(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	*ret = 0;
	if (a[1])
		return 0;
	const struct sol_invocation *inv = sbpf_vm_user(vm);
	uint64_t align = inv && !inv->input.aligned ? 1 : 8;
	uint64_t *pos = sbpf_vm_heap_cursor(vm);
	uint64_t len = sbpf_vm_heap_size(vm);
	uint64_t start = (*pos + align - 1) & ~(align - 1);
	if (start < *pos || a[0] > len || start > len - a[0])
		return 0;
	*pos = start + a[0];
	*ret = 0x300000000ull + start;
	return 0;
}

int sol_syscalls_memory(struct sbpf_syscalls *s)
{
	static const struct sol_syscall_def calls[] = {
		{ "sol_memcpy_", sys_memcpy },
		{ "sol_memmove_", sys_memmove },
		{ "sol_memset_", sys_memset },
		{ "sol_memcmp_", sys_memcmp },
		{ "sol_alloc_free_", sys_alloc_free },
	};
	return sol_syscalls_add_all(s, calls, sizeof(calls) / sizeof(calls[0]));
}
