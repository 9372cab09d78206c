/*
 * Sysvars as a bare run sees them (the runtime's defaults), and the syscalls tally lacks:
 * input[0] = 1 calls sol_invoke_signed_c, which must fail naming itself.
 */
#include "solana.h"

struct rent {
	u64 lamports_per_byte_year;
	u64 exemption_threshold; /* an f64: BPF has no floating point, its bits are logged */
	u8 burn_percent;
};

struct epoch_schedule {
	u64 slots_per_epoch, leader_schedule_slot_offset;
	_Bool warmup;
	u64 first_normal_epoch, first_normal_slot;
};

extern u64 sol_get_rent_sysvar(struct rent *out);
extern u64 sol_get_epoch_schedule_sysvar(struct epoch_schedule *out);
extern u64 sol_get_clock_sysvar(u8 *out);
extern u64 sol_invoke_signed_c(const void *ix, const void *infos, u64 n, const void *seeds, u64 m);

u64 entrypoint(const u8 *input)
{
	struct rent r;
	struct epoch_schedule e;
	u8 clock[40];
	sol_get_rent_sysvar(&r);
	sol_get_epoch_schedule_sysvar(&e);
	sol_get_clock_sysvar(clock);
	sol_log_64_(r.lamports_per_byte_year, r.exemption_threshold, r.burn_percent, 0, 0);
	sol_log_64_(e.slots_per_epoch, e.leader_schedule_slot_offset, e.warmup, e.first_normal_epoch,
		    e.first_normal_slot);
	if (input[0] == 1)
		sol_invoke_signed_c(0, 0, 0, 0, 0);
	return clock[0] + clock[39];
}
