package dev.pyguard.bridge;

/**
 * Thrown by {@link GuardedChatModel} (before a model call, or before a tool of the last response runs) to end a run:
 * either because the guard decided to stop, or because the Java fail-safe cap was reached.
 *
 * <p>It carries the run's outcome (a {@code pyguard.base.events.Outcome} value such as {@code stalled}, {@code expired},
 * {@code guard_error}), the reason and rule, and the counts at the moment of the stop. LangChain4j loops may wrap it;
 * {@link #findIn(Throwable)} digs it out of a cause chain.
 */
public final class GuardStopException extends RuntimeException {

    private final String runId;
    private final String outcome;
    private final String reason;
    private final String rule;
    private final boolean failSafe;
    private final RunStats stats;

    public GuardStopException(String runId, String outcome, String reason, String rule, boolean failSafe, RunStats stats) {
        super("pyguard stopped run " + runId + " (" + outcome + (rule == null ? "" : ", rule " + rule) + "): " + reason);
        this.runId = runId;
        this.outcome = outcome;
        this.reason = reason;
        this.rule = rule;
        this.failSafe = failSafe;
        this.stats = stats;
    }

    public String runId() { return runId; }
    public String outcome() { return outcome; }
    public String reason() { return reason; }
    public String rule() { return rule; }
    /** True when the Java fail-safe (not the guard's decision) ended the run. */
    public boolean failSafe() { return failSafe; }
    public RunStats stats() { return stats; }
    public int modelCalls() { return stats.modelCalls(); }
    public int toolCalls() { return stats.toolCallsRequested(); }
    public int callbackFailures() { return stats.callbackFailures(); }

    /** The first GuardStopException in the cause (and suppressed) chain of {@code t}, or null. */
    public static GuardStopException findIn(Throwable t) {
        java.util.Set<Throwable> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        java.util.ArrayDeque<Throwable> todo = new java.util.ArrayDeque<>();
        if (t != null) todo.add(t);
        while (!todo.isEmpty()) {
            Throwable c = todo.poll();
            if (!seen.add(c)) continue;
            if (c instanceof GuardStopException g) return g;
            if (c.getCause() != null) todo.add(c.getCause());
            for (Throwable s : c.getSuppressed()) todo.add(s);
        }
        return null;
    }
}
