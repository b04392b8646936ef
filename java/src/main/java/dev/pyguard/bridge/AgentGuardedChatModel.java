package dev.pyguard.bridge;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.ModelProvider;
import dev.langchain4j.model.chat.Capability;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.ChatRequestOptions;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.service.tool.ToolExecution;

import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * A guard attached to an agent for its lifetime (the actuator; the policy is Python's). Build the agent once around
 * this model; every user turn of the agent (every {@code chat()} call) is a run of its own, served by its own
 * {@link GuardedChatModel} (sensor, decisions, fail-safe) that Python opens through {@link Runs}. Runs are kept apart
 * per thread: concurrent calls on one agent from several threads are separate runs.
 *
 * <p>Where a run begins and ends:
 * <ul>
 *   <li><b>bound</b>: {@link #bind} and {@link #unbind} around one agent call on the calling thread (pyguard's own
 *       agents; Python's {@code AgentGuard.turn}): every model call between them is that run's.</li>
 *   <li><b>implicit</b>: a model call on a thread with no run, or one whose request starts a new user turn (a user
 *       message after the last AI message), opens a run. It ends when the model answers (a response without tool
 *       requests), when its guard stops it, or when the model call fails; a turn the agent ended some other way
 *       (LangChain4j's own round-trip cap, an exception outside the model) ends when the next turn begins on that
 *       thread, or when Python closes the guard. Python hears each ending through {@link Runs#ended}.</li>
 * </ul>
 *
 * <p>Its tool hooks ({@link ToolGuard}) act on the run of the calling thread. It has no listeners of its own: each
 * run's model senses its calls.
 */
public final class AgentGuardedChatModel implements ChatModel, ToolGuard {

    /** Python's side (JPype {@code @JImplements}): opens a run per user turn, hears how an implicit run ended. */
    public interface Runs {
        /** The guarded model of a new run around the delegate, for a user turn that began with {@code userMessage}. */
        GuardedChatModel open(String userMessage);

        /**
         * An implicit run ended: the model answered ({@code answer}), or a model call or a tool hook threw
         * ({@code error}, a {@link GuardStopException} for a stop), or neither: the turn ended outside the model.
         */
        void ended(String runId, String answer, Throwable error);
    }

    private record Binding(GuardedChatModel run, boolean explicit) {}

    private final ChatModel delegate;
    private final Runs runs;
    private final ThreadLocal<Binding> bound = new ThreadLocal<>();
    private final Set<GuardedChatModel> open = ConcurrentHashMap.newKeySet();
    private volatile String closed;

    public AgentGuardedChatModel(ChatModel delegate, Runs runs) {
        this.delegate = Objects.requireNonNull(delegate, "delegate ChatModel");
        this.runs = Objects.requireNonNull(runs, "runs");
    }

    /** Binds {@code run} to the calling thread until {@link #unbind}; an implicit run still open there ends first. */
    public void bind(GuardedChatModel run) {
        Binding b = bound.get();
        if (b != null && !b.explicit()) finish(b, null, null);
        bound.set(new Binding(Objects.requireNonNull(run, "run"), true));
    }

    /** Ends the binding of the calling thread (the run itself is ended by Python). */
    public void unbind() { bound.remove(); }

    /**
     * The guard was closed: every later model call through this model throws {@link IllegalStateException} with
     * {@code why}; the implicit runs still open are returned (Python ends them).
     */
    public List<String> close(String why) {
        closed = why == null || why.isBlank() ? "this agent's guard was closed" : why;
        List<String> ids = open.stream().map(GuardedChatModel::runId).toList();
        open.clear();
        return ids;
    }

    /** The implicit runs open now, by run id. */
    public List<String> openRuns() { return open.stream().map(GuardedChatModel::runId).toList(); }

    @Override
    public ChatResponse chat(ChatRequest request) { return call(request, run -> run.chat(request)); }

    @Override
    public ChatResponse chat(ChatRequest request, ChatRequestOptions options) {
        return call(request, run -> run.chat(request, options));
    }

    private ChatResponse call(ChatRequest request, Function<GuardedChatModel, ChatResponse> how) {
        Binding b = route(request);
        ChatResponse response;
        try {
            response = how.apply(b.run());
        } catch (RuntimeException | Error e) {
            if (!b.explicit()) finish(b, null, interrupted(e) ? cancelled(b.run()) : e);
            throw e;
        }
        AiMessage ai = response == null ? null : response.aiMessage();
        if (!b.explicit() && (ai == null || !ai.hasToolExecutionRequests())) {
            finish(b, ai == null || ai.text() == null ? "" : ai.text(), null);
        }
        return response;
    }

    /** The calling thread's run for this request: its bound run, or a new one when a user turn begins. */
    private Binding route(ChatRequest request) {
        String why = closed;
        if (why != null) throw new IllegalStateException(why);
        Binding b = bound.get();
        if (b != null && b.run().isClosed()) {  // Python ended it meanwhile (the guard closed it, or it gave up)
            bound.remove();
            open.remove(b.run());
            b = null;
        }
        if (b != null && (b.explicit() || !startsTurn(request.messages()))) return b;
        if (b != null) finish(b, null, null);  // the last turn ended outside the model (e.g. the agent's own cap)
        GuardedChatModel run = runs.open(lastUserText(request.messages()));
        if (run == null) throw new IllegalStateException("the guard opened no run for this user turn");
        Binding nb = new Binding(run, false);
        open.add(run);
        bound.set(nb);
        return nb;
    }

    private void finish(Binding b, String answer, Throwable error) {
        if (bound.get() == b) bound.remove();
        if (!open.contains(b.run())) return;
        // A Ctrl-C on this thread (JPype turns Python's KeyboardInterrupt into a Java interrupt) must not keep Python
        // from hearing the end: the interrupt has reached Python already (the KeyboardInterrupt on its way to the
        // caller), so the flag is cleared, else every later call into Python on this thread would fail.
        Thread.interrupted();
        runs.ended(b.run().runId(), answer, error);
        open.remove(b.run());  // only once Python heard it: else close() still finds it open
    }

    /** True when {@code e} comes of an interrupt (a Ctrl-C reaching the agent's thread through JPype). */
    static boolean interrupted(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof InterruptedException) return true;
        }
        return false;
    }

    /**
     * Throws {@code t} as it is (for Python: JPype turns a Python exception that crossed into Java, such as a
     * {@code KeyboardInterrupt} raised in a callback on the agent's thread, back into itself when it is thrown).
     */
    public static void rethrow(Throwable t) { AgentGuardedChatModel.<RuntimeException>sneaky(t); }

    @SuppressWarnings("unchecked")
    private static <E extends Throwable> void sneaky(Throwable t) throws E { throw (E) t; }

    private static GuardStopException cancelled(GuardedChatModel run) {
        return new GuardStopException(run.runId(), "cancelled", "interrupted (Ctrl-C)", "cancel", false, run.stats());
    }

    /** True when the request begins a user turn: no AI message yet, or a user message after the last one. */
    static boolean startsTurn(List<ChatMessage> messages) {
        for (int i = messages.size() - 1; i >= 0; i--) {
            ChatMessage m = messages.get(i);
            if (m instanceof AiMessage) return false;
            if (m instanceof UserMessage u && !Reflections.isReflection(u)) return true;
        }
        return true;
    }

    private static String lastUserText(List<ChatMessage> messages) {
        for (int i = messages.size() - 1; i >= 0; i--) {
            if (messages.get(i) instanceof UserMessage u && !Reflections.isReflection(u)) return Messages.textOf(u.contents());
        }
        return null;
    }

    // -- the tool hooks, on the calling thread's run ------------------------------------------------------------

    @Override
    public void checkBeforeTool(ToolExecutionRequest request) {
        Binding b = bound.get();
        if (b == null) return;
        try {
            b.run().checkBeforeTool(request);
        } catch (GuardStopException e) {
            if (!b.explicit()) finish(b, null, e);
            throw e;
        }
    }

    @Override
    public void afterToolExecution(ToolExecution execution) {
        Binding b = bound.get();
        if (b != null) b.run().afterToolExecution(execution);
    }

    @Override
    public void recordToolExecution() {
        Binding b = bound.get();
        if (b != null) b.run().recordToolExecution();
    }

    @Override
    public GuardedChatModel currentRun() {
        Binding b = bound.get();
        return b == null ? null : b.run();
    }

    @Override
    public ModelProvider provider() { return delegate.provider(); }

    @Override
    public ChatRequestParameters defaultRequestParameters() { return delegate.defaultRequestParameters(); }

    @Override
    public Set<Capability> supportedCapabilities() { return delegate.supportedCapabilities(); }

    public ChatModel delegate() { return delegate; }
}
