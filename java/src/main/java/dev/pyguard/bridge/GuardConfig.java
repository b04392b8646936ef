package dev.pyguard.bridge;

import java.util.Objects;

/**
 * Per-run settings of a {@link GuardedChatModel}.
 *
 * @param runId             the run's identity, copied into every event
 * @param taskType          copied into every event (may be null)
 * @param maxModelCalls     the Java fail-safe: at most this many model calls per user turn (the whole run when the
 *                          guard never reports a turn), whatever Python does ({@link #DEFAULT_MAX_MODEL_CALLS} by
 *                          default; {@code Integer.MAX_VALUE} disables it). A Python {@code Guard} sets it from its
 *                          policy ({@code pyguard.base.limits.fail_safe_cap}); the table of every limit is in
 *                          docs/architecture.md, "Which limit stops my run"
 * @param callbackTimeoutMs when positive, the callback runs on a pool thread and a reply later than this counts as a
 *                          failure (the run goes on); when 0, the callback runs on the calling thread (cheaper)
 * @param callbackRequired  when false (observe-only mode) a missing callback is not a failure
 */
public record GuardConfig(String runId, String taskType, int maxModelCalls, long callbackTimeoutMs, boolean callbackRequired) {

    /** The fail-safe of a run built without a policy: the one home of this default (Python reads it from here). */
    public static final int DEFAULT_MAX_MODEL_CALLS = 50;

    public GuardConfig {
        Objects.requireNonNull(runId, "runId");
        if (runId.isBlank()) throw new IllegalArgumentException("runId is blank; give each run a non-empty id");
        if (maxModelCalls < 1) {
            throw new IllegalArgumentException("maxModelCalls=" + maxModelCalls + " must be at least 1");
        }
        if (callbackTimeoutMs < 0) {
            throw new IllegalArgumentException("callbackTimeoutMs=" + callbackTimeoutMs + " must be 0 (no deadline) or positive");
        }
    }

    public static GuardConfig of(String runId) {
        return new GuardConfig(runId, null, DEFAULT_MAX_MODEL_CALLS, 0, true);
    }

    /** Sensing only: no cap, no callback expected (for unguarded baseline runs that still count calls and tokens). */
    public static GuardConfig observeOnly(String runId) {
        return new GuardConfig(runId, null, Integer.MAX_VALUE, 0, false);
    }

    public GuardConfig withTaskType(String t) { return new GuardConfig(runId, t, maxModelCalls, callbackTimeoutMs, callbackRequired); }
    public GuardConfig withMaxModelCalls(int n) { return new GuardConfig(runId, taskType, n, callbackTimeoutMs, callbackRequired); }
    public GuardConfig withCallbackTimeoutMs(long ms) { return new GuardConfig(runId, taskType, maxModelCalls, ms, callbackRequired); }
    public GuardConfig withCallbackRequired(boolean r) { return new GuardConfig(runId, taskType, maxModelCalls, callbackTimeoutMs, r); }
}
