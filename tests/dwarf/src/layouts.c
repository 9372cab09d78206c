/* The first unit of the layouts program (see layouts.h). */
#include "layouts.h"

outer_t *volatile keep_outer;
union top_union keep_union;
elsewhere_t *keep_elsewhere;

int main(void)
{
	return keep_outer != 0;
}
