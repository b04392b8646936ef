package dev.pyguard.bridge;

/**
 * An AiServices agent whose conversation (its chat memory) can be read after a run and given to a new agent, so that
 * a run ended by the guard (e.g. escalated to a human) can go on later, in this process or another one.
 */
public interface ConversationAgent extends GuardedAgent {

    /**
     * The conversation so far as LangChain4j's message JSON ({@code ChatMessageSerializer}). A last AI message whose
     * tool calls never ran (the guard refused them) is left out, with anything after it: a conversation must not end
     * in tool calls without results, or the next request would be rejected by a provider.
     */
    String memoryJson();

    /** True for the streaming style (the model is a {@code StreamingChatModel}, the interface returns a TokenStream). */
    boolean streaming();
}
