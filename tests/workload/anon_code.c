/*
 * Code in anonymous memory, as a JIT places it (x86-64).
 *
 *   anon_code SECONDS WHERE
 *
 * Maps 16 KiB of anonymous executable memory, copies a counting loop to
 * offset 0x800 of it, and calls it until it has used SECONDS of its own CPU
 * time (however busy the machine: a test gets the samples it needs).
 * Before that it writes "PID BASE" (BASE in hex) to the file WHERE, so that
 * a test can write /tmp/perf-PID.map entries around the loop.
 *
 * Build: cc -O1 -g anon_code.c -o anon_code
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* mov ecx, 0x100000; 1: dec ecx; jnz 1b; ret */
static const unsigned char LOOP[] = {0xb9, 0x00, 0x00, 0x10, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xc3};

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: anon_code SECONDS WHERE\n");
        return 2;
    }
    double seconds = 0;
    sscanf(argv[1], "%lf", &seconds);
    unsigned char *base = mmap(NULL, 16384, PROT_READ | PROT_WRITE | PROT_EXEC,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return 1;
    memcpy(base + 0x800, LOOP, sizeof(LOOP));
    FILE *f = fopen(argv[2], "w");
    if (!f)
        return 1;
    fprintf(f, "%d %lx\n", (int)getpid(), (unsigned long)base);
    fclose(f);
    void (*loop)(void) = (void (*)(void))(base + 0x800);
    double end = now() + seconds;
    while (now() < end)
        loop();
    return 0;
}
