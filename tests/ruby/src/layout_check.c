/*
 * Checks tally's Ruby 3.1 table (src/ruby/layout.c) against the headers Ruby 3.1 installs
 * for its JIT (rb_mjit_min_header-3.1.2.h, package ruby3.1-dev: vm_core.h, iseq.h,
 * method.h, imemo and the public headers as the interpreter was built), compiled here:
 * every offset and every constant the header keeps (it keeps enums and drops macros: the
 * environment's slot indexes and imemo_mask are not checked here), one line per mismatch,
 * exit 1 when there is any. RB_VERSION is the header's version.
 */
#include RB_MJIT_HEADER

#include <stddef.h>
#include <stdio.h>

#include "ruby/layout.h"

static int bad;

static void same(const char *what, long ours, long theirs)
{
	if (ours != theirs) {
		printf("%s: tally %ld, Ruby %ld\n", what, ours, theirs);
		bad = 1;
	}
}

#define OFF(field, type, member) same(#field, l->field, (long)offsetof(type, member))

int main(void)
{
	const struct rb_layout *l = rb_layout_for(RB_VERSION);
	if (!l) {
		printf("no table for %s\n", RB_VERSION);
		return 1;
	}
	OFF(ec_vm_stack, rb_execution_context_t, vm_stack);
	OFF(ec_vm_stack_size, rb_execution_context_t, vm_stack_size);
	OFF(ec_cfp, rb_execution_context_t, cfp);
	same("cfp_size", l->cfp_size, sizeof(rb_control_frame_t));
	OFF(cfp_pc, rb_control_frame_t, pc);
	OFF(cfp_sp, rb_control_frame_t, sp);
	OFF(cfp_iseq, rb_control_frame_t, iseq);
	OFF(cfp_ep, rb_control_frame_t, ep);
	OFF(iseq_body, rb_iseq_t, body);
	OFF(body_iseq_size, struct rb_iseq_constant_body, iseq_size);
	OFF(body_iseq_encoded, struct rb_iseq_constant_body, iseq_encoded);
	OFF(body_pathobj, struct rb_iseq_constant_body, location.pathobj);
	OFF(body_label, struct rb_iseq_constant_body, location.label);
	OFF(body_first_lineno, struct rb_iseq_constant_body, location.first_lineno);
	OFF(body_insns_body, struct rb_iseq_constant_body, insns_info.body);
	OFF(body_insns_positions, struct rb_iseq_constant_body, insns_info.positions);
	OFF(body_insns_size, struct rb_iseq_constant_body, insns_info.size);
	OFF(body_insns_succ, struct rb_iseq_constant_body, insns_info.succ_index_table);
	same("insn_info_size", l->insn_info_size, sizeof(struct iseq_insn_info_entry));
	OFF(insn_info_line, struct iseq_insn_info_entry, line_no);
	OFF(me_def, rb_method_entry_t, def);
	OFF(def_cfunc_func, rb_method_definition_t, body.cfunc.func);
	OFF(def_original_id, rb_method_definition_t, original_id);
	same("def_type_cfunc", l->def_type_cfunc, VM_METHOD_TYPE_CFUNC);
	same("frame_magic_mask", l->frame_magic_mask, VM_FRAME_MAGIC_MASK);
	same("frame_magic_cfunc", l->frame_magic_cfunc, VM_FRAME_MAGIC_CFUNC);
	same("frame_flag_finish", l->frame_flag_finish, VM_FRAME_FLAG_FINISH);
	same("type_mask", l->type_mask, RUBY_T_MASK);
	same("t_string", l->t_string, RUBY_T_STRING);
	same("t_array", l->t_array, RUBY_T_ARRAY);
	same("t_imemo", l->t_imemo, RUBY_T_IMEMO);
	same("imemo_shift", l->imemo_shift, RUBY_FL_USHIFT);
	same("imemo_iseq", l->imemo_iseq, imemo_iseq);
	same("imemo_ment", l->imemo_ment, imemo_ment);
	same("str_noembed", (long)l->str_noembed, RSTRING_NOEMBED);
	same("str_embed_len_shift", l->str_embed_len_shift, RSTRING_EMBED_LEN_SHIFT);
	same("str_embed_len_mask", l->str_embed_len_mask,
	     RSTRING_EMBED_LEN_MASK >> RSTRING_EMBED_LEN_SHIFT);
	OFF(str_heap_len, struct RString, as.heap.len);
	OFF(str_heap_ptr, struct RString, as.heap.ptr);
	OFF(str_embed, struct RString, as.embed.ary);
	same("ary_embed_flag", (long)l->ary_embed_flag, RARRAY_EMBED_FLAG);
	same("ary_embed_len_shift", l->ary_embed_len_shift, RARRAY_EMBED_LEN_SHIFT);
	same("ary_embed_len_mask", l->ary_embed_len_mask,
	     RARRAY_EMBED_LEN_MASK >> RARRAY_EMBED_LEN_SHIFT);
	OFF(ary_heap_len, struct RArray, as.heap.len);
	OFF(ary_heap_ptr, struct RArray, as.heap.ptr);
	OFF(ary_embed, struct RArray, as.ary);
	same("last_op_id", (long)l->last_op_id, tLAST_OP_ID);
	same("id_scope_shift", l->id_scope_shift, RUBY_ID_SCOPE_SHIFT);
	return bad;
}
