package dev.pyguard.bridge;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * A lane into Python: guard callbacks of one JVM enter the interpreter at most {@code width} at a time, in the order
 * they arrive (a fair semaphore), each on its own thread. Off by default ({@code width} 0: every callback goes straight
 * to the GIL); {@code -Dpyguard.lane.width=N} turns it on for a JVM, {@link #setShared} for the benchmarks' A/B.
 *
 * <p>Why it exists: every callback needs Python's GIL, and CPython hands the GIL to any of its waiters, so with many
 * Java threads one call may wait far longer than the queue ahead of it. Waiting here instead, only {@code width}
 * threads ask for the GIL. Measured on this project's 2-core machine (benchmarks/RESULTS.md §4, the concurrency suite)
 * it did not pay: the tail there is set by Python's own garbage collector and by the GIL being busy, not by the
 * hand-off, and a FIFO hand-off costs a thread wake-up per call. Hence off by default.
 *
 * <p>It must never make things worse than the GIL alone:
 * <ul>
 *   <li><b>Reentrant</b>: a callback that calls into Java which delivers another event on the same thread (a guard
 *       inside a guard) keeps its place and goes on at once.</li>
 *   <li><b>Released on every exit</b>: a callback that throws leaves the lane free.</li>
 *   <li><b>No deadlock, no hostage</b>: the GIL is released whenever Python waits on Java; this lane is not. So when
 *       no callback has entered or left the full lane for longer than {@code patience} (a hung callback, one waiting
 *       on another thread that itself waits for the lane), waiters go around it, straight to the GIL, as without a
 *       lane. A thread interrupted while it waits goes around it too (its interrupt flag kept).</li>
 * </ul>
 *
 * <p>The wait for the lane is part of a callback's round trip: the sensor's guard-time samples include it.
 */
public final class PythonLane {

    /** How long the full lane may go without a callback entering or leaving before waiters go around it. */
    public static final long DEFAULT_PATIENCE_MS = 20;
    /** Off: measured, it did not pay on a 2-core machine (see the class comment). */
    public static final int DEFAULT_WIDTH = 0;

    private static volatile PythonLane shared = new PythonLane(
            Integer.getInteger("pyguard.lane.width", DEFAULT_WIDTH),
            Long.getLong("pyguard.lane.patienceMs", DEFAULT_PATIENCE_MS));

    private final int width;
    private final Semaphore permits;
    private final long patienceNanos;
    private final long waitNanos;
    private final LongSupplier clock;
    private final ThreadLocal<int[]> depth = ThreadLocal.withInitial(() -> new int[1]);
    private volatile long lastMove;         // clock time a callback last entered or left the lane (or it was made)
    private final AtomicLong entered = new AtomicLong();
    private final AtomicLong bypassed = new AtomicLong();

    /**
     * @param width      callbacks in Python at once through this lane (0: no lane)
     * @param patienceMs how long the full lane may go without a callback entering or leaving before waiters go
     *                   around it (at least 1)
     * @param clock      nanoseconds, for deciding whether the lane is stuck (tests inject one)
     */
    public PythonLane(int width, long patienceMs, LongSupplier clock) {
        if (width < 0) throw new IllegalArgumentException("width must be 0 (no lane) or more, got " + width);
        if (patienceMs < 1) throw new IllegalArgumentException("patienceMs must be at least 1, got " + patienceMs);
        this.width = width;
        this.permits = new Semaphore(width, true);
        this.patienceNanos = TimeUnit.MILLISECONDS.toNanos(patienceMs);
        // A timed wait that ends gives up the waiter's place in the queue: wait long, check for a stuck lane rarely.
        this.waitNanos = 4 * patienceNanos;
        this.clock = clock;
        this.lastMove = clock.getAsLong();
    }

    /** A lane on the system clock. */
    public PythonLane(int width, long patienceMs) {
        this(width, patienceMs, System::nanoTime);
    }

    /** The lane every {@link GuardSensor} of this JVM takes. */
    public static PythonLane shared() { return shared; }

    /** Replaces the shared lane (the benchmarks' A/B); callbacks already inside finish on the old one. */
    public static void setShared(PythonLane lane) {
        if (lane == null) throw new IllegalArgumentException("lane must not be null (use width 0 for no lane)");
        shared = lane;
    }

    public int width() { return width; }

    /** {@code cb.onIteration(json)} through the lane. */
    public String call(GuardCallback cb, String json) {
        boolean taken = enter();
        try {
            return cb.onIteration(json);
        } finally {
            if (taken) exit();
        }
    }

    /** {@code cb.onResults(json)} through the lane. */
    public String callResults(ResultsCallback cb, String json) {
        boolean taken = enter();
        try {
            return cb.onResults(json);
        } finally {
            if (taken) exit();
        }
    }

    /** Takes a place in the lane (true: call {@link #exit()} after) or goes around it (false). */
    boolean enter() {
        if (width == 0) return false;
        int[] d = depth.get();
        if (d[0] > 0) {  // a callback inside a callback on this thread: it has its place already
            d[0]++;
            return true;
        }
        try {
            while (!(permits.availablePermits() == 0 && stuck())) {
                if (permits.tryAcquire(waitNanos, TimeUnit.NANOSECONDS)) {
                    d[0] = 1;
                    lastMove = clock.getAsLong();
                    entered.incrementAndGet();
                    return true;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        bypassed.incrementAndGet();
        return false;
    }

    void exit() {
        int[] d = depth.get();
        if (--d[0] > 0) return;
        lastMove = clock.getAsLong();
        permits.release();
    }

    /** No callback entered or left the lane for longer than the patience. */
    private boolean stuck() {
        return clock.getAsLong() - lastMove > patienceNanos;
    }

    /** Threads waiting for the lane now. */
    public int queueLength() { return permits.getQueueLength(); }

    /** Callbacks inside the lane now (outermost entries). */
    public int inside() { return width - permits.availablePermits(); }

    /** Callbacks that went through the lane (outermost entries). */
    public long entered() { return entered.get(); }

    /** Callbacks that went around a stuck lane or were interrupted while they waited. */
    public long bypassed() { return bypassed.get(); }
}
