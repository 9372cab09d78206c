/*
 * The DWARF constants tally uses (DWARF 5 section 7, and the GNU extensions it names).
 * Ours rather than a system <dwarf.h>, so the build needs no DWARF library's headers.
 */
#ifndef TALLY_DWARF_CONSTS_H
#define TALLY_DWARF_CONSTS_H

enum {
	DW_TAG_array_type = 0x01,
	DW_TAG_class_type = 0x02,
	DW_TAG_enumeration_type = 0x04,
	DW_TAG_lexical_block = 0x0b,
	DW_TAG_structure_type = 0x13,
	DW_TAG_subroutine_type = 0x15,
	DW_TAG_union_type = 0x17,
	DW_TAG_compile_unit = 0x11,
	DW_TAG_inlined_subroutine = 0x1d,
	DW_TAG_subprogram = 0x2e,
	DW_TAG_partial_unit = 0x3c,
	DW_TAG_skeleton_unit = 0x4a,
	DW_TAG_call_site = 0x48,
	DW_TAG_GNU_call_site = 0x4109,
};

enum {
	DW_AT_sibling = 0x01,
	DW_AT_name = 0x03,
	DW_AT_stmt_list = 0x10,
	DW_AT_language = 0x13,
	DW_AT_low_pc = 0x11,
	DW_AT_high_pc = 0x12,
	DW_AT_comp_dir = 0x1b,
	DW_AT_inline = 0x20,
	DW_AT_abstract_origin = 0x31,
	DW_AT_frame_base = 0x40,
	DW_AT_specification = 0x47,
	DW_AT_ranges = 0x55,
	DW_AT_call_column = 0x57,
	DW_AT_call_file = 0x58,
	DW_AT_call_line = 0x59,
	DW_AT_linkage_name = 0x6e,
	DW_AT_str_offsets_base = 0x72,
	DW_AT_addr_base = 0x73,
	DW_AT_rnglists_base = 0x74,
	DW_AT_dwo_name = 0x76,
	DW_AT_loclists_base = 0x8c,
	DW_AT_MIPS_linkage_name = 0x2007,
	DW_AT_GNU_dwo_name = 0x2130,
	DW_AT_GNU_addr_base = 0x2133,
};

enum {
	DW_FORM_addr = 0x01,
	DW_FORM_block2 = 0x03,
	DW_FORM_block4 = 0x04,
	DW_FORM_data2 = 0x05,
	DW_FORM_data4 = 0x06,
	DW_FORM_data8 = 0x07,
	DW_FORM_string = 0x08,
	DW_FORM_block = 0x09,
	DW_FORM_block1 = 0x0a,
	DW_FORM_data1 = 0x0b,
	DW_FORM_flag = 0x0c,
	DW_FORM_sdata = 0x0d,
	DW_FORM_strp = 0x0e,
	DW_FORM_udata = 0x0f,
	DW_FORM_ref_addr = 0x10,
	DW_FORM_ref1 = 0x11,
	DW_FORM_ref2 = 0x12,
	DW_FORM_ref4 = 0x13,
	DW_FORM_ref8 = 0x14,
	DW_FORM_ref_udata = 0x15,
	DW_FORM_indirect = 0x16,
	DW_FORM_sec_offset = 0x17,
	DW_FORM_exprloc = 0x18,
	DW_FORM_flag_present = 0x19,
	DW_FORM_strx = 0x1a,
	DW_FORM_addrx = 0x1b,
	DW_FORM_ref_sup4 = 0x1c,
	DW_FORM_strp_sup = 0x1d,
	DW_FORM_data16 = 0x1e,
	DW_FORM_line_strp = 0x1f,
	DW_FORM_ref_sig8 = 0x20,
	DW_FORM_implicit_const = 0x21,
	DW_FORM_loclistx = 0x22,
	DW_FORM_rnglistx = 0x23,
	DW_FORM_ref_sup8 = 0x24,
	DW_FORM_strx1 = 0x25,
	DW_FORM_strx2 = 0x26,
	DW_FORM_strx3 = 0x27,
	DW_FORM_strx4 = 0x28,
	DW_FORM_addrx1 = 0x29,
	DW_FORM_addrx2 = 0x2a,
	DW_FORM_addrx3 = 0x2b,
	DW_FORM_addrx4 = 0x2c,
	DW_FORM_GNU_addr_index = 0x1f01,
	DW_FORM_GNU_str_index = 0x1f02,
	DW_FORM_GNU_ref_alt = 0x1f20,
	DW_FORM_GNU_strp_alt = 0x1f21,
};

enum {
	DW_UT_compile = 1,
	DW_UT_type = 2,
	DW_UT_partial = 3,
	DW_UT_skeleton = 4,
	DW_UT_split_compile = 5,
	DW_UT_split_type = 6,
};

enum {
	DW_LNS_copy = 1,
	DW_LNS_advance_pc,
	DW_LNS_advance_line,
	DW_LNS_set_file,
	DW_LNS_set_column,
	DW_LNS_negate_stmt,
	DW_LNS_set_basic_block,
	DW_LNS_const_add_pc,
	DW_LNS_fixed_advance_pc,
	DW_LNS_set_prologue_end,
	DW_LNS_set_epilogue_begin,
};

enum {
	DW_LNE_end_sequence = 1,
	DW_LNE_set_address = 2,
	DW_LNE_define_file = 3,
	DW_LNE_set_discriminator = 4,
};

enum { DW_LNCT_path = 1, DW_LNCT_directory_index = 2 };

enum { DW_OP_reg10 = 0x5a };

enum {
	DW_LANG_C_plus_plus = 0x04,
	DW_LANG_C_plus_plus_03 = 0x19,
	DW_LANG_C_plus_plus_11 = 0x1a,
	DW_LANG_C_plus_plus_14 = 0x21,
};

#endif
