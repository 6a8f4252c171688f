// The language matrix's C++ program: the standard library's templates
// (<regex>, iostreams, <random>, std::sort, std::map), busy until the
// process has used SECONDS of CPU time (however busy the machine).
// Build: c++ -O2 -g -fomit-frame-pointer -o cxxlib cxxlib.cpp
#include <algorithm>
#include <ctime>
#include <iostream>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

static double cpu_seconds() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

namespace perfz {

template <typename Engine>
std::vector<unsigned> draw(Engine &engine, int n) {
    std::uniform_int_distribution<unsigned> d(0, 1u << 20);
    std::vector<unsigned> v(n);
    for (auto &x : v)
        x = d(engine);
    return v;
}

__attribute__((noinline)) std::string print(const std::vector<unsigned> &v) {
    std::ostringstream out;
    for (unsigned x : v)
        out << "item-" << x << ' ';
    return out.str();
}

__attribute__((noinline)) size_t parse(const std::string &text) {
    std::istringstream in(text);
    std::string word;
    size_t n = 0;
    while (in >> word)
        n += word.size();
    return n;
}

__attribute__((noinline)) size_t search(const std::string &text, const std::regex &re) {
    return std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator());
}

__attribute__((noinline)) size_t tally(const std::vector<unsigned> &v) {
    std::map<unsigned, int> counts;
    for (unsigned x : v)
        counts[x % 1000]++;
    return counts.size();
}

} // namespace perfz

int main(int argc, char **argv) {
    double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
    std::mt19937_64 engine(42);
    std::regex re("item-[0-9]*7 ");
    size_t sink = 0;
    while (cpu_seconds() < seconds) {
        auto v = perfz::draw(engine, 2000);
        std::sort(v.begin(), v.end(), std::greater<unsigned>());
        std::string text = perfz::print(v);
        sink += perfz::parse(text) + perfz::search(text, re) + perfz::tally(v);
    }
    if (sink == 42)
        std::cout << sink << '\n';
    return 0;
}
