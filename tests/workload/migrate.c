// The rounds test's workload: started on one CPU (its exec's COMM and
// MMAPs go to that CPU's ring), it moves itself to the last CPU and spins
// there until it has used SECONDS of its own CPU time (however busy that
// CPU is), so the first CPU's ring keeps only those few records.
// Run: taskset -c 0 migrate SECONDS
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static volatile unsigned long sink;

static void spin(double until) {
    while (now() < until)
        for (int i = 0; i < 10000; i++) sink += i;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 0.5;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpus - 1, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) return 2;
    spin(now() + seconds);
    return 0;
}
