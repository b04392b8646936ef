package dev.pyguard.bridge;

import dev.langchain4j.agentic.AgenticServices;
import dev.langchain4j.agentic.UntypedAgent;
import dev.langchain4j.agentic.agent.AgentBuilder;
import dev.langchain4j.agentic.observability.AfterAgentToolExecution;
import dev.langchain4j.agentic.observability.AgentListener;
import dev.langchain4j.agentic.observability.AgentRequest;
import dev.langchain4j.agentic.observability.BeforeAgentToolExecution;
import dev.langchain4j.agentic.scope.AgenticScope;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.service.AiServices;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Factories for the three agent styles, so Python never has to implement LangChain4j interfaces. Each takes any
 * {@link ChatModel}; when it is a {@link GuardedChatModel} the guard's tool hooks are wired as follows:
 *
 * <ul>
 *   <li><b>aiservices</b>: {@code AiServices} with the tools; the guard acts before each model call (the decorated
 *       model) and through {@code beforeToolExecution}, so a pending STOP also keeps the tools of the last response
 *       from running. LangChain4j's own cap {@code maxToolCallingRoundTrips} still applies (100 by default).</li>
 *   <li><b>agentic</b>: {@code AgenticServices.loopBuilder()} around a {@link LoopWorker} sub-agent built on the
 *       model; the guard acts before each model call and, through an {@code AgentListener}'s
 *       {@code beforeAgentToolExecution} (which LangChain4j lets propagate), before tools. One run = one guarded
 *       model across all loop iterations.</li>
 *   <li><b>executor</b>: {@link ExplicitAgentLoop}; it calls the guard's tool hook itself.</li>
 * </ul>
 */
public final class Agents {

    /** The AiServices agent's chat memory holds a whole conversation (several user messages, each a chat() call). */
    static final int CONVERSATION_MESSAGES = 100_000;

    private Agents() {}

    /** An AiServices agent with a fresh chat memory: {@link ConversationAgents#blocking}, the one AiServices wiring. */
    public static GuardedAgent aiServices(ChatModel model, ToolSet tools, int maxToolCallingRoundTrips, String systemMessage) {
        return ConversationAgents.blocking(model, tools, maxToolCallingRoundTrips, systemMessage, null);
    }

    /**
     * AiServices signals its own cap with a plain RuntimeException, "Something is wrong, exceeded N tool calling round
     * trips (maxToolCallingRoundTrips)" (LangChain4j 1.19.0): the loop's own cap ran out, which is not a failure.
     */
    static boolean exceededRoundTrips(Throwable e) {
        return e instanceof RuntimeException && e.getMessage() != null
                && e.getMessage().contains("(maxToolCallingRoundTrips)");
    }

    /**
     * @param exitWhenAnswerContains null: exit after the first non-blank answer; "": never exit early (run all
     *                               {@code maxIterations}); otherwise exit once the answer contains this text
     */
    public static GuardedAgent agenticLoop(ChatModel model, ToolSet tools, int maxIterations, int maxToolCallingRoundTrips,
                                           String exitWhenAnswerContains, String systemMessage) {
        if (maxIterations < 1) throw new IllegalArgumentException("maxIterations=" + maxIterations + " must be at least 1");
        if (maxToolCallingRoundTrips < 1) {
            throw new IllegalArgumentException("maxToolCallingRoundTrips=" + maxToolCallingRoundTrips + " must be at least 1");
        }
        return new GuardedAgent() {
            @Override public String style() { return "agentic"; }
            @Override public AgentRunResult run(String task) {
                long t0 = System.nanoTime();
                AtomicInteger iterations = new AtomicInteger();
                try {
                    UntypedAgent loop = build(model, tools, maxIterations, maxToolCallingRoundTrips, exitWhenAnswerContains,
                            systemMessage, iterations);
                    Object out = loop.invoke(Map.of("request", task));
                    String answer = out == null ? null : out.toString();
                    return answer != null && !answer.isBlank() && exits(answer, exitWhenAnswerContains)
                            ? AgentRunResult.answered(style(), model, t0, answer, iterations.get())
                            : AgentRunResult.exhausted(style(), model, t0, null, iterations.get());
                } catch (Throwable e) {
                    return AgentRunResult.ofError(style(), model, t0, e, iterations.get());
                }
            }
        };
    }

