/*
 * What the CPI test programs need of the Solana C SDK, written from the runtime's layouts:
 * the aligned input (accounts, instruction data, program id), SolAccountInfo,
 * SolInstruction and the syscalls they call. Compiled with upstream clang -target bpf.
 */
#ifndef TEST_SOLANA_RT_H
#define TEST_SOLANA_RT_H

typedef unsigned long u64;
typedef unsigned char u8;

typedef struct {
	u8 *key;
	u64 *lamports;
	u64 data_len;
	u8 *data;
	u8 *owner;
	u64 rent_epoch;
	u8 is_signer, is_writable, executable;
} SolAccountInfo;

typedef struct {
	u8 *pubkey;
	u8 is_writable, is_signer;
} SolAccountMeta;

typedef struct {
	u8 *program_id;
	SolAccountMeta *accounts;
	u64 account_len;
	u8 *data;
	u64 data_len;
} SolInstruction;

typedef struct {
	const u8 *addr;
	u64 len;
} SolSignerSeed;

typedef struct {
	const SolSignerSeed *addr;
	u64 len;
} SolSignerSeeds;

extern void sol_log_(const char *msg, u64 len);
extern void sol_log_64_(u64 a, u64 b, u64 c, u64 d, u64 e);
extern void sol_set_return_data(const u8 *data, u64 len);
extern u64 sol_invoke_signed_c(const SolInstruction *ix, const SolAccountInfo *infos, u64 n,
			       const SolSignerSeeds *seeds, u64 nseeds);

#define MAX_ACCOUNTS 4 /* eBPF allows 512 bytes of stack per function */

struct input {
	SolAccountInfo accounts[MAX_ACCOUNTS];
	u64 n;
	u8 *data;
	u64 data_len;
	u8 *program_id;
};

/* The BPF loader's aligned layout (docs/sbpf.md). */
static inline int deserialize(u8 *in, struct input *out)
{
	u64 n = *(u64 *)in;
	in += 8;
	if (n > MAX_ACCOUNTS)
		return -1;
	for (u64 i = 0; i < n; i++) {
		SolAccountInfo *a = &out->accounts[i];
		if (in[0] != 0xff) {
			*a = out->accounts[in[0]];
			in += 8;
			continue;
		}
		a->is_signer = in[1];
		a->is_writable = in[2];
		a->executable = in[3];
		a->key = in + 8;
		a->owner = in + 40;
		a->lamports = (u64 *)(in + 72);
		a->data_len = *(u64 *)(in + 80);
		a->data = in + 88;
		in += 88 + a->data_len + 10240;
		in = (u8 *)(((u64)in + 7) & ~7ul);
		a->rent_epoch = *(u64 *)in;
		in += 8;
	}
	out->n = n;
	out->data_len = *(u64 *)in;
	out->data = in + 8;
	out->program_id = in + 8 + out->data_len;
	return 0;
}

#endif
