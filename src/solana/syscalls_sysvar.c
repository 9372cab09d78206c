/*
 * Sysvar syscalls, charged as agave charges them: sol_get_clock_sysvar, _rent_,
 * _epoch_schedule_, _epoch_rewards_ and sol_get_last_restart_slot (sysvar_base_cost 100
 * plus the struct's size), and SIMD-0127's sol_get_sysvar, which copies a slice of a
 * sysvar's account data (its bincode form, not the repr(C) struct the others write). Also
 * the Solana syscalls tally does not implement: calling one ends the run with
 * UnsupportedSyscall naming it (instead of an anonymous UnsupportedInstruction), or the
 * program is refused at load time.
 *
 * Bare runs see the runtime's default sysvars (syscalls.h) and EpochSchedule::default();
 * sol_get_sysvar reads a runtime run's own Clock and Rent. The rest are LiteSVM 1.5's:
 * EpochRewards and LastRestartSlot at their defaults (zero), SlotHashes holding one entry
 * (the start slot and LiteSVM's first blockhash), an empty StakeHistory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sbpf/isa.h"
#include "sbpf/vm.h"
#include "solana/encoding.h"
#include "solana/runtime.h"
#include "solana/syscalls.h"

enum {
	SYSVAR_BASE_COST = 100,
	CPI_BYTES_PER_UNIT = 250,
	MEM_OP_BASE_COST = 10,
	EPOCH_REWARDS_SIZE = 96,  /* repr(C): 81 bytes of fields, u128 alignment */
	EPOCH_REWARDS_BINCODE = 81,
	SLOT_HASHES_SIZE = 20488, /* 8-byte length, 512 entries of (slot, hash) */
	SYSVAR_NOT_FOUND = 2,
	OFFSET_LENGTH_EXCEEDS_SYSVAR = 1,
};

