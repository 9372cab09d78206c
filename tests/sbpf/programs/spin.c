/* Loops for as long as input[0] says (in millions of rounds): runs into the CU budget. */
#include "solana.h"

u64 entrypoint(const u8 *input)
{
	volatile u64 x = 0;
	for (u64 i = 0; i < (u64)input[0] * 1000000; i++)
		x += i;
	return x;
}
