/* The first translation unit using bump() (see inline.h). */
#include "inline.h"

int other(int y)
{
	return bump(y);
}
