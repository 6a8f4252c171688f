/* The language matrix's multi-threaded C program: THREADS threads, each
 * busy in its own call chain until it has used SECONDS of its own CPU time
 * (however busy the machine).
 * Build: cc -O2 -g -pthread -o threads threads.c   Run: ./threads SECONDS */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define THREADS 3

static double seconds;
volatile double perfz_sink;

static double thread_cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static double perfz_thread_leaf(double x) {
    for (int i = 0; i < 20000; i++)
        x = x * 1.0000001 + 1.0 / (x + 3.0);
    return x;
}

__attribute__((noinline)) static double perfz_thread_work(int id) {
    return perfz_thread_leaf(id + 1.0);
}

static void *perfz_thread_main(void *arg) {
    int id = (int)(long)arg;
    while (thread_cpu() < seconds)
        perfz_sink += perfz_thread_work(id);
    return NULL;
}

int main(int argc, char **argv) {
    seconds = argc > 1 ? atof(argv[1]) : 1.0;
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, perfz_thread_main, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    return 0;
}
