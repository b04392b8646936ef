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

    /**
     * A conversation: each user message in turn, each answered before the next (the AiServices style: one
     * {@code chat()} call per message, one chat memory). The result's answer is the last one. Other styles run one task.
     */
    default AgentRunResult runTurns(java.util.List<String> userMessages) {
        if (userMessages.size() == 1) return run(userMessages.get(0));
        throw new UnsupportedOperationException("the " + style() + " style runs one task; a conversation of "
                + userMessages.size() + " user messages needs the aiservices style");
    }

    /** {@link #runTurns(java.util.List)} and {@link AgentRunResult#toJson()} in one crossing. */
    default String runTurnsJson(java.util.List<String> userMessages) { return runTurns(userMessages).toJson(); }
}
