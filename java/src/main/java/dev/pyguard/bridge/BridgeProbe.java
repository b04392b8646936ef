package dev.pyguard.bridge;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Measures the Java -> Python crossing alone (for benchmarks/suites/overhead.py): the same event JSON delivered to a
 * {@link GuardCallback} {@code n} times, on the calling thread or through a pool thread with a deadline (the two
 * modes of {@link GuardSensor}). Returns the total nanoseconds.
 */
public final class BridgeProbe {

    private BridgeProbe() {}

    public static long deliver(GuardCallback cb, String eventJson, int n) {
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) cb.onIteration(eventJson);
        return System.nanoTime() - t0;
    }

    public static long deliverWithDeadline(GuardCallback cb, String eventJson, int n, long timeoutMs) throws Exception {
        ExecutorService pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "pyguard-probe");
            t.setDaemon(true);
            return t;
        });
        try {
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                Future<String> f = pool.submit(() -> cb.onIteration(eventJson));
                f.get(timeoutMs, TimeUnit.MILLISECONDS);
            }
            return System.nanoTime() - t0;
        } finally {
            pool.shutdownNow();
        }
    }

    /** A Java callback answering continue: the sensor's cost without any Python. */
    public static GuardCallback javaContinue() {
        return json -> "{\"action\":\"continue\"}";
    }
}
