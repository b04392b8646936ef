package dev.pyguard.bridge;

import dev.pyguard.bridge.scripted.ScriptedChatModel;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.*;

/** The lane's properties: arrival order, reentrancy, released on a throw, never a hostage of a stuck callback. */
class PythonLaneTest {

    private static final String CONTINUE = "{\"action\":\"continue\"}";
    private static final Duration LIMIT = Duration.ofSeconds(20);

    /** A clock that moves only when told (the lane is never stuck unless a test says so). */
    private final AtomicLong now = new AtomicLong();

    private PythonLane lane(int width) {
        return new PythonLane(width, 60_000, now::get);
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void until(BooleanSupplier condition) {
        while (!condition.getAsBoolean()) Thread.onSpinWait();
    }

    /** A thread that holds a place in the lane until {@code release} counts down. */
    private static Thread holder(PythonLane lane, CountDownLatch release) {
        Thread t = new Thread(() -> lane.call(json -> { await(release); return CONTINUE; }, "{}"));
        t.start();
        return t;
    }

    @Test
    void callbacksEnterInTheOrderTheyArrived() {
        assertTimeoutPreemptively(LIMIT, () -> {
            PythonLane lane = lane(1);
            CountDownLatch release = new CountDownLatch(1);
            Thread first = holder(lane, release);
            until(() -> lane.inside() == 1);
            List<Integer> order = new CopyOnWriteArrayList<>();
            List<Thread> waiters = new ArrayList<>();
            for (int i = 1; i <= 6; i++) {
                int id = i;
                Thread t = new Thread(() -> lane.call(json -> { order.add(id); return CONTINUE; }, "{}"));
                t.start();
                waiters.add(t);
                until(() -> lane.queueLength() == id);  // queued before the next one starts
            }
            release.countDown();
            first.join();
            for (Thread t : waiters) t.join();
            assertEquals(List.of(1, 2, 3, 4, 5, 6), order);
            assertEquals(7, lane.entered());
            assertEquals(0, lane.bypassed());
        });
    }

    @Test
    void aCallbackInsideACallbackOnTheSameThreadKeepsItsPlace() {
        assertTimeoutPreemptively(LIMIT, () -> {
            PythonLane lane = lane(1);
            int[] insideDuringInner = new int[1];
            String reply = lane.call(outer -> lane.call(inner -> {
                insideDuringInner[0] = lane.inside();
                return "{\"action\":\"stop\",\"outcome\":\"stalled\"}";
            }, "{}"), "{}");
            assertTrue(reply.contains("stalled"));
            assertEquals(1, insideDuringInner[0]);
            assertEquals(1, lane.entered(), "the inner call is the same place, not a second entry");
            assertEquals(0, lane.bypassed());
            assertEquals(0, lane.inside());
        });
    }

    @Test
    void theLaneIsFreeAfterACallbackThrows() {
        assertTimeoutPreemptively(LIMIT, () -> {
            PythonLane lane = lane(1);
            RuntimeException e = assertThrows(IllegalStateException.class,
                    () -> lane.call(json -> { throw new IllegalStateException("python side broke"); }, "{}"));
            assertEquals("python side broke", e.getMessage());
            // also when it throws inside a nested call
            assertThrows(IllegalStateException.class, () -> lane.call(
                    outer -> lane.call(inner -> { throw new IllegalStateException("inner"); }, "{}"), "{}"));
            assertEquals(0, lane.inside());
            String[] reply = new String[1];
            Thread other = new Thread(() -> reply[0] = lane.call(json -> CONTINUE, "{}"));
            other.start();
            other.join();
            assertEquals(CONTINUE, reply[0]);
            assertEquals(0, lane.bypassed());
        });
    }

    @Test
    void waitersGoAroundALaneNobodyLeavesWithinThePatience() {
        assertTimeoutPreemptively(LIMIT, () -> {
            PythonLane lane = new PythonLane(1, 20, now::get);
            CountDownLatch release = new CountDownLatch(1);
            Thread stuck = holder(lane, release);
            until(() -> lane.inside() == 1);
            now.addAndGet(21_000_000L);  // 21 ms without a callback entering or leaving
            assertEquals(CONTINUE, lane.call(json -> CONTINUE, "{}"));
            assertEquals(1, lane.bypassed());
            release.countDown();
            stuck.join();
            assertEquals(0, lane.inside());
            // once the holder has left, callers take the lane again
            lane.call(json -> CONTINUE, "{}");
            assertEquals(2, lane.entered());
            assertEquals(1, lane.bypassed());
        });
    }

    @Test
    void anInterruptedWaiterGoesAroundAndKeepsItsFlag() {
        assertTimeoutPreemptively(LIMIT, () -> {
            PythonLane lane = lane(1);
            CountDownLatch release = new CountDownLatch(1);
            Thread busy = holder(lane, release);
            until(() -> lane.inside() == 1);
            boolean[] flag = new boolean[1];
            String[] reply = new String[1];
            Thread t = new Thread(() -> {
                Thread.currentThread().interrupt();
                reply[0] = lane.call(json -> CONTINUE, "{}");
                flag[0] = Thread.currentThread().isInterrupted();
            });
            t.start();
            t.join();
            assertEquals(CONTINUE, reply[0]);
            assertTrue(flag[0]);
            assertEquals(1, lane.bypassed());
            release.countDown();
            busy.join();
        });
    }

    @Test
    void aLaneOfWidthTwoLetsTwoInAndQueuesTheThird() {
        assertTimeoutPreemptively(LIMIT, () -> {
            PythonLane lane = lane(2);
            CountDownLatch release = new CountDownLatch(1);
            Thread a = holder(lane, release);
            Thread b = holder(lane, release);
            until(() -> lane.inside() == 2);
            Thread c = holder(lane, new CountDownLatch(0));
            until(() -> lane.queueLength() == 1);
            assertEquals(2, lane.inside());
            release.countDown();
            a.join();
            b.join();
            c.join();
            assertEquals(3, lane.entered());
            assertEquals(0, lane.inside());
        });
    }

    @Test
    void widthZeroIsNoLane() {
        PythonLane lane = lane(0);
        assertEquals(CONTINUE, lane.call(json -> CONTINUE, "{}"));
        assertEquals(0, lane.entered());
        assertEquals(0, lane.inside());
        assertThrows(IllegalArgumentException.class, () -> new PythonLane(-1, 20));
        assertThrows(IllegalArgumentException.class, () -> new PythonLane(1, 0));
        assertThrows(IllegalArgumentException.class, () -> PythonLane.setShared(null));
    }

    @Test
    void aHungDeadlineCallbackDoesNotHoldOtherRunsHostage() {
        PythonLane before = PythonLane.shared();
        PythonLane lane = new PythonLane(1, 20);
        PythonLane.setShared(lane);
        CountDownLatch never = new CountDownLatch(1);
        try {
            assertTimeoutPreemptively(LIMIT, () -> {
                ScriptedChatModel scripted = TestSupport.scenario("oscillating");
                GuardCallback blocking = json -> { await(never); return CONTINUE; };
                GuardedChatModel late = new GuardedChatModel(scripted,
                        GuardConfig.of("hung").withMaxModelCalls(3).withCallbackTimeoutMs(5), blocking);
                AgentRunResult hung = Agents.explicit(late, scripted.newTools(), 100, null).run("status?");
                assertEquals("guard_error", hung.outcome());
                until(() -> lane.inside() == 1);  // the hung callback keeps its place on its pool thread

                ScriptedChatModel other = TestSupport.scenario("convergent");
                TestSupport.Recorder rec = new TestSupport.Recorder();
                GuardedChatModel g = new GuardedChatModel(other, GuardConfig.of("fine"), rec);
                AgentRunResult r = Agents.aiServices(g, other.newTools(), 100, null).run("Where is order 34567?");
                assertEquals(AgentRunResult.Ending.ANSWERED, r.ending(), r.toJson());
                assertEquals(4, rec.events.size());
                assertEquals(0, r.stats().callbackFailures());
                assertEquals(4, lane.bypassed(), "every callback of the other run went around the stuck lane");
            });
        } finally {
            never.countDown();
            PythonLane.setShared(before);
        }
    }
}
