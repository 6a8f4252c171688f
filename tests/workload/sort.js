// The dwarf unwinding test's node workload: Array.prototype.sort with a
// JS comparator, so samples fall in V8's sort builtins (Builtins_ArrayTimSort
// and its helpers, in node's own text, without CFI) called from JIT code.
// Run: node --perf-basic-prof sort.js SECONDS
function cmp(a, b) { return a - b; }
function work() {
  const a = [];
  for (let i = 0; i < 2000; i++) a.push((i * 7919) % 2003);
  a.sort(cmp);
  return a[0];
}
const end = Date.now() + 1000 * Number(process.argv[2] || 1);
let t = 0;
while (Date.now() < end) t += work();
if (t < 0) process.exit(1);
