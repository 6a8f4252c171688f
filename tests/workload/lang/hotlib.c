/* The language matrix's shared library (tests/it/layouts.rs): the hot code
 * of hotlib_main.c, in a library whose code spans several pages (each
 * function page-aligned), so that a build whose code starts at file offset
 * 0 (`-z noseparate-code`, gold) is mapped by ld.so as one mapping as long
 * as the whole image with its data mapped over the tail, and the code
 * stays in the part the data does not cover.
 * Build: cc -O2 -g -fPIC -shared -fomit-frame-pointer -Wl,-z,noseparate-code
 *        -o libhotlib.so hotlib.c */

volatile double perfz_lib_data[1024] = {1.0};

__attribute__((noinline, aligned(4096))) double perfz_lib_leaf(double x) {
    for (int i = 0; i < 20000; i++)
        x = x * 1.0000001 + 1.0 / (x + 3.0);
    return x;
}

__attribute__((noinline, aligned(4096))) double perfz_lib_work(int n) {
    return perfz_lib_leaf(n + perfz_lib_data[0]);
}

__attribute__((noinline, aligned(4096))) double perfz_lib_entry(int n) {
    return perfz_lib_work(n) + 1.0;
}
