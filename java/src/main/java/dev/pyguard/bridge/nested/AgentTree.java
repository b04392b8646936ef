package dev.pyguard.bridge.nested;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.langchain4j.agentic.agent.ErrorContext;
import dev.langchain4j.agentic.agent.ErrorRecoveryResult;
import dev.langchain4j.agentic.observability.AfterAgentToolExecution;
import dev.langchain4j.agentic.observability.AgentInvocationError;
import dev.langchain4j.agentic.observability.AgentListener;
import dev.langchain4j.agentic.observability.AgentRequest;
import dev.langchain4j.agentic.observability.AgentResponse;
import dev.langchain4j.agentic.observability.BeforeAgentToolExecution;
import dev.langchain4j.model.chat.ChatModel;
import dev.pyguard.bridge.GuardConfig;
import dev.pyguard.bridge.GuardedChatModel;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The JVM half of a run tree over a LangChain4j agentic system (supervisor, sequence, loop, ...): an
 * {@link AgentListener} on each routed sub-agent that opens a child run when an invocation begins and closes it when it
 * ends, plus an error handler that lets a child stopped by its guard hand its parent a result instead of ending the
 * whole system. Everything that decides (budgets, stalls, the recovery text) happens in Python behind
 * {@link AgentTreeCallback}.
 *
 * <pre>{@code
 * AgentTree tree = new AgentTree(callback);
 * Worker w = AgenticServices.agentBuilder(Worker.class).name("tracker")
 *         .chatModel(tree.childModel("tracker", myModel)).listener(tree).build();
 * SupervisorAgent s = AgenticServices.supervisorBuilder().chatModel(guardedPlanner).subAgents(w, ...)
 *         .errorHandler(tree.errorHandler()).build();
 * }</pre>
 */
public final class AgentTree implements AgentListener {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final AgentTreeCallback callback;
    private final Map<String, RoutingChatModel> models = new ConcurrentHashMap<>();

    public AgentTree(AgentTreeCallback callback) {
        this.callback = Objects.requireNonNull(callback, "callback");
    }

    /** The model to build sub-agent {@code agentName} with: each of its invocations becomes a child run on {@code base}. */
    public ChatModel childModel(String agentName, ChatModel base) {
        RoutingChatModel m = new RoutingChatModel(agentName, base);
        if (models.putIfAbsent(agentName, m) != null) {
            throw new IllegalArgumentException("sub-agent name '" + agentName + "' is routed twice; give each sub-agent its own name");
        }
        return m;
    }

    public boolean routes(String agentName) { return models.containsKey(agentName); }

    @Override
    public void beforeAgentInvocation(AgentRequest request) {
        RoutingChatModel m = models.get(request.agentName());
        if (m == null) return;
        ChatModel target;
        try {
            target = callback.openChild(request.agentName(), inputsJson(request.inputs()), m.base());
            if (target == null) target = m.base();
        } catch (RuntimeException e) {
            // Fail-safe: the guard could not open the child run; the invocation still runs under the Java cap.
            target = new GuardedChatModel(m.base(), GuardConfig.of(request.agentName() + "-unguarded"), null);
        }
        m.route(target);
    }

    @Override
    public void afterAgentInvocation(AgentResponse response) {
        RoutingChatModel m = models.get(response.agentName());
        if (m == null) return;
        m.route(null);
        callback.closeChild(response.agentName(), response.output(), null);
    }

    @Override
    public void onAgentInvocationError(AgentInvocationError error) {
        RoutingChatModel m = models.get(error.agentName());
        if (m == null) return;
        m.route(null);
        callback.closeChild(error.agentName(), null, error.error());
    }

    @Override
    public void beforeAgentToolExecution(BeforeAgentToolExecution before) {
        GuardedChatModel g = guardedOf(before.agentInstance() == null ? null : before.agentInstance().name());
        if (g != null) g.beforeToolExecution(before.toolExecution());
    }

    @Override
    public void afterAgentToolExecution(AfterAgentToolExecution after) {
        GuardedChatModel g = guardedOf(after.agentInstance() == null ? null : after.agentInstance().name());
        if (g != null) g.recordToolExecution();
    }

    private GuardedChatModel guardedOf(String agentName) {
        RoutingChatModel m = agentName == null ? null : models.get(agentName);
        return m == null ? null : m.guarded();
    }

    /** For {@code errorHandler(...)} of a supervisor or workflow: a child stopped by its guard hands back a result. */
    public Function<ErrorContext, ErrorRecoveryResult> errorHandler() {
        return ctx -> {
            if (!models.containsKey(ctx.agentName())) return ErrorRecoveryResult.throwException();
            String text = callback.recovery(ctx.agentName(), ctx.exception());
            return text == null ? ErrorRecoveryResult.throwException() : ErrorRecoveryResult.result(text);
        };
    }

    static String inputsJson(Map<String, Object> inputs) {
        Map<String, Object> plain = new LinkedHashMap<>();
        if (inputs != null) inputs.forEach((k, v) -> plain.put(k, v == null || v instanceof Number || v instanceof Boolean ? v : String.valueOf(v)));
        try {
            return MAPPER.writeValueAsString(plain);
        } catch (Exception e) {
            return "{}";
        }
    }
}
