// Build: c++ -O2 -g [-fno-omit-frame-pointer] -o cxx cxx.cpp   Run: ./cxx SECONDS
// The export tests' C++ workload: templates, lambdas, virtual calls, an
// anonymous namespace and std containers, busy until the process has used
// SECONDS of CPU time (however busy the machine).
#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {
struct Shape {
    virtual ~Shape() = default;
    virtual double area(int n) const = 0;
};
struct Square : Shape {
    double s;
    explicit Square(double s) : s(s) {}
    __attribute__((noinline)) double area(int n) const override {
        double a = 0;
        for (int i = 0; i < n; i++) a += s * s + i;
        return a;
    }
};
__attribute__((noinline)) double measure(const std::vector<std::unique_ptr<Shape>>& v, int n) {
    double t = 0;
    for (auto& s : v) t += s->area(n);
    return t;
}
}  // namespace

namespace perfz {
template <typename T, typename Cmp>
__attribute__((noinline)) void sort_it(std::vector<T>& v, Cmp cmp) {
    std::sort(v.begin(), v.end(), cmp);
}
template <typename K>
struct Table {
    std::map<K, std::string> m;
    __attribute__((noinline)) size_t fill(int n) {
        for (int i = 0; i < n; i++) m[K(i * 7919 % 1000)] = std::to_string(i);
        return m.size();
    }
};
}  // namespace perfz

volatile double sink;

static double cpu_seconds() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    std::vector<std::unique_ptr<Shape>> shapes;
    for (int i = 0; i < 8; i++) shapes.emplace_back(new Square(i));
    auto work = [&](int round) __attribute__((noinline)) {
        std::vector<int> v(2000);
        for (size_t i = 0; i < v.size(); i++) v[i] = (i * 2654435761u + round) % 10007;
        perfz::sort_it(v, std::greater<int>());
        perfz::Table<long> t;
        return t.fill(500) + measure(shapes, 200);
    };
    int round = 0;
    while (cpu_seconds() < secs) sink = sink + work(round++);
    return 0;
}
