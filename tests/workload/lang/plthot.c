/* The language matrix's PLT-heavy program (tests/it/languages.rs): main
 * calls libplthot.so's tiny function (plthot_lib.c) through its PLT in a
 * loop until the process has used SECONDS of CPU time (however busy the
 * machine), so many samples land in the stub `perfz_tiny@plt`. Linked by
 * LLD, which writes no CFI for .plt.
 * Build: clang -O2 -g -fomit-frame-pointer -fuse-ld=lld -o plthot plthot.c
 *        -L. -lplthot -Wl,-rpath,'$ORIGIN'   Run: ./plthot SECONDS */
#include <stdlib.h>
#include <time.h>

int perfz_tiny(int x);

volatile int perfz_sink;

static double cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    while (cpu() < seconds) {
        int s = 0;
        for (int i = 0; i < 100000; i++)
            s += perfz_tiny(i);
        perfz_sink += s;
    }
    return 0;
}
