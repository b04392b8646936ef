package dev.pyguard.bridge;

/**
 * The one crossing from Java to the guard (Python implements this with JPype's {@code @JImplements}).
 *
 * <p>Called once per model call of a run with the iteration event serialised as one JSON object (the fields of
 * {@code pyguard.base.events.IterationEvent}). Returns the decision as a short JSON object, for example
 * {@code {"action":"continue"}}, {@code {"action":"reflect","reflection":"..."}} or
 * {@code {"action":"stop","outcome":"stalled","reason":"...","rule":"..."}} (a stop must say its outcome: Java
 * holds no default).
 *
 * <p>An exception, a {@code null} or unparseable reply, or (when a deadline is configured) a reply that comes too
 * late counts as a callback failure: the run continues and the Java fail-safe cap still holds.
 *
 * <p>A callback that also implements {@link ResultsCallback} judges each call's tool results before the next call is
 * sent.
 */
@FunctionalInterface
public interface GuardCallback {
    String onIteration(String eventJson);

}
