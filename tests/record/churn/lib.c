/* The libraries tests/record/churn/churn.c loads in turn: built twice, NAME work_a or
 * work_b around INNER inner_a or inner_b, so that a sample named by the wrong one of two
 * libraries mapped at the same place shows. With FRAME (library b) the functions lie
 * elsewhere and keep a stack frame, so that a walk by the other library's CFI goes wrong. */
#ifdef FRAME
__attribute__((noinline)) long pad(long n) { long s = n; for (int i = 0; i < 64; i++) s = s * 31 + i; return s; }
__attribute__((noinline)) static long INNER(long n) { volatile long buf[64]; long s = 0; for (long i = 0; i < n; i++) { buf[i & 63] = i; s += buf[(i * 7) & 63] * NAMEK; } return s; }
#else
__attribute__((noinline)) static long INNER(long n) { long s = 0; for (long i = 0; i < n; i++) { s += i * NAMEK; __asm__ volatile("" : "+r"(s)); } return s; }
#endif
long NAME(long n) { return INNER(n) + 1; }
