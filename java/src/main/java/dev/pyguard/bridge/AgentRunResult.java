package dev.pyguard.bridge;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * What one run of a {@link GuardedAgent} came to, as data (never an exception): the answer, or the guard's stop, or
 * the error, or exhaustion of the loop's own cap; plus the run's counters. {@link #toJson()} is what Python reads.
 *
 * @param status     {@code answered}, {@code stopped} (guard stop or fail-safe), {@code failed} (an exception),
 *                   {@code exhausted} (the loop's own cap ended it without an answer)
 * @param iterations agentic loop iterations / explicit loop model calls (0 for AiServices)
 * @param stats      the guarded model's counters, or null when the model was not a {@link GuardedChatModel}
 */
public record AgentRunResult(String style, String runId, String status, String answer, String outcome, String reason,
                             String rule, boolean failSafe, String error, String errorType, int iterations,
                             RunStats stats, double wallMs) {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    public boolean answered() { return "answered".equals(status); }
    public boolean stopped() { return "stopped".equals(status); }

    static AgentRunResult of(String style, dev.langchain4j.model.chat.ChatModel model, long t0, String status, String answer, Throwable error, int iterations) {
        double wall = (System.nanoTime() - t0) / 1e6;
        GuardedChatModel g = model instanceof GuardedChatModel gm ? gm : null;
        String runId = g == null ? null : g.runId();
        GuardStopException stop = error == null ? null : GuardStopException.findIn(error);
        if (stop != null) {
            return new AgentRunResult(style, runId, "stopped", null, stop.outcome(), stop.reason(), stop.rule(),
                    stop.failSafe(), null, null, iterations, g == null ? stop.stats() : g.stats(), wall);
        }
        if (error != null) {
            Throwable root = error;
            return new AgentRunResult(style, runId, "failed", null, "failed", GuardSensor.describe(root), null, false,
                    describeChain(error), root.getClass().getName(), iterations, g == null ? null : g.stats(), wall);
        }
        return new AgentRunResult(style, runId, status, answer, null, null, null, false, null, null, iterations,
                g == null ? null : g.stats(), wall);
    }

    /** The loop's own cap ended the run without an answer; {@code cause} is the loop's signal, kept as the reason. */
    static AgentRunResult exhausted(String style, dev.langchain4j.model.chat.ChatModel model, long t0, Throwable cause, int iterations) {
        double wall = (System.nanoTime() - t0) / 1e6;
        GuardedChatModel g = model instanceof GuardedChatModel gm ? gm : null;
        return new AgentRunResult(style, g == null ? null : g.runId(), "exhausted", null, null,
                GuardSensor.describe(cause), null, false, null, null, iterations, g == null ? null : g.stats(), wall);
    }

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
        o.put("status", status);
        o.put("answer", GuardSensor.clean(answer));
        o.put("outcome", outcome);
        o.put("reason", GuardSensor.clean(reason));
        o.put("rule", rule);
        o.put("fail_safe", failSafe);
        o.put("error", error);
        o.put("error_type", errorType);
        o.put("iterations", iterations);
        o.put("wall_ms", wallMs);
        if (stats == null) {
            o.putNull("stats");
        } else {
            ObjectNode s = o.putObject("stats");
            s.put("model_calls", stats.modelCalls());
            s.put("events", stats.events());
            s.put("events_delivered", stats.eventsDelivered());
            s.put("tool_calls", stats.toolCallsRequested());
            s.put("tool_executions", stats.toolExecutions());
            s.put("input_tokens", stats.inputTokens());
            s.put("output_tokens", stats.outputTokens());
            s.put("total_tokens", stats.totalTokens());
            s.put("callback_failures", stats.callbackFailures());
            s.put("last_callback_error", GuardSensor.clean(stats.lastCallbackError()));
            s.put("last_text", GuardSensor.clean(stats.lastText()));
        }
        return o.toString();
    }
}
