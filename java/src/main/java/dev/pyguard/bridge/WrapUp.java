package dev.pyguard.bridge;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.TokenUsage;

import java.util.ArrayList;
import java.util.List;

/**
 * The wrap-up of a stopped run (an actuator: Python says when, and with which instruction): one last model call with
 * no tools, on the conversation so far plus the instruction, so that the run ends with the best answer the model can
 * give from what it knows. The tools the model asked for last are answered "not run" ({@link #NOT_RUN}).
 *
 * <p>{@link #toJson()} is what Python reads ({@code pyguard.jvm.agents.WrapUpRecord}).
 *
 * @param outcome  the stop's outcome ({@code stalled}, {@code expired}, ...)
 * @param reason   why the run stopped
 * @param rule     the stop's rule ({@code failsafe_cap}, {@code agent_cap}, or the guard's)
 * @param failSafe true when the Java fail-safe cap stopped the run
 * @param text     the model's answer (null when the wrap-up call failed)
 * @param error    why the wrap-up call failed, or null
 */
public record WrapUp(String outcome, String reason, String rule, boolean failSafe, String text, String error,
                     Integer inputTokens, Integer outputTokens, Integer totalTokens) {

    /** The result of each tool call of the stopped response (its tools never ran). */
    public static final String NOT_RUN = "[pyguard] not run: the run was stopped before this tool ran";

    private static final ObjectMapper MAPPER = new ObjectMapper();

    /**
     * The tool-less request: {@code messages}, then {@code last} (the stopped response, its tool calls answered
     * {@link #NOT_RUN}), then the instruction ({@code {reason}} replaced by the stop's reason).
     */
    static ChatRequest request(List<ChatMessage> messages, AiMessage last, String instruction, String reason) {
        List<ChatMessage> out = new ArrayList<>(messages);
        if (last != null) {
            out.add(last);
            if (last.hasToolExecutionRequests()) {
                for (ToolExecutionRequest r : last.toolExecutionRequests()) out.add(ToolExecutionResultMessage.from(r, NOT_RUN));
            }
        }
        out.add(UserMessage.from(instruction.replace("{reason}", reason == null ? "" : reason)));
        return ChatRequest.builder().messages(out).build();
    }

    /** Makes the call on {@code model} (the user's model, not the guard) for the stop {@code stop}. */
    static WrapUp call(ChatModel model, ChatRequest request, GuardStopException stop) {
        try {
            ChatResponse r = model.chat(request);
            AiMessage ai = r == null ? null : r.aiMessage();
            TokenUsage u = r == null ? null : r.tokenUsage();
            String text = ai == null || ai.text() == null ? "" : ai.text();
            return new WrapUp(stop.outcome(), stop.reason(), stop.rule(), stop.failSafe(), text, null,
                    u == null ? null : u.inputTokenCount(), u == null ? null : u.outputTokenCount(),
                    u == null ? null : u.totalTokenCount());
        } catch (RuntimeException e) {
            return new WrapUp(stop.outcome(), stop.reason(), stop.rule(), stop.failSafe(), null,
                    GuardSensor.describe(e), null, null, null);
        }
    }

    /** The answer as LangChain4j's loops read a final response: text, no tool requests. */
    ChatResponse response() {
        AiMessage ai = AiMessage.from(text == null ? "" : text);
        ChatResponse.Builder b = ChatResponse.builder().aiMessage(ai);
        if (inputTokens != null || outputTokens != null) b.tokenUsage(new TokenUsage(inputTokens, outputTokens, totalTokens));
        return b.build();
    }

    public String toJson() {
        ObjectNode o = MAPPER.createObjectNode();
        o.put("outcome", outcome);
        o.put("reason", GuardSensor.clean(reason));
        o.put("rule", rule);
        o.put("fail_safe", failSafe);
        o.put("text", GuardSensor.clean(text));
        o.put("error", GuardSensor.clean(error));
        o.put("input_tokens", inputTokens);
        o.put("output_tokens", outputTokens);
        o.put("total_tokens", totalTokens);
        return o.toString();
    }
}
