/*
 * Stable sorting of arrays by a 64-bit key (an address, a time) with a radix sort: over
 * the bits in which the keys differ only, 12 at a time. For tables of thousands of entries
 * it costs a small fraction of qsort's comparisons through a function pointer.
 */
#ifndef TALLY_BASE_RADIX_H
#define TALLY_BASE_RADIX_H

#include <stddef.h>
#include <stdint.h>

/* Sorts the n elements of size bytes at base by the uint64_t each holds at byte key_at
 * (offsetof(type, member)), keeping the order of equal keys. 0, or -ENOMEM (base
 * untouched). */
int radix_sort(void *base, size_t n, size_t size, size_t key_at);

/* The bytes of scratch memory a sort of n elements works in (its keys). */
size_t radix_scratch_size(size_t n);
/* radix_sort in scratch memory the caller gives: radix_scratch_size(n) bytes aligned for a
 * uint64_t (or NULL: the sort allocates it). A table that is mapped anyway can hold it
 * past its end, where a mapping of its own would take a fresh huge page. */
int radix_sort_in(void *base, size_t n, size_t size, size_t key_at, void *scratch);

#endif
