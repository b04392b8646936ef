package dev.pyguard.bridge;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.service.tool.ToolExecutionResult;
import dev.langchain4j.service.tool.ToolExecutor;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * pyguard's plain tool-calling loop, for users who write their own loop: a {@link ChatModel}, tools, and
 * {@code maxIterations}.
 *
 * <p>Semantics: at most {@code maxIterations} model calls. Each response with tool calls has its tools executed
 * (in order) and their results appended, unless it was the last allowed model call: then the tools are not run (no
 * model call would read their results) and the run ends {@code exhausted}. A tool that throws, has malformed
 * arguments or does not exist yields an error result ({@code isError=true}) that goes back to the model; the loop
 * never dies of a tool. With a {@link GuardedChatModel}, a pending STOP (or the fail-safe) ends the run before the
 * next model call and before the tools of the last response.
 */
public final class ExplicitAgentLoop implements GuardedAgent {

    private final ChatModel model;
    private final Map<String, ToolExecutor> executors = new HashMap<>();
    private final List<ToolSpecification> specs = new ArrayList<>();
    private final int maxIterations;
    private final String systemMessage;

    public ExplicitAgentLoop(ChatModel model, ToolSet tools, int maxIterations, String systemMessage) {
        if (maxIterations < 1) throw new IllegalArgumentException("maxIterations=" + maxIterations + " must be at least 1");
        this.model = model;
        this.maxIterations = maxIterations;
        this.systemMessage = systemMessage;
        tools.asMap().forEach((spec, exec) -> {
            specs.add(spec);
            executors.put(spec.name(), exec);
        });
    }

    @Override
    public String style() { return "executor"; }

    @Override
    public AgentRunResult run(String task) {
        long t0 = System.nanoTime();
        ToolGuard guarded = model instanceof ToolGuard g ? g : null;
        List<ChatMessage> messages = new ArrayList<>();
        if (systemMessage != null && !systemMessage.isBlank()) messages.add(SystemMessage.from(systemMessage));
        messages.add(UserMessage.from(task));
        int calls = 0;
        try {
            while (true) {
                ChatRequest.Builder req = ChatRequest.builder().messages(messages);
                if (!specs.isEmpty()) req.toolSpecifications(specs);
                AiMessage ai = model.chat(req.build()).aiMessage();
                calls++;
                messages.add(ai);
                if (!ai.hasToolExecutionRequests()) {
                    return AgentRunResult.answered(style(), model, t0, ai.text(), calls);
                }
                if (calls >= maxIterations) {
                    return AgentRunResult.exhausted(style(), model, t0, null, calls);
                }
                for (ToolExecutionRequest r : ai.toolExecutionRequests()) {
                    if (guarded != null) guarded.checkBeforeTool(r);
                    messages.add(execute(r));
                    if (guarded != null) guarded.recordToolExecution();
                }
            }
        } catch (Throwable e) {
            return AgentRunResult.ofError(style(), model, t0, e, calls);
        }
    }

    private ToolExecutionResultMessage execute(ToolExecutionRequest r) {
        ToolExecutor exec = executors.get(r.name());
        String text;
        boolean error = false;
        if (exec == null) {
            text = "Error: there is no tool named '" + r.name() + "'. Available tools: " + executors.keySet();
            error = true;
        } else {
            try {
                ToolExecutionResult result = exec.executeWithContext(r, InvocationContext.builder().build());
                text = result.resultText();
                if (text == null) text = "";
                error = result.isError();
            } catch (GuardStopException e) {
                throw e;
            } catch (Exception e) {
                Throwable c = e.getCause() != null ? e.getCause() : e;
                text = "Error: " + (c.getMessage() == null ? c.getClass().getSimpleName() : c.getMessage());
                error = true;
            }
        }
        return ToolExecutionResultMessage.builder().id(r.id()).toolName(r.name()).text(text).isError(error).build();
    }
}