int sol_sysvar_copy(struct sbpf_vm *vm, uint64_t addr, const uint8_t *bytes, size_t len,
		    size_t align)
{
	if (sbpf_vm_consume(vm, SYSVAR_BASE_COST + len))
		return -1;
	/* stricter_abi_and_runtime_constraints: never into the input region */
	if (addr >= SBPF_MM_INPUT)
		return sbpf_vm_syscall_error(vm, "InvalidPointer", "Invalid pointer");
	uint8_t *dst;
	if (sbpf_vm_map(vm, addr, len, true, &dst))
		return -EFAULT;
	/* agave's translate_type_mut checks the struct's alignment once the range maps */
	if (addr % align)
		return sbpf_vm_syscall_error(vm, "UnalignedPointer", "Unaligned pointer");
	memcpy(dst, bytes, len);
	return 0;
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* Clock: slot, epoch_start_timestamp, epoch, leader_schedule_epoch, unix_timestamp. */
void sol_default_clock(uint8_t clock[40])
{
	memset(clock, 0, 40);
	put64(clock, SOL_DEFAULT_SLOT);
}

/* Rent (repr(C), 24 bytes): lamports per byte (per byte-year before SIMD-0194), the
 * exemption threshold as an f64, burn_percent, padding. */
void sol_default_rent(uint8_t rent[24])
{
	double threshold = 1.0;
	memset(rent, 0, 24);
	put64(rent, 6960);
	memcpy(rent + 8, &threshold, 8);
	rent[16] = 50;
}

/* Exact in integers for the thresholds the runtime uses (1.0 since SIMD-0194, 2.0 before),
 * through a double otherwise, as solana-rent computes it. */
uint64_t sol_rent_minimum(const uint8_t rent[24], size_t len)
{
	uint64_t per_byte;
	double threshold;
	memcpy(&per_byte, rent, 8);
	memcpy(&threshold, rent + 8, 8);
	uint64_t base = (128 + (uint64_t)len) * per_byte;
	if (threshold == 1.0 || threshold == 2.0)
		return base * (uint64_t)threshold;
	return (uint64_t)((double)base * threshold);
}

const uint8_t sol_default_blockhash[32] = {
	0xae, 0xeb, 0xad, 0x4a, 0x79, 0x6f, 0xcc, 0x2e, 0x15, 0xdc, 0x4c, 0x60, 0x61, 0xb4, 0x5e, 0xd9,
	0xb3, 0x73, 0xf2, 0x6a, 0xdf, 0xc7, 0x98, 0xca, 0x7d, 0x2d, 0x8c, 0xc5, 0x81, 0x82, 0x71, 0x8e,
};

void sol_default_recent_blockhashes(uint8_t data[SOL_RECENT_BLOCKHASHES_SIZE])
{
	memset(data, 0, SOL_RECENT_BLOCKHASHES_SIZE);
	put64(data, 1);
	memcpy(data + 8, sol_default_blockhash, 32);
}

static int sys_clock(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	uint8_t clock[40];
	sol_default_clock(clock);
	*ret = 0;
	return sol_sysvar_copy(vm, a[0], clock, sizeof(clock), 8);
}

static int sys_rent(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	uint8_t rent[24];
	sol_default_rent(rent);
	*ret = 0;
	return sol_sysvar_copy(vm, a[0], rent, sizeof(rent), 8);
}

/* EpochSchedule (repr(C), 40 bytes): 432000 slots per epoch, the same leader schedule
 * offset, warmup on, so the first normal epoch is 14 and its first slot 524256. */
void sol_default_epoch_schedule(uint8_t es[40])
{
	memset(es, 0, 40);
	put64(es, 432000);
	put64(es + 8, 432000);
	es[16] = 1;
	put64(es + 24, 14);
	put64(es + 32, 524256);
}

static int sys_epoch_schedule(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	uint8_t es[40];
	sol_default_epoch_schedule(es);
	*ret = 0;
	return sol_sysvar_copy(vm, a[0], es, sizeof(es), 8);
}

static int sys_get_epoch_rewards(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	static const uint8_t rewards[EPOCH_REWARDS_SIZE];
	*ret = 0;
	return sol_sysvar_copy(vm, a[0], rewards, sizeof(rewards), 16);
}

static int sys_get_last_restart_slot(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	static const uint8_t slot[8];
	*ret = 0;
	return sol_sysvar_copy(vm, a[0], slot, sizeof(slot), 8);
}

/*
 * Fills buf (SLOT_HASHES_SIZE bytes) with the account data of the sysvar named id and
 * returns its length, or 0 for a sysvar the runtime's cache does not hold (Fees,
 * RecentBlockhashes, SlotHistory, Instructions, anything else).
 */
static size_t sysvar_data(struct sbpf_vm *vm, const uint8_t id[32], uint8_t *buf)
{
	static const char *const names[] = {
		"SysvarC1ock11111111111111111111111111111111",
		SOL_SYSVAR_RENT_ID,
		"SysvarEpochSchedu1e111111111111111111111111",
		"SysvarEpochRewards1111111111111111111111111",
		"SysvarLastRestartS1ot1111111111111111111111",
		"SysvarS1otHashes111111111111111111111111111",
		"SysvarStakeHistory1111111111111111111111111",
	};
	size_t which = sizeof(names) / sizeof(names[0]);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		uint8_t key[32];
		if (!sol_base58_decode(names[i], key, sizeof(key)) && !memcmp(key, id, 32))
			which = i;
	}
	const struct sol_invocation *inv = sbpf_vm_user(vm);
	uint8_t rent[24], schedule[40];
	memset(buf, 0, SLOT_HASHES_SIZE);
	switch (which) {
	case 0:
		if (inv)
			memcpy(buf, inv->rt->clock, 40);
		else
			sol_default_clock(buf);
		return 40;
	case 1: /* bincode: the 17 bytes of fields without repr(C)'s padding */
		if (inv)
			memcpy(rent, inv->rt->rent, 24);
		else
			sol_default_rent(rent);
		memcpy(buf, rent, 17);
		return 17;
	case 2:
		sol_default_epoch_schedule(schedule);
		memcpy(buf, schedule, 17);
		memcpy(buf + 17, schedule + 24, 16);
		return 33;
	case 3:
		return EPOCH_REWARDS_BINCODE;
	case 4:
		return 8;
	case 5: /* one entry: the start slot and LiteSVM's first blockhash */
		put64(buf, 1);
		put64(buf + 8, SOL_DEFAULT_SLOT);
		memcpy(buf + 16, sol_default_blockhash, 32);
		return SLOT_HASHES_SIZE;
	case 6:
		return 8;
	default:
		return 0;
	}
}

