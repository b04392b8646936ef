package dev.pyguard.bridge.scripted;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.ModelProvider;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.FinishReason;
import dev.langchain4j.model.output.TokenUsage;
import dev.pyguard.bridge.Messages;
import dev.pyguard.bridge.Reflections;
import dev.pyguard.bridge.ToolSet;
import dev.pyguard.bridge.demo.LogisticsTools;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A LangChain4j {@link ChatModel} that plays a {@link Scenario} (tests and the demo: no network, no key). It only
 * overrides {@code doChat}, so LangChain4j's own {@code chat(...)} (listeners included) drives it. Its choices depend
 * on the request alone (see {@link ConversationView}), so one instance may serve many runs and threads.
 *
 * <p>It keeps totals of what it reported (calls, input and output tokens) so tests can compare them with what the
 * sensor saw.
 */
public final class ScriptedChatModel implements ChatModel {

    private final ScenarioPlayer player;
    private final AtomicInteger calls = new AtomicInteger();
    private final AtomicLong inputTokens = new AtomicLong();
    private final AtomicLong outputTokens = new AtomicLong();
    private final AtomicInteger recoveries = new AtomicInteger();

    public ScriptedChatModel(Scenario scenario, Long seed) {
        this.player = new ScenarioPlayer(scenario, seed);
    }

    public static ScriptedChatModel fromJson(String json, Long seed) { return new ScriptedChatModel(Scenario.parse(json), seed); }

    public static ScriptedChatModel fromFile(String path, Long seed) { return new ScriptedChatModel(Scenario.fromFile(path), seed); }

    @Override
    public ChatResponse doChat(ChatRequest request) {
        ConversationView v = view(request.messages());
        boolean toolsOffered = request.toolSpecifications() != null && !request.toolSpecifications().isEmpty();
        ScriptedReply r = player.isWrapUp(v, toolsOffered) ? player.wrapUp(v) : player.play(v);
        if (r.requestDigest() != null && !r.requestDigest().equals(RequestDigest.of(request))) {
            throw new ScenarioException("the agent's request drifted from the recording of scenario '"
                    + player.scenario().name() + "': user message " + (v.userTurn() + 1) + ", model call "
                    + (v.assistantTurns() + 1) + " was recorded for another request (digest " + r.requestDigest()
                    + ", now " + RequestDigest.of(request) + "; the request now ends with: "
                    + RequestDigest.lastMessage(request) + "). Re-record it (pytest --pyguard-record=all) if the change"
                    + " is intended.");
        }
        waitLatency();
        calls.incrementAndGet();
        if (r.recovered()) recoveries.incrementAndGet();
        if (r.inputTokens() != null) inputTokens.addAndGet(r.inputTokens());
        if (r.outputTokens() != null) outputTokens.addAndGet(r.outputTokens());
        AiMessage ai;
        if (r.isFinal()) {
            ai = AiMessage.from(r.text() == null ? "" : r.text());
        } else {
            List<ToolExecutionRequest> reqs = new ArrayList<>();
            for (ScriptedReply.Call c : r.toolCalls()) {
                reqs.add(ToolExecutionRequest.builder().id(c.id()).name(c.name()).arguments(c.arguments()).build());
            }
            ai = r.text() == null ? AiMessage.from(reqs) : AiMessage.from(r.text(), reqs);
        }
        return ChatResponse.builder()
                .aiMessage(ai)
                .id("scripted-" + player.scenario().name() + "-" + (r.turn() + 1))
                .modelName("scripted:" + player.scenario().name())
                .tokenUsage(r.inputTokens() == null ? null : new TokenUsage(r.inputTokens(), r.outputTokens()))
                .finishReason(r.isFinal() ? FinishReason.STOP : FinishReason.TOOL_EXECUTION)
                .build();
    }

    /**
     * Takes the scenario's {@code latency_ms} as a real model takes its time (the thread sleeps, holding nothing; a
     * range draws each call's latency, which is not part of the reply: the replies stay deterministic).
     */
    private void waitLatency() {
        Scenario s = player.scenario();
        long ms = s.latencyMaxMs() > s.latencyMinMs()
                ? ThreadLocalRandom.current().nextLong(s.latencyMinMs(), s.latencyMaxMs() + 1) : s.latencyMinMs();
        if (ms <= 0) return;
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ScenarioException("scenario '" + player.scenario().name() + "': interrupted while taking its "
                    + ms + " ms latency_ms", e);
        }
    }

    /** Reads a LangChain4j message list the way the player needs it. */
    public static ConversationView view(List<ChatMessage> messages) {
        List<ConversationView.Message> out = new ArrayList<>(messages.size());
        for (ChatMessage m : messages) {
            ConversationView.Role role;
            List<String> ids = List.of();
            if (m instanceof SystemMessage) role = ConversationView.Role.SYSTEM;
            else if (m instanceof UserMessage) role = Reflections.isReflection(m) ? ConversationView.Role.REFLECTION : ConversationView.Role.USER;
            else if (m instanceof ToolExecutionResultMessage) role = ConversationView.Role.TOOL;
            else if (m instanceof AiMessage a) {
                role = ConversationView.Role.ASSISTANT;
                if (a.hasToolExecutionRequests()) {
                    ids = new ArrayList<>();
                    for (ToolExecutionRequest r : a.toolExecutionRequests()) ids.add(r.id());
                }
            } else continue;
            out.add(new ConversationView.Message(role, Messages.text(m), ids, textLength(m)));
        }
        return ConversationView.of(out);
    }

    private static long textLength(ChatMessage m) {
        if (m instanceof SystemMessage s) return s.text() == null ? 0 : s.text().length();
        if (m instanceof UserMessage u) return Messages.text(u).length();
        if (m instanceof ToolExecutionResultMessage t) return Messages.text(t).length();
        if (m instanceof AiMessage a) {
            long n = a.text() == null ? 0 : a.text().length();
            if (a.hasToolExecutionRequests()) {
                for (ToolExecutionRequest r : a.toolExecutionRequests()) {
                    n += (r.name() == null ? 0 : r.name().length()) + (r.arguments() == null ? 0 : r.arguments().length());
                }
            }
            return n;
        }
        return 0;
    }

    /** Fresh tools for one run, as the scenario's {@code toolset} says ({@code logistics}, {@code scenario}, {@code none}). */
    public ToolSet newTools() { return toolsFor(player.scenario()); }

    public static ToolSet toolsFor(Scenario s) {
        return switch (s.toolset()) {
            case "logistics" -> ToolSet.of(new LogisticsTools());
            case "scenario" -> ToolSet.fromMap(new ScenarioTools(s).asMap());
            default -> ToolSet.empty();
        };
    }

    @Override
    public ModelProvider provider() { return ModelProvider.OTHER; }

    public Scenario scenario() { return player.scenario(); }
    public ScenarioPlayer player() { return player; }
    public int calls() { return calls.get(); }
    public long reportedInputTokens() { return inputTokens.get(); }
    public long reportedOutputTokens() { return outputTokens.get(); }
    public int recoveries() { return recoveries.get(); }
}
