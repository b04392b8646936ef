package dev.pyguard.bridge;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.service.tool.BeforeToolExecution;
import dev.langchain4j.service.tool.ToolExecution;

import java.util.function.Consumer;

/**
 * The tool hooks of a guarded model, which {@link Agents}, {@link ConversationAgents} and {@link ExplicitAgentLoop}
 * wire into the agents they build: one run's {@link GuardedChatModel}, or an agent's {@link AgentGuardedChatModel}
 * (the hooks then act on the run of the calling thread).
 */
public interface ToolGuard {

    /**
     * For {@code AiServices.beforeToolExecution}: refuses to run the tools of the last response (throws
     * {@link GuardStopException}) when the run cannot call the model again.
     */
    default void beforeToolExecution(BeforeToolExecution before) {
        checkBeforeTool(before == null ? null : before.request());
    }

    /**
     * {@link #beforeToolExecution} typed only with LangChain4j's and the JDK's interfaces, for an AiServices agent you
     * build yourself: {@code AiServices.builder(MyAgent.class).chatModel(model).beforeToolExecution(hook)}. Your code
     * then needs no pyguard type at compile time (receive it as a {@code Consumer<BeforeToolExecution>}); with it, a
     * stop keeps the tools of the last response from running (without it they run, and the next model call is
     * refused). From Python: {@code GuardedRun.before_tool_execution()}, {@code AgentGuard.before_tool_execution()}.
     */
    default Consumer<BeforeToolExecution> beforeToolExecutionHook() { return this::beforeToolExecution; }

    /** Counts executed tools (for {@link RunStats#toolExecutions()}): pass it to {@code afterToolExecution(...)}. */
    default Consumer<ToolExecution> afterToolExecutionHook() { return this::afterToolExecution; }

    /** The same check for a loop that runs its tools itself ({@link ExplicitAgentLoop}). */
    void checkBeforeTool(ToolExecutionRequest request);

    /** For {@code AiServices.afterToolExecution}: counts a tool that ran. */
    void afterToolExecution(ToolExecution execution);

    /** Counts a tool that ran, for loops that run their tools themselves. */
    void recordToolExecution();

    /** The run's guarded model serving the calling thread now (its counters, its run id), or null. */
    GuardedChatModel currentRun();
}
