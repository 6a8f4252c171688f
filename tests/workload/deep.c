/* The recorder tests' workload: CPU-bound, with deep and distinct call stacks
 * whose function names the tests look for in `perf report`.
 * Build: cc -O1 -g -fno-omit-frame-pointer -fno-inline -o deep deep.c
 * Run:   ./deep SECONDS [THREADS]   (THREADS busy threads, default 1, each
 *        until it has used SECONDS of its own CPU time, however busy the
 *        machine: a test gets the samples it asks for). It also ends when
 *        its parent does (a recorder killed with SIGKILL leaves no workload
 *        burning CPU under the rest of the tests). */
#include <pthread.h>
#include <unistd.h>
#include <stdlib.h>
#include <time.h>

volatile unsigned long perfz_sink;

__attribute__((noinline)) unsigned long perfz_workload_leaf(unsigned long n) {
    unsigned long x = n;
    for (int i = 0; i < 4000; i++)
        x = x * 6364136223846793005UL + 1442695040888963407UL;
    return x;
}

__attribute__((noinline)) unsigned long perfz_workload_recurse(int depth, unsigned long n) {
    if (depth == 0)
        return perfz_workload_leaf(n);
    return perfz_workload_recurse(depth - 1, n + depth) + 1;
}

__attribute__((noinline)) unsigned long perfz_workload_alpha(unsigned long n) {
    return perfz_workload_recurse(24, n);
}

__attribute__((noinline)) unsigned long perfz_workload_beta(unsigned long n) {
    return perfz_workload_recurse(12, n) ^ perfz_workload_recurse(6, n);
}

static double cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double secs;
static pid_t parent;

static void *perfz_workload_loop(void *arg) {
    unsigned long i = (unsigned long)arg;
    while (cpu() < secs && getppid() == parent) {
        perfz_sink += perfz_workload_alpha(i) + perfz_workload_beta(i);
        i++;
    }
    return NULL;
}

int main(int argc, char **argv) {
    secs = argc > 1 ? atof(argv[1]) : 1.0;
    parent = getppid();
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    static pthread_t t[1024]; /* static: main's frame stays small (dwarf tests) */
    int n = 0;
    for (; n < threads - 1 && n < 1024; n++)
        if (pthread_create(&t[n], NULL, perfz_workload_loop, (void *)(unsigned long)n))
            break;
    perfz_workload_loop(0);
    for (int k = 0; k < n; k++)
        pthread_join(t[k], NULL);
    return 0;
}
