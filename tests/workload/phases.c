/* A workload in two phases with distinct functions: phase_one for the first
 * half of SECONDS of its own CPU time, then phase_two (the flight recorder's
 * tests look for the second and not the first). CPU time, not wall time: on
 * a busy machine (tests in parallel) each phase still gets its samples.
 * Build: cc -O1 -g -fno-omit-frame-pointer -fno-inline -o phases phases.c
 * Run:   ./phases SECONDS */
#include <stdlib.h>
#include <time.h>

volatile unsigned long perfz_sink;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long perfz_phase_one(unsigned long n) {
    for (int i = 0; i < 4000; i++)
        n = n * 6364136223846793005UL + 1;
    return n;
}

__attribute__((noinline)) unsigned long perfz_phase_two(unsigned long n) {
    for (int i = 0; i < 4000; i++)
        n = n * 2862933555777941757UL + 3037000493UL;
    return n;
}

int main(int argc, char **argv) {
    double secs = argc > 1 ? atof(argv[1]) : 2.0;
    double start = now(), mid = start + secs / 2, end = start + secs;
    unsigned long i = 0;
    while (now() < mid)
        perfz_sink += perfz_phase_one(i++);
    while (now() < end)
        perfz_sink += perfz_phase_two(i++);
    return 0;
}
