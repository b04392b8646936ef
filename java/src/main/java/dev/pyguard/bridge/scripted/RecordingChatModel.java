package dev.pyguard.bridge.scripted;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.ModelProvider;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.TokenUsage;
import dev.pyguard.bridge.Messages;
import dev.pyguard.bridge.Reflections;

import java.util.ArrayList;
import java.util.List;

/**
 * A {@link ChatModel} that passes every request to a real model and records, call by call, what a scenario needs to
 * replay it: where the call falls (user message, model call within it, a wrap-up or not), the request's
 * {@link RequestDigest}, and the response (text, tool calls, token usage). Python turns the record into a scenario
 * file ({@code pyguard.testing.recording}); the {@link ScriptedChatModel} replays it and refuses a request whose
 * digest differs from the recorded one.
 */
public final class RecordingChatModel implements ChatModel {

    private final ChatModel delegate;
    private final List<ObjectNode> calls = new ArrayList<>();

    public RecordingChatModel(ChatModel delegate) { this.delegate = delegate; }

    @Override
    public ChatResponse doChat(ChatRequest request) {
        ChatResponse response = delegate.chat(request);
        ObjectNode call = Scenario.MAPPER.createObjectNode();
        ConversationView v = ScriptedChatModel.view(request.messages());
        boolean toolsOffered = request.toolSpecifications() != null && !request.toolSpecifications().isEmpty();
        call.put("user_turn", v.userTurn());
        call.put("turn", v.assistantTurns());
        call.put("user", lastUserText(request.messages()));
        call.put("wrap_up", !toolsOffered && !v.toolResults().isEmpty());
        call.put("request_digest", RequestDigest.of(request));
        AiMessage ai = response.aiMessage();
        if (ai.text() != null) call.put("text", ai.text());
        ArrayNode tools = call.putArray("tool_calls");
        if (ai.hasToolExecutionRequests()) {
            for (ToolExecutionRequest r : ai.toolExecutionRequests()) {
                tools.addObject().put("name", r.name()).put("arguments", r.arguments());
            }
        }
        TokenUsage usage = response.tokenUsage();
        if (usage != null && usage.inputTokenCount() != null) call.put("input_tokens", usage.inputTokenCount());
        if (usage != null && usage.outputTokenCount() != null) call.put("output_tokens", usage.outputTokenCount());
        synchronized (calls) { calls.add(call); }
        return response;
    }

    private static String lastUserText(List<ChatMessage> messages) {
        for (int i = messages.size() - 1; i >= 0; i--) {
            ChatMessage m = messages.get(i);
            if (m instanceof UserMessage && !Reflections.isReflection(m)) return Messages.text(m);
        }
        return "";
    }

    /** The calls recorded so far, as a JSON array (one object per model call, in order). */
    public String callsJson() {
        synchronized (calls) {
            ArrayNode out = Scenario.MAPPER.createArrayNode();
            out.addAll(calls);
            return out.toString();
        }
    }

    public int recordedCalls() { synchronized (calls) { return calls.size(); } }

    public ChatModel delegate() { return delegate; }

    @Override
    public ModelProvider provider() { return delegate.provider(); }
}
