package dev.pyguard.bridge;

import java.util.Set;

/**
 * How one guarded user turn ended, as an immutable value Java code reads without Python: the run's one outcome (what
 * {@code RunResult.outcome} says in Python), the rule that stopped it, where the answer the agent returned came from.
 * {@link AgentGuardedChatModel#lastOutcome()} gives the calling thread's last one; an
 * {@link AgentGuardedChatModel#addOutcomeListener outcome listener} hears every one.
 *
 * <p>Under {@code on_stop="answer"} (the default) a stopped turn still returns a plain {@code String} from your
 * agent's {@code chat()}: this value is how the caller learns it was the wrap-up's answer ({@code answerSource}
 * {@code "wrap_up"}), not the model's own.
 *
 * @param runId        the run's id (its trace is {@code <runId>.jsonl})
 * @param outcome      {@code succeeded}, {@code failed}, {@code expired}, {@code stalled}, {@code escalated},
 *                     {@code cancelled} or {@code guard_error} (Python's {@code pyguard.base.events.Outcome})
 * @param rule         the rule that ended the run (e.g. {@code stall:repeat}, {@code cap:total_tokens},
 *                     {@code agent_cap}, {@code failsafe_cap}), or null
 * @param reason       why it ended, in words ({@code ""} when it answered)
 * @param answerSource {@code model} (the model's own final answer), {@code wrap_up} (one last model call with no
 *                     tools after a stop), {@code salvaged} (the last text before the stop), {@code stop_message}
 *                     ({@code on_stop="end"}), or null when the turn gave no answer
 * @param modelCalls   the model calls of the turn (the wrap-up not counted)
 * @param totalTokens  the tokens the provider billed for the turn, wrap-up included; null when none reported usage
 */
public record GuardOutcome(String runId, String outcome, String rule, String reason, String answerSource,
                           int modelCalls, Long totalTokens) {

    private static final Set<String> KNOWN = Set.of(
            "succeeded", "failed", "expired", "stalled", "escalated", "cancelled", "guard_error");

    public GuardOutcome {
        if (runId == null || outcome == null) throw new IllegalArgumentException("runId and outcome are required");
        if (!KNOWN.contains(outcome)) {
            throw new IllegalArgumentException("outcome=" + outcome + " is not one of " + KNOWN);
        }
        if (reason == null) reason = "";
    }

    /** True when the model answered on its own and nothing stopped the turn. */
    public boolean succeeded() { return "succeeded".equals(outcome); }

    /**
     * True when the turn was ended early (the guard's stop, a cap, the fail-safe, a cancellation or an escalation):
     * any outcome but {@code succeeded} and {@code failed}. Its answer, if any, is not the model's own.
     */
    public boolean stopped() { return !succeeded() && !"failed".equals(outcome); }
}
