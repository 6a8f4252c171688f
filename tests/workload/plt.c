/* The export tests' PLT workload: a loop of calls to a cheap libc function
 * through the PLT, so that samples land in its entry.
 * Build: cc -O1 -g -fno-omit-frame-pointer -fno-builtin [-Wl,-z,now] -o plt plt.c
 * Run:   ./plt SECONDS (of its own CPU time, however busy the machine) */
#include <stdlib.h>
#include <time.h>

volatile size_t perfz_sink;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void perfz_plt_calls(void) {
    for (int i = 0; i < 100000; i++)
        perfz_sink += (size_t)abs(i - 5) + (size_t)labs(i - 7);
}

int main(int argc, char **argv) {
    double end = now() + (argc > 1 ? atof(argv[1]) : 1.0);
    while (now() < end)
        perfz_plt_calls();
    return 0;
}
