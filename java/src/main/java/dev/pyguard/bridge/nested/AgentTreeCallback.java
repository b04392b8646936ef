package dev.pyguard.bridge.nested;

import dev.langchain4j.model.chat.ChatModel;

/**
 * Implemented in Python ({@code pyguard.jvm.nested}): the run tree's side of a multi-agent system. Java calls it around
 * every invocation of a routed sub-agent (see {@link AgentTree}); it holds no policy itself.
 */
public interface AgentTreeCallback {

    /**
     * A sub-agent invocation begins: open its child run and return the {@link ChatModel} its model calls go through
     * (the child run's {@code GuardedChatModel} around {@code base}, the model the sub-agent was built with).
     * {@code inputsJson} is the invocation's arguments as a JSON object.
     */
    ChatModel openChild(String agentName, String inputsJson, ChatModel base);

    /** The invocation ended: {@code output} is its result (null on error), {@code error} what it threw (or null). */
    void closeChild(String agentName, Object output, Throwable error);

    /**
     * The text that stands for a failed invocation in its parent's view (the sub-agent's result), or null to let the
     * error propagate (the whole system then ends).
     */
    String recovery(String agentName, Throwable error);
}
