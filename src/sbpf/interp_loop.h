/*
 * The interpreter loop, included twice by interp.c: once plain (INTERP_HOOKED 0) and once
 * with the hooks and the executed-pc trace (INTERP_HOOKED 1), so the plain loop pays
 * nothing for profiling. Not a header to include anywhere else.
 *
 * Dispatch is direct threading over the pre-decoded program: each instruction jumps
 * through a per-version label table indexed by its kind (computed goto). code[ninsns] is a
 * sentinel whose kind ends the run with ExecutionOverrun, so falling off the end needs no
 * per-step bounds check; jump targets were checked by the verifier.
 *
 * Metering matches the reference: an instruction is charged before it runs (so a failing
 * instruction is paid for), and one that finds no CU left fails ExceededMaxInstructions.
 *
 * The instruction meter is the local cu, committed to vm->remaining before every syscall
 * and when the run ends; both go through functions of interp.c that carry the tracepoints,
 * so this loop compiles the same with and without them.
 */

#define DST (r[d->dst])
#define SRC (r[d->src])
#define IMM ((uint64_t)d->imm)

#if INTERP_HOOKED
#define TRACE()                                              \
	do {                                                 \
		vm->trace[nt++] = (uint32_t)pc;              \
		if (__builtin_expect(nt == SBPF_TRACE_CAP, 0)) \
			FLUSH();                             \
	} while (0)
#define FLUSH()                                                     \
	do {                                                        \
		if (nt && vm->hooks.on_insns)                       \
			vm->hooks.on_insns(vm->hooks.ctx, vm->trace, nt); \
		nt = 0;                                             \
	} while (0)
#else
#define TRACE() ((void)0)
#define FLUSH() ((void)0)
#endif

#define DISPATCH()                                      \
	do {                                            \
		if (__builtin_expect(cu == 0, 0))       \
			goto cu_exhausted;              \
		cu--;                                   \
		d = &code[pc];                          \
		TRACE();                                \
		goto *labels[d->kind];                  \
	} while (0)
#define NEXT()            \
	do {              \
		pc++;     \
		DISPATCH(); \
	} while (0)
#define JUMP_IF(cond)                          \
	do {                                   \
		pc += 1;                       \
		if (cond)                      \
			pc += (int64_t)d->off; \
		DISPATCH();                    \
	} while (0)
#define FAIL(e)               \
	do {                  \
		err = (e);    \
		goto fail;    \
	} while (0)
#define LOAD(T)                                                                      \
	do {                                                                         \
		uint64_t a_ = SRC + (uint64_t)(int64_t)d->off;                       \
		uint8_t *h_ = sbpf_xlate(vm, a_, sizeof(T), false);                  \
		if (__builtin_expect(!h_, 0)) {                                      \
			sbpf_vm_access_fault(vm, a_, sizeof(T), false, res);         \
			goto fault;                                                  \
		}                                                                    \
		T v_;                                                                \
		memcpy(&v_, h_, sizeof(T));                                          \
		DST = v_;                                                            \
		NEXT();                                                              \
	} while (0)
#define STORE(T, val)                                                                \
	do {                                                                         \
		uint64_t a_ = DST + (uint64_t)(int64_t)d->off;                       \
		uint8_t *h_ = sbpf_xlate(vm, a_, sizeof(T), true);                   \
		if (__builtin_expect(!h_, 0)) {                                      \
			sbpf_vm_access_fault(vm, a_, sizeof(T), true, res);          \
			goto fault;                                                  \
		}                                                                    \
		T v_ = (T)(val);                                                     \
		memcpy(h_, &v_, sizeof(T));                                          \
		NEXT();                                                              \
	} while (0)
#define SEXT32(x) ((uint64_t)(int64_t)(int32_t)(uint32_t)(x))
#define ZEXT32(x) ((uint64_t)(uint32_t)(x))
#define PUSH_FRAME()                                                              \
	do {                                                                      \
		struct sbpf_frame *f_ = &vm->frames[depth];                       \
		memcpy(f_->saved, &r[6], sizeof(f_->saved));                      \
		f_->fp = r[10];                                                   \
		f_->ret_pc = pc + 1;                                              \
		if (++depth == vm->max_depth)                                     \
			FAIL(SBPF_E_CALL_DEPTH_EXCEEDED);                         \
		r[10] += vm->frame_step;                                          \
	} while (0)

