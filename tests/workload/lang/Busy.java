// The language matrix's Java program: methods busy until the process has
// used SECONDS of CPU time (however busy the machine). With
// -XX:+DumpPerfMapAtExit the JVM writes /tmp/perf-PID.map as it exits;
// -XX:+PreserveFramePointer lets frame-pointer stacks walk through JIT code.
import java.lang.management.ManagementFactory;
import java.util.Arrays;

public class Busy {
    static long cpuNanos() {
        return ManagementFactory.getRuntimeMXBean() != null
                ? ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime()
                : 0;
    }

    static double leaf(int n) {
        double x = 1;
        for (int i = 0; i < n; i++) x = x * 1.0000001 + 1.0 / (x + 3);
        return x;
    }

    static int sortSome(int n) {
        int[] v = new int[n];
        for (int i = 0; i < n; i++) v[i] = (i * 7919) % n;
        Arrays.sort(v);
        return v[n / 2];
    }

    static double work() {
        return leaf(200000) + sortSome(20000);
    }

    public static void main(String[] args) {
        long limit = (long) (Double.parseDouble(args[0]) * 1e9);
        double sink = 0;
        while (cpuNanos() < limit) sink += work();
        if (sink == 42) System.out.println(sink);
    }
}
