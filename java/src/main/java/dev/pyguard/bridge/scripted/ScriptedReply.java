package dev.pyguard.bridge.scripted;

import java.util.List;

/**
 * One scripted model response.
 *
 * @param toolCalls     tool calls (empty for a final answer)
 * @param text          the AI text (the answer, or optional text alongside tool calls)
 * @param inputTokens   null when the scenario reports no usage
 * @param outputTokens  null when the scenario reports no usage
 * @param turn          the 0-based turn it was chosen for
 * @param recovered     true when this is the scenario's reaction to a guard reflection
 * @param requestDigest the recorded request's digest when the turn was recorded (else null)
 */
public record ScriptedReply(List<Call> toolCalls, String text, Integer inputTokens, Integer outputTokens, int turn,
                            boolean recovered, String requestDigest) {

    public ScriptedReply(List<Call> toolCalls, String text, Integer inputTokens, Integer outputTokens, int turn,
                         boolean recovered) {
        this(toolCalls, text, inputTokens, outputTokens, turn, recovered, null);
    }

    /** A tool call: {@code arguments} is the raw JSON string (possibly malformed on purpose). */
    public record Call(String id, String name, String arguments) {}

    public boolean isFinal() { return toolCalls.isEmpty(); }

    public Integer totalTokens() {
        return inputTokens == null || outputTokens == null ? null : inputTokens + outputTokens;
    }
}
