/* A program whose parallelism is known, for latency profiles: THREADS
 * threads each run perfz_wide for SECONDS of their own CPU time, together;
 * then the main thread alone runs perfz_narrow for SECONDS of its own. CPU
 * time, not wall time: on a busy machine each phase still gets its samples.
 * Build: cc -O1 -g -fno-omit-frame-pointer -fno-inline -o parallel parallel.c
 * Run:   ./parallel SECONDS [THREADS] */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

volatile unsigned long perfz_sink;
static double secs = 0.25;

static double thread_cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long perfz_wide(unsigned long n) {
    for (int i = 0; i < 4000; i++)
        n = n * 6364136223846793005UL + 1;
    return n;
}

__attribute__((noinline)) unsigned long perfz_narrow(unsigned long n) {
    for (int i = 0; i < 4000; i++)
        n = n * 2862933555777941757UL + 3037000493UL;
    return n;
}

static void *wide(void *arg) {
    unsigned long i = (unsigned long)arg;
    double end = thread_cpu() + secs;
    while (thread_cpu() < end)
        perfz_sink += perfz_wide(i++);
    return NULL;
}

int main(int argc, char **argv) {
    secs = argc > 1 ? atof(argv[1]) : 0.25;
    int n = argc > 2 ? atoi(argv[2]) : 4;
    pthread_t t[64];
    if (n > 64)
        n = 64;
    for (int k = 0; k < n; k++)
        pthread_create(&t[k], NULL, wide, (void *)(unsigned long)k);
    for (int k = 0; k < n; k++)
        pthread_join(t[k], NULL);
    double end = thread_cpu() + secs;
    unsigned long i = 0;
    while (thread_cpu() < end)
        perfz_sink += perfz_narrow(i++);
    return 0;
}
