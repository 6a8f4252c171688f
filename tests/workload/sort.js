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
// Until the process has used SECONDS of CPU time (however busy the machine).
const cpuMicros = () => { const u = process.cpuUsage(); return u.user + u.system; };
const end = 1e6 * Number(process.argv[2] || 1);
let t = 0;
while (cpuMicros() < end) t += work();
if (t < 0) process.exit(1);
