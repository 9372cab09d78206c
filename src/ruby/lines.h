/*
 * Ruby's line tables. An iseq's insns_info is an array of entries (a line each) and, for
 * each entry, the position (in VALUE words) of the first instruction it covers; Ruby 3.1
 * keeps those positions only as a succinct bit vector (iseq.c, VM_INSN_INFO_TABLE_IMPL 2:
 * struct succ_index_table) and frees the array. The recorder turns the vector back into
 * positions; replay finds a pc's line as Ruby's calc_pos and rb_iseq_line_no do.
 */
#ifndef TALLY_RUBY_LINES_H
#define TALLY_RUBY_LINES_H

#include <stddef.h>
#include <stdint.h>

/* The bytes of a succ_index_table an iseq of iseq_size words has: the immediate part's
 * words that were allocated, then 80-byte blocks of 512 positions. */
size_t rb_succ_table_size(uint32_t iseq_size);

/* The first most set positions of the vector in tbl (n bytes, as rb_succ_table_size
 * gives), ascending, into pos: how many. */
size_t rb_succ_positions(const uint8_t *tbl, size_t n, uint32_t *pos, size_t most);

/* The line of the instruction a frame's pc (in words from iseq_encoded; -1 unknown) is at,
 * from n (position, line) pairs sorted by position: 0 when unknown. Ruby takes the
 * instruction before the pc (the pc points past the current one), but for pc 0. */
int32_t rb_line_at(const uint32_t *pos, const int32_t *line, size_t n, int32_t pc);

#endif
