/* The native-sampling workload of the record tests: main -> f1 -> ... -> f12, no inlining,
 * no tail calls, f12 looping malloc/free. usage: deep [ROUNDS] (default 300, ~0.3 s). */
#include <stdio.h>
#include <stdlib.h>
static void *keep[4096];
__attribute__((noinline)) static long f12(int n) { long c = 0; for (int i = 0; i < n; i++) { int k = i & 4095; free(keep[k]); keep[k] = malloc(64); c += (long)keep[k]; } return c; }
#define F(a, b, k) __attribute__((noinline)) static long a(int n) { long r = b(n) + k; __asm__ volatile("" : "+r"(r)); return r; }
F(f11, f12, 1) F(f10, f11, 2) F(f9, f10, 3) F(f8, f9, 4) F(f7, f8, 5) F(f6, f7, 6) F(f5, f6, 7) F(f4, f5, 8) F(f3, f4, 9) F(f2, f3, 10) F(f1, f2, 11)
int main(int argc, char **argv) { int n = argc > 1 ? atoi(argv[1]) : 300; long s = 0; for (int i = 0; i < n; i++) s += f1(200000); printf("%ld\n", s); return 0; }
