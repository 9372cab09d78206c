/*
 * Where Ruby's VM keeps what a reader of another process needs for a thread's Ruby frames:
 * the execution context, its control frames, instruction sequences and their line tables,
 * method entries of C functions, strings and arrays. A table of ours per version
 * (layout.c), each fact from that version's own headers; tests/ruby/layout.test.sh checks
 * the table against the headers Ruby installs for its JIT (rb_mjit_min_header-VERSION.h,
 * package rubyX.Y-dev), compiled with offsetof. Versions without a table are refused with a
 * message, never read with another's.
 */
#ifndef TALLY_RUBY_LAYOUT_H
#define TALLY_RUBY_LAYOUT_H

#include <stdint.h>

/* Every offset is in bytes from the start of its structure; fields read are 8 bytes
 * (pointers, VALUE, ID, long) but where named otherwise. */
struct rb_layout {
	const char *version; /* "3.1": the versions it serves share it */
	/* rb_execution_context_t */
	uint16_t ec_vm_stack, ec_vm_stack_size, ec_cfp;
	/* rb_control_frame_t: its size, pc, sp, iseq, ep */
	uint16_t cfp_size, cfp_pc, cfp_sp, cfp_iseq, cfp_ep;
	/* rb_iseq_t: body */
	uint16_t iseq_body;
	/* rb_iseq_constant_body: iseq_size (4 bytes), iseq_encoded, location.{pathobj, label,
	 * first_lineno}, insns_info.{body, positions, size (4 bytes), succ_index_table} */
	uint16_t body_iseq_size, body_iseq_encoded, body_pathobj, body_label, body_first_lineno;
	uint16_t body_insns_body, body_insns_positions, body_insns_size, body_insns_succ;
	/* struct iseq_insn_info_entry: its size, line_no (4 bytes) */
	uint16_t insn_info_size, insn_info_line;
	/* rb_method_entry_t: def; rb_method_definition_t: body.cfunc.func, original_id, and
	 * type (the low bits of its first word) */
	uint16_t me_def, def_cfunc_func, def_original_id;
	uint32_t def_type_mask, def_type_cfunc;
	/* The environment's slots, from ep, in VALUEs: flags, method entry or cref */
	int16_t ep_flags, ep_me_cref;
	uint32_t frame_magic_mask, frame_magic_cfunc, frame_flag_finish;
	/* RBasic flags: type mask, T_STRING, T_ARRAY, T_IMEMO; imemo type shift and mask,
	 * imemo_iseq, imemo_ment */
	uint32_t type_mask, t_string, t_array, t_imemo;
	uint32_t imemo_shift, imemo_mask, imemo_iseq, imemo_ment;
	/* RString: heap flag (RSTRING_NOEMBED), embedded length's shift and mask, heap len and
	 * ptr, embedded bytes */
	uint64_t str_noembed;
	uint32_t str_embed_len_shift, str_embed_len_mask;
	uint16_t str_heap_len, str_heap_ptr, str_embed;
	/* RArray: embedded flag, embedded length's shift and mask, heap len and ptr, embedded
	 * elements */
	uint64_t ary_embed_flag;
	uint32_t ary_embed_len_shift, ary_embed_len_mask;
	uint16_t ary_heap_len, ary_heap_ptr, ary_embed;
	/* The symbol table (rb_symbols_t global_symbols): last_id (4 bytes), ids; an ID's
	 * serial (ids above tLAST_OP_ID are shifted by ID_SCOPE_SHIFT), entries per array of
	 * ids (ID_ENTRY_UNIT) and VALUEs per entry (ID_ENTRY_SIZE, the string first) */
	uint16_t symbols_last_id, symbols_ids;
	uint64_t last_op_id;
	uint32_t id_scope_shift, id_entry_unit, id_entry_size;
};

/* The table for a Ruby version string ("3.1.2": major.minor decide), NULL for none. */
const struct rb_layout *rb_layout_for(const char *version);

/* The versions the tables serve, for messages: "3.1". */
const char *rb_layout_versions(void);

#endif
