/*
 * Ruby's layouts, one table per minor version (layout.h). 3.1's facts come from Ruby
 * 3.1.2's vm_core.h, iseq.h, method.h, internal/imemo.h, internal/symbol.h (symbol.c's
 * rb_symbols_t and ID_ENTRY_*), include/ruby/internal/core/rstring.h and rarray.h, as the
 * package ruby3.1-dev carries them in rb_mjit_min_header-3.1.2.h; built without USE_RVARGC
 * (3.1's default and Debian's), with USE_ISEQ_NODE_ID (3.1's). Only 3.1 is served: 3.0
 * lays out the iseq body differently (no node_id in the location), 3.2 changed the control
 * frame (no __bp__) and strings (RVARGC).
 */
#include "ruby/layout.h"

#include <string.h>

static const struct rb_layout ruby31 = {
	.version = "3.1",
	/* vm_core.h: struct rb_execution_context_struct starts vm_stack, vm_stack_size, cfp */
	.ec_vm_stack = 0, .ec_vm_stack_size = 8, .ec_cfp = 16,
	/* vm_core.h: rb_control_frame_t is pc, sp, iseq, self, ep, block_code, __bp__,
	 * jit_return: 8 words */
	.cfp_size = 64, .cfp_pc = 0, .cfp_sp = 8, .cfp_iseq = 16, .cfp_ep = 32,
	/* vm_core.h: struct rb_iseq_struct is flags, wrapper, body */
	.iseq_body = 16,
	/* vm_core.h: rb_iseq_constant_body: type, iseq_size, iseq_encoded, param (48 bytes),
	 * location (pathobj, base_label, label, first_lineno, node_id, code_location: 56
	 * bytes), insns_info (body, positions, size, succ_index_table) */
	.body_iseq_size = 4, .body_iseq_encoded = 8,
	.body_pathobj = 64, .body_label = 80, .body_first_lineno = 88,
	.body_insns_body = 120, .body_insns_positions = 128, .body_insns_size = 136,
	.body_insns_succ = 144,
	/* iseq.h: struct iseq_insn_info_entry is line_no, node_id, events (ints) */
	.insn_info_size = 12, .insn_info_line = 0,
	/* method.h: rb_method_entry_t is flags, defined_class, def, called_id, owner;
	 * rb_method_definition_t has type:4 first, body at 8 (method.h asserts it),
	 * body.cfunc.func first, original_id after the 24-byte union; VM_METHOD_TYPE_CFUNC 1 */
	.me_def = 16, .def_cfunc_func = 8, .def_original_id = 32,
	.def_type_mask = 0xf, .def_type_cfunc = 1,
	/* vm_core.h: VM_ENV_DATA_INDEX_FLAGS 0, VM_ENV_DATA_INDEX_ME_CREF -2; the frame magic
	 * (VM_FRAME_MAGIC_MASK, VM_FRAME_MAGIC_CFUNC) and VM_FRAME_FLAG_FINISH */
	.ep_flags = 0, .ep_me_cref = -2,
	.frame_magic_mask = 0x7fff0001, .frame_magic_cfunc = 0x55550001,
	.frame_flag_finish = 0x20,
	/* include/ruby/internal/value_type.h: RUBY_T_MASK, T_STRING, T_ARRAY, T_IMEMO;
	 * internal/imemo.h: the type at FL_USHIFT (12), imemo_mask 0x0f, imemo_ment 6,
	 * imemo_iseq 7 */
	.type_mask = 0x1f, .t_string = 0x05, .t_array = 0x07, .t_imemo = 0x1a,
	.imemo_shift = 12, .imemo_mask = 0x0f, .imemo_iseq = 7, .imemo_ment = 6,
	/* rstring.h: RSTRING_NOEMBED FL_USER1, the embedded length in FL_USER2..6 from
	 * FL_USHIFT + 2; heap len, ptr; embedded bytes after RBasic */
	.str_noembed = 1u << 13, .str_embed_len_shift = 14, .str_embed_len_mask = 0x1f,
	.str_heap_len = 16, .str_heap_ptr = 24, .str_embed = 16,
	/* rarray.h: RARRAY_EMBED_FLAG FL_USER1, the embedded length in FL_USER3..4 from
	 * FL_USHIFT + 3; heap len, aux, ptr; embedded elements after RBasic */
	.ary_embed_flag = 1u << 13, .ary_embed_len_shift = 15, .ary_embed_len_mask = 3,
	.ary_heap_len = 16, .ary_heap_ptr = 32, .ary_embed = 16,
	/* symbol.c: rb_symbols_t is last_id (rb_id_serial_t, 4 bytes), str_sym, ids;
	 * rb_id_to_serial shifts ids above tLAST_OP_ID (0xa9) by ID_SCOPE_SHIFT (4);
	 * ID_ENTRY_UNIT 512, ID_ENTRY_SIZE 2 (the string, then the symbol) */
	.symbols_last_id = 0, .symbols_ids = 16,
	.last_op_id = 0xa9, .id_scope_shift = 4, .id_entry_unit = 512, .id_entry_size = 2,
};

const struct rb_layout *rb_layout_for(const char *version)
{
	if (!strncmp(version, "3.1.", 4) || !strcmp(version, "3.1"))
		return &ruby31;
	return NULL;
}

const char *rb_layout_versions(void)
{
	return "3.1";
}
