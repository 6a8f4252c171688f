/* `perfz export --inline` (tests/it/export_inline.rs): libc's qsort
 * (msort_with_tmp.part.0, a clone whose DWARF name is msort_with_tmp) and
 * work(), into which round4() and mix() are inlined; built with and
 * without -gsplit-dwarf. Runs for argv[1] s of CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline __attribute__((always_inline)) unsigned mix(unsigned s, unsigned x) {
    return (s ^ x) * 2654435761u + (s >> 7);
}

static inline __attribute__((always_inline)) unsigned round4(unsigned s, unsigned x) {
    s = mix(s, x);
    s = mix(s, x + 1);
    return mix(s, x + 2);
}

__attribute__((noinline)) unsigned work(unsigned seed) {
    unsigned s = seed;
    for (unsigned i = 0; i < 4000; i++)
        s = round4(s, i);
    return s;
}

static int cmp(const void *a, const void *b) {
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    double secs = argc > 1 ? atof(argv[1]) : 0.5;
    unsigned acc = 0, v[4096];
    while ((double)clock() / CLOCKS_PER_SEC < secs) {
        acc += work(acc);
        for (int i = 0; i < 4096; i++)
            v[i] = acc * 2654435761u + i * 40503u;
        qsort(v, 4096, sizeof v[0], cmp);
        acc += v[17];
    }
    printf("%u\n", acc);
    return 0;
}
