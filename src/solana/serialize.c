/*
 * The BPF loader's input serialization and its deserialization, as agave lays them out.
 * Aligned (BPF loader v2 and the upgradeable loader): a u64 account count; per account either a duplicate marker (the position of the
 * first occurrence, then 7 bytes of padding) or 0xff, is_signer, is_writable, executable,
 * 4 bytes of padding, key, owner, lamports, data length, the data, 10 KiB of zeroed room to
 * grow into (realloc), padding to 8 bytes, rent_epoch; then the instruction data's length
 * and bytes, and the program id. Unaligned (the deprecated BPF loader): a duplicate is its
 * position alone; an account is 0xff, is_signer, is_writable, key, lamports, data length,
 * data, owner, executable, rent_epoch, with no padding and no room to grow.
 */
#include "solana/serialize.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool owned(const struct sol_borrow *b)
{
	return !memcmp(b->a->owner, b->program_id, 32);
}

const char *sol_account_set_lamports(struct sol_borrow *b, uint64_t lamports)
{
	if (!owned(b) && lamports < b->a->lamports)
		return "ExternalAccountLamportSpend";
	if (!b->writable)
		return "ReadonlyLamportChange";
	if (b->a->executable)
		return "ExecutableLamportChange";
	b->a->lamports = lamports;
	return NULL;
}

