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

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
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
 *   <li><b>watched</b>: your agent wrapped by {@link #watch}: every call of its interface methods is one run, ended
 *       when the method returns or throws, however the agent's loop ended (LangChain4j's own round-trip cap
 *       included, told or not).</li>
 *   <li><b>implicit</b>: a model call on a thread with no run, or one whose request starts a new user turn (a user
 *       message after the last AI message), opens a run. It ends when the model answers (a response without tool
 *       requests), when its guard stops it, or when the model call fails; a turn the agent ended some other way
 *       (LangChain4j's own round-trip cap when Python was not told it, an exception outside the model) ends when the
 *       next turn begins on that thread, or when Python closes the guard: the model cannot see that end (the cap's
 *       exception is thrown after the last response's tools ran, with no further model call), {@link #watch} can.
 *       Python hears each ending through {@link Runs#ended}.</li>
 * </ul>
 *
 * <p>How a turn ended, for Java code that holds the agent: {@link #lastOutcome()} (the calling thread's last ended
 * turn, a {@link GuardOutcome}), or a listener ({@link #addOutcomeListener}) that hears every turn as it ends, the way
 * LangChain4j's own listeners hear model calls.
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
         * Returns how the run ended (null: Python knows no such run).
         */
        GuardOutcome ended(String runId, String answer, Throwable error);
    }

    private record Binding(GuardedChatModel run, boolean explicit) {}

    private final ChatModel delegate;
    private final Runs runs;
    private final ThreadLocal<Binding> bound = new ThreadLocal<>();
    private final Set<GuardedChatModel> open = ConcurrentHashMap.newKeySet();
    private final ThreadLocal<GuardOutcome> last = new ThreadLocal<>();
    private final List<Consumer<GuardOutcome>> outcomeListeners = new CopyOnWriteArrayList<>();
    private volatile String closed;
    private volatile int agentRoundTrips;

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
        int cap = agentRoundTrips;
        if (!b.explicit() && cap > 0 && b.run().modelCalls() > cap) {
            finish(b, null, capEnds(cap));  // LangChain4j throws next, whatever this response says
        } else if (!b.explicit() && (ai == null || !ai.hasToolExecutionRequests())) {
            finish(b, ai == null || ai.text() == null ? "" : ai.text(), null);
        }
        return response;
    }

    /**
     * The agent's own cap on tool-calling round trips per user turn (LangChain4j's {@code maxToolCallingRoundTrips}),
     * when Python was told it (0: unknown). LangChain4j 1.19 counts a round trip before it looks at a response, so it
     * throws right after model call {@code cap + 1} of a turn returns, whatever that call answered: an implicit run
     * ends there, as the agent's own cap. Nothing is done to the call (observe mode acts on nothing); a guard that
     * answers the cap's end stops the run one call earlier ({@link GuardedChatModel#answerOnStop}).
     */
    public void agentRoundTrips(int cap) { agentRoundTrips = Math.max(0, cap); }

    private static RuntimeException capEnds(int cap) {
        return new IllegalStateException("the agent's own cap ended this turn: LangChain4j throws after model call "
                + (cap + 1) + " (exceeded " + cap + " tool calling round trips (maxToolCallingRoundTrips))");
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
        GuardOutcome outcome = runs.ended(b.run().runId(), answer, error);
        open.remove(b.run());  // only once Python heard it: else close() still finds it open
        if (outcome != null) {
            last.set(outcome);
            tell(outcome);
        }
    }

    // -- how a turn ended, for the Java code that holds the agent ------------------------------------------------

    /**
     * How the last user turn that ended on the calling thread ended (a model call made there, or a {@link #watch
     * watched} agent's method called there), or null when none has. Read it after your agent's {@code chat()}
     * returned or threw: the turn has ended by then when the model answered, the guard stopped it, a model call
     * failed, or the agent is {@link #watch watched} (or Python was told its round-trip cap).
     */
    public GuardOutcome lastOutcome() { return last.get(); }

    /**
     * Calls {@code listener} with every turn's {@link GuardOutcome} as it ends, on the thread that ended it (the agent's,
     * or the one that closed the guard), however it ended. Its exceptions are caught and ignored, as LangChain4j does
     * with its listeners': a listener cannot break a run. Returns this model.
     */
    public AgentGuardedChatModel addOutcomeListener(Consumer<GuardOutcome> listener) {
        outcomeListeners.add(Objects.requireNonNull(listener, "listener"));
        return this;
    }

    public void removeOutcomeListener(Consumer<GuardOutcome> listener) { outcomeListeners.remove(listener); }

    /** A run Python ended itself (a bound run, or one the guard's close() ended): the listeners hear it. */
    public void publish(GuardOutcome outcome) { tell(Objects.requireNonNull(outcome, "outcome")); }

    private void tell(GuardOutcome outcome) {
        for (Consumer<GuardOutcome> l : outcomeListeners) {
            try {
                l.accept(outcome);
            } catch (RuntimeException ignored) {  // a listener's failure is its own (LangChain4j's listener rule)
            }
        }
    }

    /**
     * {@code agent} (your AiServices agent, built around this model) seen from outside: every call of one of its
     * interfaces' methods on the returned object is one guarded run, ended when the method returns (its value is the
     * answer) or throws (a {@link GuardStopException}: the guard's stop; LangChain4j's round-trip cap: the agent's own
     * cap, outcome {@code expired}; any other: {@code failed}), so no run stays open after the call, whether or not
     * Python was told the agent's cap. The exception, if any, is thrown on as it was. A call made while another is
     * running on the same thread (an agent calling another) belongs to the outer one.
     */
    @SuppressWarnings("unchecked")
    public <T> T watch(T agent) {
        Objects.requireNonNull(agent, "agent");
        Class<?>[] types = agent.getClass().getInterfaces();
        if (types.length == 0) {
            throw new IllegalArgumentException("watch(agent): " + agent.getClass().getName() + " implements no"
                    + " interface; pass the agent AiServices built (AiServices.builder(MyAgent.class)...build())");
        }
        InvocationHandler handler = (proxy, method, args) -> watched(agent, method, args);
        return (T) Proxy.newProxyInstance(agent.getClass().getClassLoader(), types, handler);
    }

    private Object watched(Object agent, Method method, Object[] args) throws Throwable {
        if (method.getDeclaringClass() == Object.class || bound.get() != null && bound.get().explicit()) {
            return invoke(agent, method, args);
        }
        String why = closed;
        if (why != null) throw new IllegalStateException(why);
        Binding prev = bound.get();
        if (prev != null) finish(prev, null, null);  // an implicit run left open on this thread ended outside the model
        GuardedChatModel run = runs.open(firstText(args));
        if (run == null) throw new IllegalStateException("the guard opened no run for this user turn");
        Binding b = new Binding(run, true);
        open.add(run);
        bound.set(b);
        Object value;
        try {
            value = invoke(agent, method, args);
        } catch (Throwable t) {
            finish(b, null, interrupted(t) ? cancelled(run) : t);
            throw t;
        }
        finish(b, value == null ? null : String.valueOf(value), null);
        return value;
    }

    private static Object invoke(Object agent, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(agent, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    private static String firstText(Object[] args) {
        if (args == null) return null;
        for (Object a : args) {
            if (a instanceof CharSequence cs) return cs.toString();
        }
        return null;
    }

    /**
     * True when {@code e} is LangChain4j's own round-trip cap ending an AiServices call ("exceeded N tool calling
     * round trips (maxToolCallingRoundTrips)"): the agent's loop ran out, which is not a failure.
     */
    public static boolean agentCapEnded(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (Agents.exceededRoundTrips(c)) return true;
        }
        return false;
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
