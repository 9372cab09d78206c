/*
 * The differences fuzz/sbpf_diff.py found between tally and LiteSVM, one case each, run in
 * both by litesvm.test.sh (no accounts: the input is the account count, the data's length,
 * the data; its first byte picks the case):
 *   0 logs more than the log collector's 10,000 bytes: "Log truncated" where the first line
 *     is dropped, then the short line that still fits;
 *   1 sol_log_data with no field ("Program data: ", the space kept);
 *   2 sol_get_epoch_rewards_sysvar into memory 8- but not 16-byte aligned (Unaligned
 *     pointer: EpochRewards holds a u128);
 *   3 sol_log_data with a field table that is not 8-byte aligned;
 *   4 sol_memcmp_ with a result pointer neither aligned nor mapped (the access violation
 *     comes first);
 *   5 sol_memcmp_ with an unaligned, mapped result pointer;
 *   6 sol_set_return_data of 1025 bytes (Return data too large (1025 > 1024));
 *   7 sol_memcpy_ of overlapping ranges (Overlapping copy);
 *   8 sol_log_data reading a field table of 1600 bytes at address 0, past the read-only
 *     data (the access violation spells the address 0x0).
 * (sol_remaining_compute_units, which the runtime does not register, cannot be here: a
 * call to it no longer links.)
 */
typedef unsigned long u64;
typedef unsigned char u8;

extern void sol_log_(const char *msg, u64 len);
extern void sol_log_data(const u8 *fields, u64 n);
extern u64 sol_get_epoch_rewards_sysvar(u8 *out);
extern void sol_memcmp_(const u8 *a, const u8 *b, u64 n, int *result);
extern void sol_memcpy_(u8 *dst, const u8 *src, u64 n);
extern void sol_set_return_data(const u8 *data, u64 len);

static u8 heap[2048] __attribute__((aligned(16)));

u64 entrypoint(const u8 *input)
{
	u8 *h = (u8 *)0x300000000;
	switch (input[16]) {
	case 0:
		for (int i = 0; i < 200; i++)
			sol_log_("fifty bytes of log, two hundred times over........", 50);
		sol_log_("x", 1);
		break;
	case 1: sol_log_data(h, 0); break;
	case 2: sol_get_epoch_rewards_sysvar(h + 8); break;
	case 3: sol_log_data(h + 4, 1); break;
	case 4: sol_memcmp_(h, h, 4, (int *)0x500000001); break;
	case 5: sol_memcmp_(h, h, 4, (int *)(h + 2)); break;
	case 6: sol_set_return_data(h, 1025); break;
	case 7: sol_memcpy_(h, h + 4, 8); break;
	case 8: sol_log_data((const u8 *)0, 100); break;
	}
	return heap[0];
}
