/*
 * CPI caller through sol_invoke_signed_rust: the Rust SDK's layouts, written out in C.
 * AccountInfo holds its lamports and data behind Rc<RefCell<..>> (an Rc box: strong and
 * weak counts, the RefCell's borrow flag, then the value), StableInstruction holds
 * (ptr, capacity, length) vectors and AccountMeta is { pubkey, is_signer, is_writable }.
 * Accounts as for caller.c: 0 the callee program, 1 the vault, 2 the destination. Moves
 * 500 lamports from the vault to the destination through the callee, then logs what the
 * runtime wrote back into the Rc boxes.
 */
#include "solana_rt.h"

extern void *sol_alloc_free_(u64 size, void *free);
extern u64 sol_invoke_signed_rust(const void *ix, const void *infos, u64 n, const void *seeds,
				  u64 nseeds);

struct rc_lamports {
	u64 strong, weak;
	long borrow;
	u64 *value;
};
struct rc_data {
	u64 strong, weak;
	long borrow;
	u8 *ptr;
	u64 len;
};
struct account_info {
	u8 *key;
	struct rc_lamports *lamports;
	struct rc_data *data;
	u8 *owner;
	u64 rent_epoch;
	u8 is_signer, is_writable, executable;
};
struct account_meta {
	u8 pubkey[32];
	u8 is_signer, is_writable;
};
struct stable_vec {
	void *ptr;
	u64 cap, len;
};
struct stable_instruction {
	struct stable_vec accounts, data;
	u8 program_id[32];
};

struct frame {
	struct input in;
	struct rc_lamports lam[MAX_ACCOUNTS];
	struct rc_data data[MAX_ACCOUNTS];
	struct account_info infos[MAX_ACCOUNTS];
	struct account_meta metas[2];
	struct stable_instruction ix;
	u64 amount;
};

u64 entrypoint(u8 *input)
{
	struct frame *f = sol_alloc_free_(sizeof(struct frame), 0);
	if (!f || deserialize(input, &f->in) || f->in.n < 3)
		return 1;
	for (u64 i = 0; i < f->in.n; i++) {
		SolAccountInfo *a = &f->in.accounts[i];
		f->lam[i] = (struct rc_lamports){ 1, 1, 0, a->lamports };
		f->data[i] = (struct rc_data){ 1, 1, 0, a->data, a->data_len };
		f->infos[i] = (struct account_info){ a->key, &f->lam[i], &f->data[i], a->owner,
						     a->rent_epoch, a->is_signer, a->is_writable,
						     a->executable };
	}
	for (u64 k = 0; k < 2; k++) {
		for (u64 j = 0; j < 32; j++)
			f->metas[k].pubkey[j] = f->in.accounts[k + 1].key[j];
		f->metas[k].is_signer = 0;
		f->metas[k].is_writable = 1;
	}
	f->amount = 500;
	f->ix.accounts = (struct stable_vec){ f->metas, 2, 2 };
	f->ix.data = (struct stable_vec){ &f->amount, 8, 8 };
	for (u64 j = 0; j < 32; j++)
		f->ix.program_id[j] = f->in.accounts[0].key[j];
	sol_invoke_signed_rust(&f->ix, f->infos, f->in.n, 0, 0);
	struct rc_data *vault = f->infos[1].data;
	sol_log_64_(vault->len, *f->infos[1].lamports->value, *f->infos[2].lamports->value,
		    vault->ptr[vault->len - 1], 0);
	return 0;
}