static bool zeroed(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

const char *sol_account_set_owner(struct sol_borrow *b, const uint8_t owner[32])
{
	if (!owned(b) || !b->writable || b->a->executable || !zeroed(b->a->data, b->a->len))
		return "ModifiedProgramId";
	memcpy(b->a->owner, owner, 32);
	return NULL;
}

const char *sol_account_data_error(const struct sol_borrow *b, size_t len)
{
	if (!owned(b) && len != b->a->len)
		return "AccountDataSizeChanged";
	if (len > SOL_MAX_PERMITTED_DATA_LENGTH)
		return "InvalidRealloc";
	if (b->a->executable)
		return "ExecutableDataModified";
	if (!b->writable)
		return "ReadonlyDataModified";
	if (!owned(b))
		return "ExternalAccountDataModified";
	return NULL;
}

const char *sol_account_set_data(struct sol_borrow *b, const uint8_t *data, size_t len,
				 bool *oom)
{
	*oom = false;
	const char *e = sol_account_data_error(b, len);
	if (e)
		return len == b->a->len && (!len || !memcmp(b->a->data, data, len)) ? NULL : e;
	if (len != b->a->len) {
		uint8_t *p = realloc(b->a->data, len ? len : 1);
		if (!p) {
			*oom = true;
			return NULL;
		}
		b->a->data = p;
		b->a->len = len;
	}
	if (len)
		memmove(b->a->data, data, len);
	return NULL;
}

static size_t pad8(size_t n)
{
	return (8 - n % 8) % 8;
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static int first_occurrence(const struct sol_ix_account *ix, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (ix[j].index == ix[i].index)
			return (int)j;
	return -1;
}

void sol_input_free(struct sol_input *in)
{
	free(in->buf);
	free(in->off);
	free(in->pre_len);
	free(in->dup_of);
	memset(in, 0, sizeof(*in));
}

static size_t record_size(const struct sol_account *a, bool aligned)
{
	if (!aligned)
		return SOL_UNALIGNED_DATA + a->len + 32 + 1 + 8;
	return SOL_SER_DATA + a->len + SOL_MAX_PERMITTED_DATA_INCREASE + pad8(a->len) + 8;
}

/* The deprecated loader's record: no padding, no realloc room, owner after the data. */
static void write_unaligned(uint8_t *p, const struct sol_account *a,
			    const struct sol_ix_account *ix)
{
	p[0] = SOL_NON_DUP_MARKER;
	p[1] = ix->is_signer;
	p[2] = ix->is_writable;
	memcpy(p + 3, a->key, 32);
	put64(p + SOL_UNALIGNED_LAMPORTS, a->lamports);
	put64(p + SOL_UNALIGNED_LAMPORTS + 8, a->len);
	if (a->len)
		memcpy(p + SOL_UNALIGNED_DATA, a->data, a->len);
	p += SOL_UNALIGNED_DATA + a->len;
	memcpy(p, a->owner, 32);
	p[32] = a->executable;
	put64(p + 33, a->rent_epoch);
}

int sol_serialize(const struct sol_account *accounts, const struct sol_ix_account *ix,
		  size_t n, const uint8_t *data, size_t data_len, const uint8_t program_id[32],
		  bool aligned, struct sol_input *out, const char **ierr)
{
	memset(out, 0, sizeof(*out));
	*ierr = NULL;
	if (n > SOL_MAX_INSTRUCTION_ACCOUNTS) {
		*ierr = "MaxAccountsExceeded";
		return 0;
	}
	size_t size = 8 + 8 + data_len + 32;
	for (size_t i = 0; i < n; i++)
		size += first_occurrence(ix, i) >= 0 ? (aligned ? 8 : 1)
						     : record_size(&accounts[ix[i].index], aligned);
	out->buf = calloc(1, size);
	out->off = calloc(n ? n : 1, sizeof(*out->off));
	out->pre_len = calloc(n ? n : 1, sizeof(*out->pre_len));
	out->dup_of = calloc(n ? n : 1, sizeof(*out->dup_of));
	if (!out->buf || !out->off || !out->pre_len || !out->dup_of) {
		sol_input_free(out);
		return -ENOMEM;
	}
	out->len = size;
	out->n = n;
	out->aligned = aligned;
	uint8_t *p = out->buf;
	put64(p, n);
	size_t at = 8;
	for (size_t i = 0; i < n; i++) {
		const struct sol_account *a = &accounts[ix[i].index];
		int dup = first_occurrence(ix, i);
		out->off[i] = at;
		out->dup_of[i] = dup;
		out->pre_len[i] = a->len;
		if (dup >= 0) {
			p[at] = (uint8_t)dup;
			at += aligned ? 8 : 1;
			continue;
		}
		if (!aligned) {
			write_unaligned(p + at, a, &ix[i]);
			at += record_size(a, false);
			continue;
		}
		p[at] = SOL_NON_DUP_MARKER;
		p[at + SOL_SER_SIGNER] = ix[i].is_signer;
		p[at + SOL_SER_WRITABLE] = ix[i].is_writable;
		p[at + SOL_SER_EXECUTABLE] = a->executable;
		memcpy(p + at + SOL_SER_KEY, a->key, 32);
		memcpy(p + at + SOL_SER_OWNER, a->owner, 32);
		put64(p + at + SOL_SER_LAMPORTS, a->lamports);
		put64(p + at + SOL_SER_DATA_LEN, a->len);
		if (a->len)
			memcpy(p + at + SOL_SER_DATA, a->data, a->len);
		at += record_size(a, true);
		put64(p + at - 8, a->rent_epoch);
	}
	put64(p + at, data_len);
	if (data_len)
		memcpy(p + at + 8, data, data_len);
	memcpy(p + at + 8 + data_len, program_id, 32);
	return 0;
}

/* One non-duplicate account: lamports, data (length changes within the realloc room),
 * then owner, so a program can still write an account it is giving away. */
/* The deprecated loader reads back lamports and data of the same length, nothing else. */
static int deserialize_unaligned(const struct sol_input *in, size_t i, struct sol_borrow *b,
				 const char **ierr)
{
	const uint8_t *rec = in->buf + in->off[i];
	uint64_t lamports = get64(rec + SOL_UNALIGNED_LAMPORTS);
	if (lamports != b->a->lamports && (*ierr = sol_account_set_lamports(b, lamports)))
		return 0;
	bool oom;
	*ierr = sol_account_set_data(b, rec + SOL_UNALIGNED_DATA, in->pre_len[i], &oom);
	return oom ? -ENOMEM : 0;
}

static int deserialize_one(const struct sol_input *in, size_t i, struct sol_borrow *b,
			   const char **ierr)
{
	if (!in->aligned)
		return deserialize_unaligned(in, i, b, ierr);
	const uint8_t *rec = in->buf + in->off[i];
	uint64_t lamports = get64(rec + SOL_SER_LAMPORTS);
	uint64_t post_len = get64(rec + SOL_SER_DATA_LEN);
	if (lamports != b->a->lamports && (*ierr = sol_account_set_lamports(b, lamports)))
		return 0;
	uint64_t pre_len = in->pre_len[i];
	if ((post_len > pre_len && post_len - pre_len > SOL_MAX_PERMITTED_DATA_INCREASE) ||
	    post_len > SOL_MAX_PERMITTED_DATA_LENGTH) {
		*ierr = "InvalidRealloc";
		return 0;
	}
	bool oom;
	*ierr = sol_account_set_data(b, rec + SOL_SER_DATA, post_len, &oom);
	if (oom)
		return -ENOMEM;
	if (*ierr)
		return 0;
	const uint8_t *owner = rec + SOL_SER_OWNER;
	if (memcmp(owner, b->a->owner, 32))
		*ierr = sol_account_set_owner(b, owner);
	return 0;
}

int sol_deserialize(const struct sol_input *in, struct sol_account *accounts,
		    const struct sol_ix_account *ix, const uint8_t program_id[32],
		    const char **ierr)
{
	*ierr = NULL;
	for (size_t i = 0; i < in->n; i++) {
		if (in->dup_of[i] >= 0)
			continue;
		struct sol_borrow b = { &accounts[ix[i].index], ix[i].is_writable, program_id };
		int rc = deserialize_one(in, i, &b, ierr);
		if (rc || *ierr)
			return rc;
	}
	return 0;
}
