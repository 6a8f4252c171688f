/* A hot loop in a function whose canonical frame address is kept in %rbx
 * while it realigns its stack, as ld.so's _dl_runtime_resolve_xsavec keeps
 * it (and code built with -mstackrealign or hand-written assembly): its
 * CFI says "CFA = rbx + 16", which an unwinder that tracks only rip, rsp
 * and rbp cannot follow. Busy until it has used SECONDS of its own CPU
 * time (however busy the machine).
 * Build: cc -O2 -g -fomit-frame-pointer -o cfa_rbx cfa_rbx.c
 * Run: ./cfa_rbx SECONDS */
#include <stdlib.h>
#include <time.h>

long perfz_spin_rbx(long n);

__asm__(".text\n"
        ".globl perfz_spin_rbx\n"
        ".type perfz_spin_rbx, @function\n"
        "perfz_spin_rbx:\n"
        ".cfi_startproc\n"
        "    push %rbx\n"
        ".cfi_adjust_cfa_offset 8\n"
        ".cfi_rel_offset %rbx, 0\n"
        "    mov %rsp, %rbx\n"
        ".cfi_def_cfa_register %rbx\n"
        "    and $-64, %rsp\n"
        "    sub $64, %rsp\n"
        "    xor %eax, %eax\n"
        "1:  add $1, %rax\n"
        "    mov %rax, (%rsp)\n"
        "    cmp %rdi, %rax\n"
        "    jb 1b\n"
        "    mov %rbx, %rsp\n"
        ".cfi_def_cfa_register %rsp\n"
        "    pop %rbx\n"
        ".cfi_adjust_cfa_offset -8\n"
        ".cfi_restore %rbx\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size perfz_spin_rbx, .-perfz_spin_rbx\n");

volatile long perfz_sink;

static double cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) long perfz_rbx_caller(long n) {
    long s = 0;
    for (int i = 0; i < 8; i++)
        s += perfz_spin_rbx(n + i);
    return s;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    while (cpu() < seconds)
        perfz_sink += perfz_rbx_caller(100000);
    return 0;
}
