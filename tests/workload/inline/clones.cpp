// `perfz export --inline` against perf 7.3 (tests/it/export_inline.rs):
// Rec<40>::go .. Rec<0>::go, each a clone gcc makes at -O2 (.constprop/
// .isra: a constant argument, a reference it passes by value), whose
// DWARF has no linkage name (internal linkage) and calls each `go`; and
// Mix<int, 3>::step inlined into Rec<0>::go. Runs for argv[1] s of CPU.
#include <cstdio>
#include <cstdlib>
#include <ctime>

struct Big {
    int a[8];
};

template <typename T, int K> struct Mix {
    __attribute__((always_inline)) static inline T step(T s, T x, int i) {
        return s + (x ^ i) * i * K;
    }
};

namespace n {
namespace {
template <int N> struct Rec {
    __attribute__((noinline)) static int go(int x, const Big &b, int unused) {
        return Rec<N - 1>::go(x * 3 + b.a[N % 8], b, 7) ^ x;
    }
};
template <> struct Rec<0> {
    __attribute__((noinline)) static int go(int x, const Big &b, int unused) {
        int s = 0;
        for (int i = 0; i < 200; i++)
            s = Mix<int, 3>::step(s, x, i) + b.a[i % 8];
        return s;
    }
};
} // namespace
} // namespace n

int main(int argc, char **argv) {
    double secs = argc > 1 ? atof(argv[1]) : 0.5;
    Big b;
    for (int i = 0; i < 8; i++)
        b.a[i] = argc + i;
    int acc = 0;
    while ((double)clock() / CLOCKS_PER_SEC < secs)
        for (long i = 0; i < 1000; i++)
            acc += n::Rec<40>::go((int)i, b, 7);
    printf("%d\n", acc);
    return 0;
}
