package dev.pyguard.bridge;

/**
 * The guard's second crossing, optional: a {@link GuardCallback} that also implements this judges the tool results of
 * model call {@code i} as soon as the guarded model holds the request of call {@code i + 1} (which carries them),
 * before that call is sent. A STOP then replaces call {@code i + 1} (answered by the wrap-up, or thrown) instead of
 * following it; a reflection is added to that same request. A callback without it has the results judged with call
 * {@code i + 1}'s event, one model call later.
 */
public interface ResultsCallback {
    /**
     * @param resultsJson {@code {"run_id": ..., "index": i, "observations": [...]}}, the observations as in an
     *                    iteration event
     * @return a decision as {@link GuardCallback#onIteration} returns one, or null (no decision: continue)
     */
    String onResults(String resultsJson);
}
