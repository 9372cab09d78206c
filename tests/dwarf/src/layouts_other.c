/* The definition that layouts.h only declares, in another unit than layouts.c. */
#include "layouts.h"

struct defined_elsewhere {
	long first;
	char second[7];
	int third;
};
struct defined_elsewhere keep_defined;
outer_t *keep_outer_here;
