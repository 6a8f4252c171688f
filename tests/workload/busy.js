// The export tests' JIT workload: node compiles fib and work, and with
// --perf-basic-prof names their code in /tmp/perf-PID.map.
// Run: node --perf-basic-prof busy.js SECONDS
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function work() { let s = 0; for (let i = 0; i < 50; i++) s += fib(18); return s; }
// Until the process has used SECONDS of CPU time (however busy the machine).
const cpuMicros = () => { const u = process.cpuUsage(); return u.user + u.system; };
const end = 1e6 * Number(process.argv[2] || 1);
let t = 0;
while (cpuMicros() < end) t += work();
if (t <= 0) process.exit(1);
