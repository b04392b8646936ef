package dev.pyguard.bridge;

/**
 * A snapshot of one run's counters. Token sums are null when no model call of the run reported that figure.
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
        Long inputTokens,
        Long outputTokens,
        Long totalTokens,
        int callbackFailures,
        String lastCallbackError,
        String lastText) {
}
