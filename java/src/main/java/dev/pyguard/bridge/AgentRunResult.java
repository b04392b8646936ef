package dev.pyguard.bridge;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.langchain4j.model.chat.ChatModel;

import java.util.Locale;

/**
 * What one run of a {@link GuardedAgent} came to, as data (never an exception): the answer, or the guard's stop, or
 * the error, or exhaustion of the loop's own cap; plus the run's counters. {@link #toJson()} is what Python reads
 * ({@code pyguard.jvm.ending} turns it into the run's ending).
 *
 * @param ending     how the agent's loop ended: {@link Ending}
 * @param outcome    for {@link Ending#STOPPED}: the stop's outcome (the guard's decision, or the fail-safe's
 *                   {@code guard_error}/{@code expired}); null otherwise
 * @param iterations agentic loop iterations / explicit loop model calls (0 for AiServices)
 * @param stats      the guarded model's counters, or null when the model was not a {@link GuardedChatModel}
 */
public record AgentRunResult(String style, String runId, Ending ending, String answer, String outcome, String reason,
                             String rule, boolean failSafe, String error, String errorType, int iterations,
                             RunStats stats, double wallMs) {

    /**
     * How an agent's loop ended: the one list, for every agent style. Python maps it to the run's outcome
     * ({@code pyguard.jvm.ending.Ending} has the same values); Java decides no outcome of its own.
     */
    public enum Ending {
        /** The model answered. */
        ANSWERED,
        /** A {@link GuardStopException} ended it: the guard's stop, a cancellation, or the Java fail-safe. */
        STOPPED,
        /** An exception other than a guard stop. */
        FAILED,
        /** The loop's own cap (maxToolCallingRoundTrips, maxIterations) ended it without an answer. */
        EXHAUSTED;

        /** The name Python reads: {@code answered}, {@code stopped}, {@code failed}, {@code exhausted}. */
        public String value() { return name().toLowerCase(Locale.ROOT); }
    }

    private static final ObjectMapper MAPPER = new ObjectMapper();

    public boolean answered() { return ending == Ending.ANSWERED; }
    public boolean stopped() { return ending == Ending.STOPPED; }

    /** The model answered {@code answer}. */
    static AgentRunResult answered(String style, ChatModel model, long t0, String answer, int iterations) {
        return plain(style, model, t0, Ending.ANSWERED, answer, null, iterations);
    }

    /** The loop's own cap ended the run without an answer; {@code cause} (its signal, if any) is kept as the reason. */
    static AgentRunResult exhausted(String style, ChatModel model, long t0, Throwable cause, int iterations) {
        return plain(style, model, t0, Ending.EXHAUSTED, null, cause == null ? null : GuardSensor.describe(cause), iterations);
    }

    /** The run ended with {@code error}: {@link Ending#STOPPED} when a guard stop is in its chain, else {@link Ending#FAILED}. */
    static AgentRunResult ofError(String style, ChatModel model, long t0, Throwable error, int iterations) {
        double wall = wallMs(t0);
        GuardedChatModel g = runOf(model);
        String runId = g == null ? null : g.runId();
        GuardStopException stop = GuardStopException.findIn(error);
        if (stop != null) {
            return new AgentRunResult(style, runId, Ending.STOPPED, null, stop.outcome(), stop.reason(), stop.rule(),
                    stop.failSafe(), null, null, iterations, g == null ? stop.stats() : g.stats(), wall);
        }
        return new AgentRunResult(style, runId, Ending.FAILED, null, null, GuardSensor.describe(error), null, false,
                describeChain(error), error.getClass().getName(), iterations, g == null ? null : g.stats(), wall);
    }

    private static AgentRunResult plain(String style, ChatModel model, long t0, Ending ending, String answer,
                                        String reason, int iterations) {
        GuardedChatModel g = runOf(model);
        return new AgentRunResult(style, g == null ? null : g.runId(), ending, answer, null, reason, null, false, null,
                null, iterations, g == null ? null : g.stats(), wallMs(t0));
    }

    /** The run's guarded model: the model itself, or the run of the calling thread of an agent's guard. */
    private static GuardedChatModel runOf(ChatModel model) {
        return model instanceof ToolGuard tg ? tg.currentRun() : null;
    }

    private static double wallMs(long t0) { return (System.nanoTime() - t0) / 1e6; }

    private static String describeChain(Throwable t) {
        StringBuilder sb = new StringBuilder(GuardSensor.describe(t));
        java.util.Set<Throwable> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        seen.add(t);
        for (Throwable c = t.getCause(); c != null && seen.add(c); c = c.getCause()) {
            sb.append(" <- caused by ").append(GuardSensor.describe(c));
        }
        return GuardSensor.clean(sb.toString());
    }

    public String toJson() {
        ObjectNode o = MAPPER.createObjectNode();
        o.put("style", style);
        o.put("run_id", runId);
        o.put("status", ending.value());
        o.put("answer", GuardSensor.clean(answer));
        o.put("outcome", outcome);
        o.put("reason", GuardSensor.clean(reason));
        o.put("rule", rule);
        o.put("fail_safe", failSafe);
        o.put("error", error);
        o.put("error_type", errorType);
        o.put("iterations", iterations);
        o.put("wall_ms", wallMs);
        if (stats == null) o.putNull("stats"); else o.set("stats", stats.toNode());
        return o.toString();
    }
}
