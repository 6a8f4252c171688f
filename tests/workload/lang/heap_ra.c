/* A hot loop in a function whose CFI says its return address is the word
 * at the stack pointer, where it has pushed a pointer into the heap: a word
 * of data where a return address should be, as a new thread's first
 * instruction in __clone3 finds on its stack. perf 7.3 ends the stack at the
 * function: a word that points into memory of data is no caller. Busy until
 * it has used SECONDS of its own CPU time (however busy the machine).
 * Build: cc -O2 -g -o heap_ra heap_ra.c
 * Run: ./heap_ra SECONDS */
#include <stdlib.h>
#include <time.h>

long perfz_heap_ra(long n, void *heap);

/* The CIE's rule (CFA = rsp + 8, return address at CFA - 8) is left as it
 * is after the push: the return address it gives is the heap pointer. */
__asm__(".text\n"
        ".globl perfz_heap_ra\n"
        ".type perfz_heap_ra, @function\n"
        "perfz_heap_ra:\n"
        ".cfi_startproc\n"
        "    push %rsi\n"
        "    xor %eax, %eax\n"
        "1:  add $1, %rax\n"
        "    cmp %rdi, %rax\n"
        "    jb 1b\n"
        "    pop %rsi\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size perfz_heap_ra, .-perfz_heap_ra\n");

volatile long perfz_sink;

static double cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    void *heap = malloc(4096);
    while (cpu() < seconds)
        perfz_sink += perfz_heap_ra(1000000, heap);
    free(heap);
    return 0;
}
