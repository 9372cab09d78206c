/*
 * Binary search over sorted arrays of structs, by one member: the loop every index in
 * tally needs, written once. GNU statement expressions keep it typed and inlined.
 */
#ifndef TALLY_BASE_SEARCH_H
#define TALLY_BASE_SEARCH_H

#include <stddef.h>

/* Index of the first of a[0..n) whose MEMBER (an access path such as .lo or ->end) is
 * greater than key; n when none is. a must be sorted by MEMBER. */
#define UPPER_BOUND(a, n, MEMBER, key)                              \
	({                                                          \
		size_t lo_ = 0, hi_ = (n);                          \
		while (lo_ < hi_) {                                 \
			size_t mid_ = lo_ + (hi_ - lo_) / 2;        \
			if ((a)[mid_] MEMBER <= (key))              \
				lo_ = mid_ + 1;                     \
			else                                        \
				hi_ = mid_;                         \
		}                                                   \
		lo_;                                                \
	})

/* Index of the first of a[0..n) whose MEMBER is not less than key. */
#define LOWER_BOUND(a, n, MEMBER, key)                              \
	({                                                          \
		size_t lo_ = 0, hi_ = (n);                          \
		while (lo_ < hi_) {                                 \
			size_t mid_ = lo_ + (hi_ - lo_) / 2;        \
			if ((a)[mid_] MEMBER < (key))               \
				lo_ = mid_ + 1;                     \
			else                                        \
				hi_ = mid_;                         \
		}                                                   \
		lo_;                                                \
	})

#endif
