/* Calls through libc's own PLT: strdup calls strlen and memcpy, IFUNCs
 * that libc reaches through its PLT (IRELATIVE entries), so samples land
 * in libc's entries. Build: cc -O2 -g -fno-omit-frame-pointer -o plt_libc plt_libc.c
 * Run:   ./plt_libc SECONDS (of its own CPU time, however busy the machine) */
#include <stdlib.h>
#include <string.h>
#include <time.h>

volatile long perfz_sink;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    double end = now() + (argc > 1 ? atof(argv[1]) : 1.0);
    while (now() < end)
        for (int i = 0; i < 1000; i++) {
            char *p = strdup("ab");
            perfz_sink += p[0];
            free(p);
        }
    return 0;
}
