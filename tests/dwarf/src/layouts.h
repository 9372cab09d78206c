/* Types whose layouts tests/dwarf/types.test.sh reads with tally and with gdb: nesting,
 * anonymous members, bit-fields, typedef and qualifier chains, arrays, a struct only
 * declared here (defined in layouts_other.c). Both units include it, so that dwz has
 * types to share. */
#include <stdint.h>

struct defined_elsewhere;
typedef struct defined_elsewhere elsewhere_t;

struct inner {
	char c;
	int64_t wide;
	struct {
		short s1;
		union {
			int u_int;
			double u_double;
		};
	};
};

typedef struct inner inner_t;
typedef const volatile inner_t cv_inner_t;

struct outer {
	char tag;
	cv_inner_t nested;
	struct inner array[3][2];
	unsigned int bits_a : 3;
	unsigned int bits_b : 9;
	signed char bits_c : 4;
	unsigned long long bits_wide : 40;
	elsewhere_t *elsewhere;
	union {
		struct {
			uint8_t lo, hi;
		};
		uint16_t both;
	} u;
	struct {
		unsigned interned : 2, kind : 3, compact : 1, ascii : 1, ready : 1;
	} state;
	void (*fn)(void);
	_Atomic int atomic_int;
	char flex[];
};

typedef struct outer outer_t;
union top_union {
	char c[5];
	int64_t i;
};