int INTERP_NAME(struct sbpf_vm *vm)
{
	/* One label per kind, in SBPF_KINDS order; version-dependent meanings are patched
	 * below. The extra last entry is the end-of-text sentinel. */
#define LABEL_OF(k, m, f) &&L_##k,
	static const void *const base_labels[SBPF_K_COUNT + 1] = { SBPF_KINDS(LABEL_OF) &&L_OVERRUN };
#undef LABEL_OF
	const void *labels[SBPF_K_COUNT + 1];
	memcpy(labels, base_labels, sizeof(labels));
	enum sbpf_version ver = vm->prog->version;
	if (sbpf_explicit_sign_ext(ver)) {
		labels[SBPF_K_ADD32I] = &&L_ADD32I_Z;
		labels[SBPF_K_ADD32R] = &&L_ADD32R_Z;
		labels[SBPF_K_SUB32I] = &&L_SUB32I_Z;
		labels[SBPF_K_SUB32R] = &&L_SUB32R_Z;
		labels[SBPF_K_MOV32R] = &&L_MOV32R_S;
	}
	if (sbpf_swap_sub_imm(ver)) {
		labels[SBPF_K_SUB32I] = &&L_SUB32I_SWAP;
		labels[SBPF_K_SUB64I] = &&L_SUB64I_SWAP;
	}

	const struct sbpf_program *prog = vm->prog;
	const struct sbpf_dinsn *code = prog->code;
	const struct sbpf_dinsn *d;
	struct sbpf_result *res = vm->res;
	uint64_t r[16];
	memcpy(r, vm->reg, sizeof(r));
	uint64_t pc = vm->pc;
	uint64_t cu = vm->remaining;
	unsigned depth = vm->depth;
	enum sbpf_error err = SBPF_OK;
#if INTERP_HOOKED
	size_t nt = 0;
#endif

	DISPATCH();

L_INVALID:
	FAIL(SBPF_E_UNSUPPORTED_INSTRUCTION);
L_OVERRUN:
	FAIL(SBPF_E_EXECUTION_OVERRUN);
L_LDDW:
	DST = IMM;
	pc++;
	NEXT();

L_LD1: LOAD(uint8_t);
L_LD2: LOAD(uint16_t);
L_LD4: LOAD(uint32_t);
L_LD8: LOAD(uint64_t);
L_ST1I: STORE(uint8_t, IMM);
L_ST2I: STORE(uint16_t, IMM);
L_ST4I: STORE(uint32_t, IMM);
L_ST8I: STORE(uint64_t, IMM);
L_ST1R: STORE(uint8_t, SRC);
L_ST2R: STORE(uint16_t, SRC);
L_ST4R: STORE(uint32_t, SRC);
L_ST8R: STORE(uint64_t, SRC);

	/* 32-bit arithmetic: add, sub and mul sign-extend their result before v2 (the
	 * reference's sign_extension), v2 zero-extends; everything else zero-extends. */
L_ADD32I: DST = SEXT32((uint32_t)DST + (uint32_t)IMM); NEXT();
L_ADD32R: DST = SEXT32((uint32_t)DST + (uint32_t)SRC); NEXT();
L_SUB32I: DST = SEXT32((uint32_t)DST - (uint32_t)IMM); NEXT();
L_SUB32R: DST = SEXT32((uint32_t)DST - (uint32_t)SRC); NEXT();
L_ADD32I_Z: DST = ZEXT32((uint32_t)DST + (uint32_t)IMM); NEXT();
L_ADD32R_Z: DST = ZEXT32((uint32_t)DST + (uint32_t)SRC); NEXT();
L_SUB32I_Z: DST = ZEXT32((uint32_t)DST - (uint32_t)IMM); NEXT();
L_SUB32R_Z: DST = ZEXT32((uint32_t)DST - (uint32_t)SRC); NEXT();
L_SUB32I_SWAP: DST = ZEXT32((uint32_t)IMM - (uint32_t)DST); NEXT();
L_MUL32I: DST = SEXT32((uint32_t)DST * (uint32_t)IMM); NEXT();
L_MUL32R: DST = SEXT32((uint32_t)DST * (uint32_t)SRC); NEXT();
L_DIV32I: DST = ZEXT32((uint32_t)DST / (uint32_t)IMM); NEXT();
L_DIV32R:
	if (!(uint32_t)SRC)
		FAIL(SBPF_E_DIVIDE_BY_ZERO);
	DST = ZEXT32((uint32_t)DST / (uint32_t)SRC);
	NEXT();
L_MOD32I: DST = ZEXT32((uint32_t)DST % (uint32_t)IMM); NEXT();
L_MOD32R:
	if (!(uint32_t)SRC)
		FAIL(SBPF_E_DIVIDE_BY_ZERO);
	DST = ZEXT32((uint32_t)DST % (uint32_t)SRC);
	NEXT();
L_OR32I: DST = ZEXT32(DST | IMM); NEXT();
L_OR32R: DST = ZEXT32(DST | SRC); NEXT();
L_AND32I: DST = ZEXT32(DST & IMM); NEXT();
L_AND32R: DST = ZEXT32(DST & SRC); NEXT();
L_XOR32I: DST = ZEXT32(DST ^ IMM); NEXT();
L_XOR32R: DST = ZEXT32(DST ^ SRC); NEXT();
L_LSH32I: DST = ZEXT32((uint32_t)DST << (IMM & 31)); NEXT();
L_LSH32R: DST = ZEXT32((uint32_t)DST << (SRC & 31)); NEXT();
L_RSH32I: DST = ZEXT32((uint32_t)DST >> (IMM & 31)); NEXT();
L_RSH32R: DST = ZEXT32((uint32_t)DST >> (SRC & 31)); NEXT();
L_ARSH32I: DST = ZEXT32((uint32_t)((int32_t)(uint32_t)DST >> (IMM & 31))); NEXT();
L_ARSH32R: DST = ZEXT32((uint32_t)((int32_t)(uint32_t)DST >> (SRC & 31))); NEXT();
L_NEG32: DST = ZEXT32(0u - (uint32_t)DST); NEXT();
L_MOV32I: DST = ZEXT32(IMM); NEXT();
L_MOV32R: DST = ZEXT32(SRC); NEXT();
L_MOV32R_S: DST = SEXT32(SRC); NEXT();
L_LE:
	switch (d->imm) {
	case 16: DST = (uint16_t)DST; break;
	case 32: DST = (uint32_t)DST; break;
	case 64: break;
	default: FAIL(SBPF_E_INVALID_INSTRUCTION);
	}
	NEXT();
L_BE:
	switch (d->imm) {
	case 16: DST = __builtin_bswap16((uint16_t)DST); break;
	case 32: DST = __builtin_bswap32((uint32_t)DST); break;
	case 64: DST = __builtin_bswap64(DST); break;
	default: FAIL(SBPF_E_INVALID_INSTRUCTION);
	}
	NEXT();

L_ADD64I: DST += IMM; NEXT();
L_ADD64R: DST += SRC; NEXT();
L_SUB64I: DST -= IMM; NEXT();
L_SUB64I_SWAP: DST = IMM - DST; NEXT();
L_SUB64R: DST -= SRC; NEXT();
L_MUL64I: DST *= IMM; NEXT();
L_MUL64R: DST *= SRC; NEXT();
L_DIV64I: DST /= IMM; NEXT();
L_DIV64R:
	if (!SRC)
		FAIL(SBPF_E_DIVIDE_BY_ZERO);
	DST /= SRC;
	NEXT();
L_MOD64I: DST %= IMM; NEXT();
L_MOD64R:
	if (!SRC)
		FAIL(SBPF_E_DIVIDE_BY_ZERO);
	DST %= SRC;
	NEXT();
L_OR64I: DST |= IMM; NEXT();
L_OR64R: DST |= SRC; NEXT();
L_AND64I: DST &= IMM; NEXT();
L_AND64R: DST &= SRC; NEXT();
L_XOR64I: DST ^= IMM; NEXT();
L_XOR64R: DST ^= SRC; NEXT();
L_LSH64I: DST <<= (IMM & 63); NEXT();
L_LSH64R: DST <<= (SRC & 63); NEXT();
L_RSH64I: DST >>= (IMM & 63); NEXT();
L_RSH64R: DST >>= (SRC & 63); NEXT();
L_ARSH64I: DST = (uint64_t)((int64_t)DST >> (IMM & 63)); NEXT();
L_ARSH64R: DST = (uint64_t)((int64_t)DST >> (SRC & 63)); NEXT();
L_NEG64: DST = 0 - DST; NEXT();
L_MOV64I: DST = IMM; NEXT();
L_MOV64R: DST = SRC; NEXT();
L_HOR64I: DST |= IMM << 32; NEXT();

	/* v2's product/quotient/remainder class */
L_LMUL32I: DST = ZEXT32((uint32_t)DST * (uint32_t)IMM); NEXT();
L_LMUL32R: DST = ZEXT32((uint32_t)DST * (uint32_t)SRC); NEXT();
L_LMUL64I: DST *= IMM; NEXT();
L_LMUL64R: DST *= SRC; NEXT();
L_UHMUL64I: DST = (uint64_t)(((unsigned __int128)DST * (uint32_t)IMM) >> 64); NEXT();
L_UHMUL64R: DST = (uint64_t)(((unsigned __int128)DST * SRC) >> 64); NEXT();
L_SHMUL64I: DST = (uint64_t)(((__int128)(int64_t)DST * (__int128)d->imm) >> 64); NEXT();
L_SHMUL64R: DST = (uint64_t)(((__int128)(int64_t)DST * (__int128)(int64_t)SRC) >> 64); NEXT();
L_UDIV32I: DST = ZEXT32((uint32_t)DST / (uint32_t)IMM); NEXT();
L_UDIV32R:
	if (!(uint32_t)SRC)
		FAIL(SBPF_E_DIVIDE_BY_ZERO);
	DST = ZEXT32((uint32_t)DST / (uint32_t)SRC);
	NEXT();
L_UDIV64I: DST /= (uint32_t)IMM; NEXT();
L_UDIV64R:
	if (!SRC)
		FAIL(SBPF_E_DIVIDE_BY_ZERO);
	DST /= SRC;
	NEXT();
L_UREM32I: DST = ZEXT32((uint32_t)DST % (uint32_t)IMM); NEXT();
L_UREM32R:
	if (!(uint32_t)SRC)
		FAIL(SBPF_E_DIVIDE_BY_ZERO);
	DST = ZEXT32((uint32_t)DST % (uint32_t)SRC);
	NEXT();
L_UREM64I: DST %= (uint32_t)IMM; NEXT();
L_UREM64R:
	if (!SRC)
		FAIL(SBPF_E_DIVIDE_BY_ZERO);
	DST %= SRC;
	NEXT();
L_SDIV32I:
L_SDIV32R:
L_SREM32I:
L_SREM32R: {
	bool is_imm = d->kind == SBPF_K_SDIV32I || d->kind == SBPF_K_SREM32I;
	int32_t b = is_imm ? (int32_t)d->imm : (int32_t)(uint32_t)SRC;
	int32_t a = (int32_t)(uint32_t)DST;
	if (!is_imm && b == 0)
		FAIL(SBPF_E_DIVIDE_BY_ZERO);
	if (a == INT32_MIN && b == -1)
		FAIL(SBPF_E_DIVIDE_OVERFLOW);
	bool rem = d->kind == SBPF_K_SREM32I || d->kind == SBPF_K_SREM32R;
	DST = ZEXT32((uint32_t)(rem ? a % b : a / b));
	NEXT();
}
L_SDIV64I:
L_SDIV64R:
L_SREM64I:
L_SREM64R: {
	bool is_imm = d->kind == SBPF_K_SDIV64I || d->kind == SBPF_K_SREM64I;
	int64_t b = is_imm ? d->imm : (int64_t)SRC;
	int64_t a = (int64_t)DST;
	if (!is_imm && b == 0)
		FAIL(SBPF_E_DIVIDE_BY_ZERO);
	if (a == INT64_MIN && b == -1)
		FAIL(SBPF_E_DIVIDE_OVERFLOW);
	bool rem = d->kind == SBPF_K_SREM64I || d->kind == SBPF_K_SREM64R;
	DST = (uint64_t)(rem ? a % b : a / b);
	NEXT();
}

L_JA: JUMP_IF(1);
L_JEQI: JUMP_IF(DST == IMM);
L_JEQR: JUMP_IF(DST == SRC);
L_JGTI: JUMP_IF(DST > IMM);
L_JGTR: JUMP_IF(DST > SRC);
L_JGEI: JUMP_IF(DST >= IMM);
L_JGER: JUMP_IF(DST >= SRC);
L_JLTI: JUMP_IF(DST < IMM);
L_JLTR: JUMP_IF(DST < SRC);
L_JLEI: JUMP_IF(DST <= IMM);
L_JLER: JUMP_IF(DST <= SRC);
L_JSETI: JUMP_IF(DST & IMM);
L_JSETR: JUMP_IF(DST & SRC);
L_JNEI: JUMP_IF(DST != IMM);
L_JNER: JUMP_IF(DST != SRC);
L_JSGTI: JUMP_IF((int64_t)DST > d->imm);
L_JSGTR: JUMP_IF((int64_t)DST > (int64_t)SRC);
L_JSGEI: JUMP_IF((int64_t)DST >= d->imm);
L_JSGER: JUMP_IF((int64_t)DST >= (int64_t)SRC);
L_JSLTI: JUMP_IF((int64_t)DST < d->imm);
L_JSLTR: JUMP_IF((int64_t)DST < (int64_t)SRC);
L_JSLEI: JUMP_IF((int64_t)DST <= d->imm);
L_JSLER: JUMP_IF((int64_t)DST <= (int64_t)SRC);
L_JEQ32I: JUMP_IF((uint32_t)DST == (uint32_t)IMM);
L_JEQ32R: JUMP_IF((uint32_t)DST == (uint32_t)SRC);
L_JGT32I: JUMP_IF((uint32_t)DST > (uint32_t)IMM);
L_JGT32R: JUMP_IF((uint32_t)DST > (uint32_t)SRC);
L_JGE32I: JUMP_IF((uint32_t)DST >= (uint32_t)IMM);
L_JGE32R: JUMP_IF((uint32_t)DST >= (uint32_t)SRC);
L_JLT32I: JUMP_IF((uint32_t)DST < (uint32_t)IMM);
L_JLT32R: JUMP_IF((uint32_t)DST < (uint32_t)SRC);
L_JLE32I: JUMP_IF((uint32_t)DST <= (uint32_t)IMM);
L_JLE32R: JUMP_IF((uint32_t)DST <= (uint32_t)SRC);
L_JSET32I: JUMP_IF((uint32_t)DST & (uint32_t)IMM);
L_JSET32R: JUMP_IF((uint32_t)DST & (uint32_t)SRC);
L_JNE32I: JUMP_IF((uint32_t)DST != (uint32_t)IMM);
L_JNE32R: JUMP_IF((uint32_t)DST != (uint32_t)SRC);
L_JSGT32I: JUMP_IF((int32_t)(uint32_t)DST > (int32_t)d->imm);
L_JSGT32R: JUMP_IF((int32_t)(uint32_t)DST > (int32_t)(uint32_t)SRC);
L_JSGE32I: JUMP_IF((int32_t)(uint32_t)DST >= (int32_t)d->imm);
L_JSGE32R: JUMP_IF((int32_t)(uint32_t)DST >= (int32_t)(uint32_t)SRC);
L_JSLT32I: JUMP_IF((int32_t)(uint32_t)DST < (int32_t)d->imm);
L_JSLT32R: JUMP_IF((int32_t)(uint32_t)DST < (int32_t)(uint32_t)SRC);
L_JSLE32I: JUMP_IF((int32_t)(uint32_t)DST <= (int32_t)d->imm);
L_JSLE32R: JUMP_IF((int32_t)(uint32_t)DST <= (int32_t)(uint32_t)SRC);

L_CALL:
	switch (d->pad) {
	case SBPF_CALL_SYSCALL: {
		const struct sbpf_syscall *sc = &prog->syscalls->v[d->imm];
		FLUSH();
#if INTERP_HOOKED
		if (vm->hooks.on_syscall_enter)
			vm->hooks.on_syscall_enter(vm->hooks.ctx, pc, sc);
#endif
		memcpy(vm->reg, r, sizeof(r));
		vm->pc = pc;
		uint64_t ret = 0;
		int rc = sbpf_interp_syscall(vm, sc, cu, &r[1], &ret);
		vm->syscall_cu += cu - vm->remaining;
#if INTERP_HOOKED
		if (vm->hooks.on_syscall_exit)
			vm->hooks.on_syscall_exit(vm->hooks.ctx, sc, cu - vm->remaining);
#endif
		cu = vm->remaining;
		if (rc || vm->failed) {
			if (res->error == SBPF_OK)
				sbpf_vm_syscall_error(vm, "SyscallFailed", "%s failed", sc->name);
			goto fault;
		}
		r[0] = ret;
		NEXT();
	}
	case SBPF_CALL_INTERNAL:
		PUSH_FRAME();
		FLUSH();
#if INTERP_HOOKED
		if (vm->hooks.on_call)
			vm->hooks.on_call(vm->hooks.ctx, pc, (uint64_t)d->imm, depth);
#endif
		pc = (uint64_t)d->imm;
		DISPATCH();
	case SBPF_CALL_OUTSIDE:
		PUSH_FRAME();
		FAIL(SBPF_E_CALL_OUTSIDE_TEXT_SEGMENT);
	default:
		FAIL(SBPF_E_UNSUPPORTED_INSTRUCTION);
	}
L_CALLX: {
	unsigned x = sbpf_callx_uses_src(ver) ? d->src
		     : sbpf_callx_uses_dst(ver) ? d->dst : (unsigned)(d->imm & 15);
	uint64_t target = (r[x] - prog->text_vaddr) / SBPF_INSN_SIZE;
	PUSH_FRAME();
	if (target >= prog->ninsns)
		FAIL(SBPF_E_CALL_OUTSIDE_TEXT_SEGMENT);
	FLUSH();
#if INTERP_HOOKED
	if (vm->hooks.on_call)
		vm->hooks.on_call(vm->hooks.ctx, pc, target, depth);
#endif
	pc = target;
	DISPATCH();
}
L_EXIT:
	if (depth == 0) {
		res->r0 = r[0];
		goto done;
	}
	depth--;
	{
		const struct sbpf_frame *f = &vm->frames[depth];
		memcpy(&r[6], f->saved, sizeof(f->saved));
		r[10] = f->fp;
		FLUSH();
#if INTERP_HOOKED
		if (vm->hooks.on_return)
			vm->hooks.on_return(vm->hooks.ctx, pc, depth);
#endif
		pc = f->ret_pc;
	}
	DISPATCH();

cu_exhausted:
	err = SBPF_E_EXCEEDED_MAX_INSTRUCTIONS;
fail:
	res->error = err;
fault:
	res->pc = pc;
done:
	FLUSH();
	sbpf_interp_end(vm, pc, cu);
	memcpy(vm->reg, r, sizeof(r));
	vm->pc = pc;
	vm->depth = depth;
	return 0;
}

#undef DST
#undef SRC
#undef IMM
#undef TRACE
#undef FLUSH
#undef DISPATCH
#undef NEXT
#undef JUMP_IF
#undef FAIL
#undef LOAD
#undef STORE
#undef SEXT32
#undef ZEXT32
#undef PUSH_FRAME
