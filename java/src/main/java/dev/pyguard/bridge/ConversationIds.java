package dev.pyguard.bridge;

import dev.langchain4j.model.chat.request.ChatRequest;

import java.util.function.BiFunction;

/**
 * Which conversation (chat-memory id) the model call about to start on this thread serves: LangChain4j hands an
 * AiServices agent's memory id to its {@code chatRequestTransformer} before every model call of its tool loop, and the
 * model itself never sees it. {@link #hook()} is that transformer (it returns the request unchanged); Python reads
 * {@link #current()} on the same thread when the call opens a run, so a guard attached to the agent keeps one
 * conversation budget per memory id. Without the hook, {@link #current()} is null (the conversation is the thread's).
 */
public final class ConversationIds {

    private final ThreadLocal<Object> current = new ThreadLocal<>();

    /**
     * For {@code AiServices.builder(...).chatRequestTransformer(hook)}: records the memory id of each model call on the
     * calling thread; the request goes on as it is.
     */
    public BiFunction<ChatRequest, Object, ChatRequest> hook() {
        return (request, memoryId) -> {
            current.set(memoryId);
            return request;
        };
    }

    /** The memory id the last model call on this thread was made for, as text; null when none was recorded. */
    public String current() {
        Object id = current.get();
        return id == null ? null : String.valueOf(id);
    }

    /** Forget this thread's memory id. */
    public void clear() { current.remove(); }
}
