/*
 * Stacks seen before during a replay: samples repeat a few stacks many times over (68
 * distinct ones among 5,000 samples of a loop 13 calls deep), and naming a stack's frames
 * costs far more than recognising it. A stack is keyed by what its names depend on: how it
 * ended, each frame's module, pc and module address, and the sample's callchain (kernel
 * frames); it keeps the named frames, which stay where they are until the memo is freed.
 */
#ifndef TALLY_RECORD_STACK_MEMO_H
#define TALLY_RECORD_STACK_MEMO_H

#include <stddef.h>
#include <stdint.h>

#include "record/record.h"

struct stack_memo;

struct stack_memo *stack_memo_new(void); /* NULL when out of memory */
void stack_memo_free(struct stack_memo *m);

/* The named frames of a stack like st, kept earlier: *frames, *n and the stack's id
 * (1, 2, ... in the order stacks were kept); 0 when st is new. */
uint32_t stack_memo_find(struct stack_memo *m, const struct rec_stack *st,
			 const struct rec_sym_frame **frames, size_t *n);
/* Keeps a copy of st's n named frames; their id, or 0 when the memo is full (bounded
 * memory) or out of memory. *kept points at the copy. */
uint32_t stack_memo_keep(struct stack_memo *m, const struct rec_stack *st,
			 const struct rec_sym_frame *frames, size_t n,
			 const struct rec_sym_frame **kept);

#endif
