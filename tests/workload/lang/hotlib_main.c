/* The language matrix's caller of a shared library (tests/it/layouts.rs):
 * main calls into libhotlib.so (hotlib.c), where the time goes, until the
 * process has used SECONDS of CPU time (however busy the machine).
 * Build: cc -O2 -g -fomit-frame-pointer -o hotlib hotlib_main.c
 *        -L. -lhotlib -Wl,-rpath,'$ORIGIN'   Run: ./hotlib SECONDS */
#include <stdlib.h>
#include <time.h>

double perfz_lib_entry(int n);

volatile double perfz_sink;

static double cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    for (int i = 0; cpu() < seconds; i++)
        perfz_sink += perfz_lib_entry(i & 7);
    return 0;
}