/*
 * sol_get_sysvar(id, var, offset, length) -> 0, 1 when [offset, offset + length) is past
 * the sysvar's data, 2 when the runtime has no such sysvar; charged 100 + 32 / 250 +
 * max(length / 250, 10) first, then var (not in the input region) and id are translated.
 */
static int sys_get_sysvar(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	*ret = 0;
	uint64_t buf_cost = a[3] / CPI_BYTES_PER_UNIT;
	if (sbpf_vm_consume(vm, SYSVAR_BASE_COST + 32 / CPI_BYTES_PER_UNIT +
				(buf_cost > MEM_OP_BASE_COST ? buf_cost : MEM_OP_BASE_COST)))
		return -1;
	if (a[1] >= SBPF_MM_INPUT)
		return sbpf_vm_syscall_error(vm, "InvalidPointer", "Invalid pointer");
	uint8_t *var, *id;
	if (sbpf_vm_map(vm, a[1], a[3], true, &var) || sbpf_vm_map(vm, a[0], 32, false, &id))
		return -EFAULT;
	if (a[2] + a[3] < a[2] || a[1] + a[3] < a[1])
		return sbpf_vm_syscall_error(vm, "ArithmeticOverflow", "Arithmetic overflow");
	uint8_t *buf = malloc(SLOT_HASHES_SIZE);
	if (!buf)
		return -ENOMEM;
	size_t len = sysvar_data(vm, id, buf);
	if (!len)
		*ret = SYSVAR_NOT_FOUND;
	else if (a[2] + a[3] > len)
		*ret = OFFSET_LENGTH_EXCEEDS_SYSVAR;
	else if (a[3])
		memcpy(var, buf + a[2], a[3]);
	free(buf);
	return 0;
}

static int sys_unsupported(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	const char *name = sbpf_vm_current_syscall(vm);
	return sbpf_vm_syscall_error(vm, "UnsupportedSyscall", "%s is not implemented by tally",
				     name ? name : "this syscall");
}

/* Syscalls the Solana runtime has and tally does not (yet): CPI in a bare run (fixture runs
 * point it at the runtime's, sol_syscalls_cpi). */
static const char *const unsupported[] = { "sol_invoke_signed_c", "sol_invoke_signed_rust" };

/* Registered by LiteSVM 1.5 (mainnet's feature set) and not implemented by tally: a program
 * that calls one is refused when it loads rather than failing later. (sol_sha512,
 * sol_blake3, sol_big_mod_exp and sol_get_fees_sysvar are not registered there: a call is
 * an unknown syscall, as in the runtime.) */
static const char *const refused[] = {
	"sol_curve_decompress", "sol_curve_pairing_map",
};

int sol_syscalls_sysvars(struct sbpf_syscalls *s)
{
	static const struct sol_syscall_def calls[] = {
		{ "sol_get_clock_sysvar", sys_clock },
		{ "sol_get_rent_sysvar", sys_rent },
		{ "sol_get_epoch_schedule_sysvar", sys_epoch_schedule },
		{ "sol_get_epoch_rewards_sysvar", sys_get_epoch_rewards },
		{ "sol_get_last_restart_slot", sys_get_last_restart_slot },
		{ "sol_get_sysvar", sys_get_sysvar },
	};
	int rc = sol_syscalls_add_all(s, calls, sizeof(calls) / sizeof(calls[0]));
	for (size_t i = 0; !rc && i < sizeof(unsupported) / sizeof(unsupported[0]); i++)
		rc = sbpf_syscalls_add(s, unsupported[i], sys_unsupported);
	for (size_t i = 0; !rc && i < sizeof(refused) / sizeof(refused[0]); i++)
		rc = sbpf_syscalls_add(s, refused[i], NULL);
	return rc;
}