    private static boolean exits(String answer, String marker) {
        if (answer == null || answer.isBlank()) return false;
        if (marker == null) return true;
        if (marker.isEmpty()) return false;
        return answer.contains(marker);
    }

    private static UntypedAgent build(ChatModel model, ToolSet tools, int maxIterations, int maxRoundTrips, String marker,
                                      String systemMessage, AtomicInteger iterations) {
        ToolGuard g = model instanceof ToolGuard tg ? tg : null;
        AgentBuilder<LoopWorker, ?> wb = AgenticServices.agentBuilder(LoopWorker.class)
                .chatModel(model)
                .maxToolCallingRoundTrips(maxRoundTrips)
                .outputKey("answer")
                .listener(new AgentListener() {
                    @Override public void beforeAgentInvocation(AgentRequest request) { iterations.incrementAndGet(); }
                    @Override public void beforeAgentToolExecution(BeforeAgentToolExecution before) {
                        if (g != null) g.beforeToolExecution(before.toolExecution());
                    }
                    @Override public void afterAgentToolExecution(AfterAgentToolExecution after) {
                        if (g != null) g.recordToolExecution();
                    }
                });
        if (!tools.objects().isEmpty()) wb.tools(tools.objects().toArray());
        if (!tools.explicitTools().isEmpty()) wb.tools(tools.explicitTools());
        if (systemMessage != null && !systemMessage.isBlank()) wb.systemMessage(systemMessage);
        LoopWorker worker = wb.build();
        return AgenticServices.loopBuilder()
                .subAgents(worker)
                .maxIterations(maxIterations)
                .exitCondition((AgenticScope scope) -> exits(String.valueOf(scope.readState("answer", "")), marker))
                .outputKey("answer")
                .build();
    }

    public static GuardedAgent explicit(ChatModel model, ToolSet tools, int maxIterations, String systemMessage) {
        return new ExplicitAgentLoop(model, tools, maxIterations, systemMessage);
    }

    /**
     * By name: {@code aiservices}, {@code agentic} or {@code executor}; {@code limit} is the style's own cap; {@code tools}
     * null: the model's own ({@link ToolSet#ownedBy}), so that Python builds a run's agent in one call.
     */
    public static GuardedAgent build(String style, ChatModel model, ToolSet tools, int limit, int maxToolCallingRoundTrips,
                                     String exitWhenAnswerContains, String systemMessage) {
        return build(style, model, tools, limit, maxToolCallingRoundTrips, exitWhenAnswerContains, systemMessage, false);
    }

    /**
     * @param perRunMemory aiservices: a chat memory per run ({@link ConversationAgents#perRun}: an agent built once
     *                     for many runs, on any thread) instead of one conversation for the agent's life
     */
    public static GuardedAgent build(String style, ChatModel model, ToolSet tools, int limit, int maxToolCallingRoundTrips,
                                     String exitWhenAnswerContains, String systemMessage, boolean perRunMemory) {
        if (tools == null) tools = ToolSet.ownedBy(model);
        return switch (style) {
            case "aiservices" -> perRunMemory
                    ? ConversationAgents.perRun(model, tools, maxToolCallingRoundTrips, systemMessage)
                    : aiServices(model, tools, maxToolCallingRoundTrips, systemMessage);
            case "agentic" -> agenticLoop(model, tools, limit, maxToolCallingRoundTrips, exitWhenAnswerContains, systemMessage);
            case "executor" -> explicit(model, tools, limit, systemMessage);
            default -> throw new IllegalArgumentException("agent style '" + style + "' is unknown; use aiservices, agentic or executor");
        };
    }
}
