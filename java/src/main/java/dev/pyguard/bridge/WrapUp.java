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
 * @param outcome   the stop's outcome ({@code stalled}, {@code expired}, ...)
 * @param reason    why the run stopped
 * @param rule      the stop's rule ({@code failsafe_cap}, {@code agent_cap}, or the guard's)
 * @param failSafe  true when the Java fail-safe cap stopped the run
 * @param text      the answer the agent gets: the model's, or the run's last text ({@code salvaged}); null when there
 *                  is none (the stop then throws)
 * @param error     why the wrap-up gave no answer of its own (its call failed, or it returned no text), or null
 * @param status    {@code answered} (the model answered), {@code failed} (the call threw), {@code no_text} (it
 *                  returned no text: an empty reply or a tool call only), {@code not_made} (a cap was crossed: no model
 *                  call after it), {@code stop_message} (no model call: the stop message, {@link #message})
 * @param errorKind the failure's kind: the exception's class name, {@code no_text} or {@code tool_call_only}; or null
 * @param salvaged  true when {@code text} is the run's last text, not the wrap-up's
 */
public record WrapUp(String outcome, String reason, String rule, boolean failSafe, String text, String error,
                     Integer inputTokens, Integer outputTokens, Integer totalTokens, String status, String errorKind,
                     boolean salvaged) {

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

    /**
     * Makes the call on {@code model} (the user's model, not the guard) for the stop {@code stop}. A call that fails or
     * returns no text falls back to {@code salvage} (the run's last text; null: none, the stop then throws).
     */
    static WrapUp call(ChatModel model, ChatRequest request, GuardStopException stop, String salvage) {
        try {
            ChatResponse r = model.chat(request);
            AiMessage ai = r == null ? null : r.aiMessage();
            TokenUsage u = r == null ? null : r.tokenUsage();
            Integer in = u == null ? null : u.inputTokenCount();
            Integer out = u == null ? null : u.outputTokenCount();
            Integer total = u == null ? null : u.totalTokenCount();
            if (ai == null || ai.text() == null || ai.text().isBlank()) {
                String kind = ai != null && ai.hasToolExecutionRequests() ? "tool_call_only" : "no_text";
                return new WrapUp(stop.outcome(), stop.reason(), stop.rule(), stop.failSafe(), salvage,
                        "the wrap-up returned no text (" + kind + ")", in, out, total, "no_text", kind, salvage != null);
            }
            return new WrapUp(stop.outcome(), stop.reason(), stop.rule(), stop.failSafe(), ai.text(), null, in, out,
                    total, "answered", null, false);
        } catch (RuntimeException e) {
            return new WrapUp(stop.outcome(), stop.reason(), stop.rule(), stop.failSafe(), salvage,
                    GuardSensor.describe(e), null, null, null, "failed", e.getClass().getName(), salvage != null);
        }
    }

    /** No wrap-up call: a cap was crossed ({@code cap:*} rule), so no model call is made after it; the run's last text. */
    static WrapUp notMade(GuardStopException stop, String salvage) {
        return new WrapUp(stop.outcome(), stop.reason(), stop.rule(), stop.failSafe(), salvage, null, null, null, null,
                "not_made", null, salvage != null);
    }

    /** The characters of the last tool result a stop message quotes ({@code {found}}). */
    public static final int FOUND_CHARS = 2000;

    /**
     * No model call: the stop message ({@code on_stop="end"}), {@code template} with {@code {outcome}}, {@code {rule}},
     * {@code {reason}} and {@code {found}} (the last tool result in {@code messages}) filled in; status
     * {@code stop_message}.
     */
    static WrapUp message(GuardStopException stop, String template, List<ChatMessage> messages) {
        String found = "";
        for (int i = messages.size() - 1; i >= 0; i--) {
            if (messages.get(i) instanceof ToolExecutionResultMessage t && t.text() != null) {
                found = t.text().length() > FOUND_CHARS ? t.text().substring(0, FOUND_CHARS) + "..." : t.text();
                break;
            }
        }
        String text = template.replace("{outcome}", nz(stop.outcome())).replace("{rule}", nz(stop.rule()))
                .replace("{reason}", nz(stop.reason())).replace("{found}", found);
        return new WrapUp(stop.outcome(), stop.reason(), stop.rule(), stop.failSafe(), text, null, null, null, null,
                "stop_message", null, false);
    }

    private static String nz(String s) { return s == null ? "" : s; }

    /**
     * True for a stop whose rule is a cap (tokens, cost, model calls, time), the run's or its conversation's
     * ({@code conversation_budget:*}): no model call may follow it.
     */
    static boolean capHolds(GuardStopException stop) {
        return stop.rule() != null && (stop.rule().startsWith("cap:") || stop.rule().startsWith("conversation_budget:"));
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
        o.put("status", status);
        o.put("error_kind", errorKind);
        o.put("salvaged", salvaged);
        return o.toString();
    }
}
