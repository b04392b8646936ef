package dev.pyguard.bridge;

/**
 * One agent of one of the three styles, built by {@link Agents} around a (guarded) chat model. {@link #run(String)}
 * never throws for what happens inside the run: stops, errors and exhaustion come back in the result.
 */
public interface GuardedAgent {

    /** {@code aiservices}, {@code agentic} or {@code executor}. */
    String style();

    AgentRunResult run(String task);

    /** {@link #run(String)} and {@link AgentRunResult#toJson()} in one crossing. */
    default String runJson(String task) { return run(task).toJson(); }
}
