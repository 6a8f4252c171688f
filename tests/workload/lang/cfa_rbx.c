/* A hot loop in a function whose canonical frame address is kept in %rbx
 * while it realigns its stack, as ld.so's _dl_runtime_resolve_xsavec keeps
 * it (and code built with -mstackrealign or hand-written assembly): its
 * CFI says "CFA = rbx + 16", which an unwinder that tracks only rip, rsp
 * and rbp cannot follow. Busy until it has used SECONDS of its own CPU
 * time (however busy the machine).
 * With "calls", the function keeping its CFA in %rbx is not the leaf: it
 * calls the hot loop, as _dl_runtime_resolve_xsavec calls _dl_fixup. Built
 * with frame pointers, an unwinder that falls back to them there skips the
 * function's caller.
 * Build: cc -O2 -g -fomit-frame-pointer -o cfa_rbx cfa_rbx.c
 * Run: ./cfa_rbx SECONDS [calls] */
#include <stdlib.h>
#include <time.h>

long perfz_spin_rbx(long n);
long perfz_rbx_calls(long n);

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
        ".size perfz_spin_rbx, .-perfz_spin_rbx\n"
        ".globl perfz_rbx_calls\n"
        ".type perfz_rbx_calls, @function\n"
        "perfz_rbx_calls:\n"
        ".cfi_startproc\n"
        "    push %rbx\n"
        ".cfi_adjust_cfa_offset 8\n"
        ".cfi_rel_offset %rbx, 0\n"
        "    mov %rsp, %rbx\n"
        ".cfi_def_cfa_register %rbx\n"
        "    and $-64, %rsp\n"
        "    sub $64, %rsp\n"
        "    call perfz_spin_leaf\n"
        "    mov %rbx, %rsp\n"
        ".cfi_def_cfa_register %rsp\n"
        "    pop %rbx\n"
        ".cfi_adjust_cfa_offset -8\n"
        ".cfi_restore %rbx\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size perfz_rbx_calls, .-perfz_rbx_calls\n");

volatile long perfz_sink;

__attribute__((noinline, used)) long perfz_spin_leaf(long n) {
    long s = 0;
    for (long i = 0; i < n; i++)
        perfz_sink = s += i;
    return s;
}

static double cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) long perfz_rbx_caller(long n, int calls) {
    long s = 0;
    for (int i = 0; i < 8; i++)
        s += calls ? perfz_rbx_calls(n + i) : perfz_spin_rbx(n + i);
    return s;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    int calls = argc > 2 && argv[2][0] == 'c';
    while (cpu() < seconds)
        perfz_sink += perfz_rbx_caller(100000, calls);
    return 0;
}
