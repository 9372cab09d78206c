/* The second translation unit using bump() (see inline.h). usage: inline N */
#include <cstdlib>

#include "inline.h"

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1, s = 0;
	for (int i = 0; i < n; i++)
		s += bump(i) + other(i);
	return s == 42;
}
