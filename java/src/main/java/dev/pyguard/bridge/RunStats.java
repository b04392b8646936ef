package dev.pyguard.bridge;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A snapshot of one run's counters. Tokens are not here: Python counts them from the run's events, with the one
 * definition of a call's tokens ({@code pyguard.base.events.IterationEvent.tokens}).
 *
 * <p>{@link #toJson()} is the one way these counters reach Python ({@code pyguard.jvm.BridgeRunStats}, same field names).
 *
 * @param modelCalls          model calls started (each one produces one event)
 * @param events              iteration events built by the sensor
 * @param eventsDelivered     events the callback answered with a valid decision in time
 * @param toolCallsRequested  tool calls the model asked for, over all responses
 * @param toolExecutions      tools actually executed (counted where the loop exposes a hook: AiServices, agentic, explicit)
 * @param callbackFailures    callback exceptions, bad replies, timeouts, or events with no callback registered
 * @param lastCallbackError   the last failure's message, or null
 * @param lastText            the last non-blank AI text seen (a salvageable answer), or null
 */
public record RunStats(
        int modelCalls,
        int events,
        int eventsDelivered,
        int toolCallsRequested,
        int toolExecutions,
        int callbackFailures,
        String lastCallbackError,
        String lastText) {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    /** The counters as one JSON object, the fields of {@code pyguard.jvm.BridgeRunStats}. */
    public String toJson() { return toNode().toString(); }

    ObjectNode toNode() {
        ObjectNode s = MAPPER.createObjectNode();
        s.put("model_calls", modelCalls);
        s.put("events", events);
        s.put("events_delivered", eventsDelivered);
        s.put("tool_calls", toolCallsRequested);
        s.put("tool_executions", toolExecutions);
        s.put("callback_failures", callbackFailures);
        s.put("last_callback_error", GuardSensor.clean(lastCallbackError));
        s.put("last_text", GuardSensor.clean(lastText));
        return s;
    }
}
