/*
 * Stacks seen before during a replay: samples repeat a few stacks many times over (68
 * distinct ones among 5,000 samples of a loop 13 calls deep), and naming a stack's frames
 * costs far more than recognising it. A stack is keyed by what its names depend on: how it
 * ended, each frame's module, pc and module address, the sample's callchain (kernel
 * frames), and its process when a frame is in memory no file backs (JIT code); it keeps the named frames, which stay where they are until the memo is freed.
 */
#ifndef TALLY_REPLAY_STACK_MEMO_H
#define TALLY_REPLAY_STACK_MEMO_H

#include <stddef.h>
#include <stdint.h>

#include "replay/frames.h"

struct replay_stack_memo;

struct replay_stack_memo *replay_stack_memo_new(void); /* NULL when out of memory */
void replay_stack_memo_free(struct replay_stack_memo *m);

/* The named frames of a stack like st, kept earlier: *frames, *n and the stack's id
 * (1, 2, ... in the order stacks were kept); 0 when st is new. */
uint32_t replay_stack_memo_find(struct replay_stack_memo *m, const struct replay_stack *st,
			 const struct replay_sym_frame **frames, size_t *n);
/* Keeps a copy of st's n named frames when a stack like st came before (stacks that come
 * once are not kept): their id, *kept pointing at the copy; 0 when st is new, or the memo
 * is full (bounded memory) or out of memory. */
uint32_t replay_stack_memo_keep(struct replay_stack_memo *m, const struct replay_stack *st,
			 const struct replay_sym_frame *frames, size_t n,
			 const struct replay_sym_frame **kept);

#endif
