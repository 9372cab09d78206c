/*
 * Ruby 3.1's succinct positions (lines.h). The table (iseq.c, succ_index_table_create)
 * is six 64-bit words for positions 0-53, each holding nine 7-bit ranks (the count of
 * positions set at or before each), then blocks of 512 positions from 54: a 32-bit rank, a
 * 64-bit word of small ranks, and eight 64-bit words with a bit per position. Fewer
 * immediate words are allocated for an iseq under 54 words (and no block).
 */
#include "ruby/lines.h"

#include <string.h>

#define IMMEDIATE 54 /* positions in the immediate part (IMMEDIATE_TABLE_SIZE) */
#define BLOCK 80     /* sizeof(struct succ_dict_block) */
#define BLOCK_BITS 16 /* where its bits start */
#define BLOCK_POSITIONS 512

static size_t immediate_words(uint32_t iseq_size)
{
	return (iseq_size < IMMEDIATE ? iseq_size + 8 : IMMEDIATE) / 9;
}

size_t rb_succ_table_size(uint32_t iseq_size)
{
	size_t blocks = iseq_size < IMMEDIATE ? 0
					      : ((size_t)iseq_size - IMMEDIATE + BLOCK_POSITIONS - 1) /
							BLOCK_POSITIONS;
	/* The blocks start after all six immediate words (the struct's), whatever was
	 * allocated of them: with blocks, all six were. */
	return blocks ? IMMEDIATE / 9 * 8 + blocks * BLOCK : immediate_words(iseq_size) * 8;
}

size_t rb_succ_positions(const uint8_t *tbl, size_t n, uint32_t *pos, size_t most)
{
	size_t got = 0;
	uint32_t prev = 0;
	for (size_t w = 0; w < IMMEDIATE / 9 && (w + 1) * 8 <= n; w++) {
		uint64_t v;
		memcpy(&v, tbl + w * 8, 8);
		for (unsigned i = 0; i < 9; i++) {
			uint32_t rank = (uint32_t)(v >> (i * 7) & 0x7f);
			if (rank > prev && got < most)
				pos[got++] = (uint32_t)(w * 9 + i);
			prev = rank > prev ? rank : prev;
		}
	}
	size_t start = IMMEDIATE / 9 * 8;
	for (size_t b = 0; start + (b + 1) * BLOCK <= n && got < most; b++) {
		for (unsigned j = 0; j < 8; j++) {
			uint64_t bits;
			memcpy(&bits, tbl + start + b * BLOCK + BLOCK_BITS + j * 8, 8);
			for (unsigned i = 0; i < 64 && got < most; i++)
				if (bits >> i & 1)
					pos[got++] = (uint32_t)(IMMEDIATE + b * BLOCK_POSITIONS +
								j * 64 + i);
		}
	}
	return got;
}

int32_t rb_line_at(const uint32_t *pos, const int32_t *line, size_t n, int32_t pc)
{
	if (pc < 0 || !n)
		return 0;
	uint32_t at = pc ? (uint32_t)pc - 1 : 0;
	size_t lo = 0, hi = n; /* the last entry whose position is at or before at */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (pos[mid] <= at)
			lo = mid;
		else
			hi = mid;
	}
	return pos[lo] <= at || lo == 0 ? line[lo] : 0;
}
