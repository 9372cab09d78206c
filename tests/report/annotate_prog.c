/*
 * The program tally annotate is tested on: a hot loop with an inlined helper. No headers,
 * so that it also compiles for other architectures without their C library.
 */
int printf(const char *fmt, ...);

static inline unsigned mix(unsigned h, unsigned c)
{
	return (h ^ c) * 16777619u;
}

__attribute__((noinline)) unsigned crunch(const char *s, int rounds)
{
	unsigned h = 2166136261u;
	for (int r = 0; r < rounds; r++)
		for (const char *p = s; *p; p++)
			h = mix(h, (unsigned char)*p);
	return h;
}

int main(int argc, char **argv)
{
	printf("%u\n", crunch(argc > 1 ? argv[1] : "tally", 1000));
	return 0;
}
