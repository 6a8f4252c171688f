/* Calls through libc's own PLT: strdup calls strlen and memcpy, IFUNCs
 * that libc reaches through its PLT (IRELATIVE entries), so samples land
 * in libc's entries. Build: cc -O2 -g -fno-omit-frame-pointer -o plt_libc plt_libc.c
 * Run:   ./plt_libc SECONDS (of its own CPU time, however busy the machine)
 *        ./plt_libc --entries: the addresses of the libc PLT entries strdup
 *        calls ("call ADDR") or jumps to ("jump ADDR"), for breakpoints:
 *        on some CPUs (AMD EPYC here) the timer's samples never land on an
 *        entry's one indirect jump, so a test puts an execute breakpoint
 *        there (with the address space laid out the same each run). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

volatile long perfz_sink;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Whether `e` is a PLT entry: `jmp *d(%rip)`, after an endbr64 or a bnd
 * prefix where there is one. */
static int is_entry(const unsigned char *e) {
    if (e[0] == 0xf3 && e[1] == 0x0f && e[2] == 0x1e && e[3] == 0xfa)
        e += 4;
    if (e[0] == 0xf2)
        e += 1;
    return e[0] == 0xff && e[1] == 0x25;
}

/* strdup's direct calls and jumps whose target lies in libc before
 * strdup (where libc's PLT is) and is an entry. */
static void print_entries(void) {
    const unsigned char *f = dlsym(RTLD_DEFAULT, "strdup");
    Dl_info info;
    if (!f || !dladdr(f, &info))
        return;
    const unsigned char *base = info.dli_fbase;
    for (int i = 0; i < 64; i++) {
        if (f[i] != 0xe8 && f[i] != 0xe9)
            continue;
        int32_t rel;
        memcpy(&rel, f + i + 1, 4);
        const unsigned char *t = f + i + 5 + rel;
        if (t >= base && t < f && is_entry(t))
            printf("%s %p\n", f[i] == 0xe8 ? "call" : "jump", (const void *)t);
    }
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--entries") == 0) {
        print_entries();
        return 0;
    }
    double end = now() + (argc > 1 ? atof(argv[1]) : 1.0);
    while (now() < end)
        for (int i = 0; i < 1000; i++) {
            char *p = strdup("ab");
            perfz_sink += p[0];
            free(p);
        }
    return 0;
}
