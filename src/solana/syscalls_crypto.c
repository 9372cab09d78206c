/*
 * sol_secp256k1_recover(hash, recovery_id, signature, result) as agave runs it: charged
 * secp256k1_recover_cost (25000) first, then the 64-byte result, the 32-byte hash and the
 * 64-byte compact signature (r, s) are translated; a recovery id past 3 returns 2
 * (InvalidRecoveryId), an r or s not below the group order or a signature no key
 * produces returns 3 (InvalidSignature), and success writes the key's x and y (the
 * uncompressed encoding without its 0x04). Debian's libsecp256k1 with its recovery module.
 */
#include <errno.h>
#include <secp256k1.h>
#include <secp256k1_recovery.h>
#include <string.h>

#include "sbpf/vm.h"
#include "solana/syscalls.h"

enum {
	SECP256K1_RECOVER_COST = 25000,
	INVALID_RECOVERY_ID = 2,
	INVALID_SIGNATURE = 3,
};

static int sys_secp256k1_recover(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	*ret = 0;
	if (sbpf_vm_consume(vm, SECP256K1_RECOVER_COST))
		return -1;
	uint8_t *result, *hash, *sig;
	if (sbpf_vm_map(vm, a[3], 64, true, &result) || sbpf_vm_map(vm, a[0], 32, false, &hash) ||
	    sbpf_vm_map(vm, a[2], 64, false, &sig))
		return -EFAULT;
	if (a[1] > 3) {
		*ret = INVALID_RECOVERY_ID;
		return 0;
	}
	const secp256k1_context *ctx = secp256k1_context_static;
	secp256k1_ecdsa_recoverable_signature rsig;
	secp256k1_pubkey key;
	uint8_t out[65];
	size_t len = sizeof(out);
	if (!secp256k1_ecdsa_recoverable_signature_parse_compact(ctx, &rsig, sig, (int)a[1]) ||
	    !secp256k1_ecdsa_recover(ctx, &key, &rsig, hash) ||
	    !secp256k1_ec_pubkey_serialize(ctx, out, &len, &key, SECP256K1_EC_UNCOMPRESSED)) {
		*ret = INVALID_SIGNATURE;
		return 0;
	}
	memcpy(result, out + 1, 64);
	return 0;
}

int sol_syscalls_crypto(struct sbpf_syscalls *s)
{
	return sbpf_syscalls_add(s, "sol_secp256k1_recover", sys_secp256k1_recover);
}
