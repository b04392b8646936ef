package dev.pyguard.bridge;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.pyguard.bridge.scripted.ScriptedChatModel;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.*;

class WrapUpTest {

    private static final String SCENARIO = """
            {"name": "w", "toolset": "scenario", "tools": [{"name": "look", "results": ["found it: 42"]}],
             "turns": [{"tool_calls": [{"name": "look", "arguments": {}}]}],
             "wrap_up": {"answer": "The answer is 42 ({last_result})"}}""";

    @Test
    void aStopAtAResponseAskingForToolsIsAnsweredWithoutTools() {
        ScriptedChatModel scripted = ScriptedChatModel.fromJson(SCENARIO, null);
        TestSupport.Recorder rec = new TestSupport.Recorder(e -> e.get("index").asInt() == 2
                ? "{\"action\":\"stop\",\"outcome\":\"stalled\",\"reason\":\"looping\",\"rule\":\"r\"}"
                : "{\"action\":\"continue\"}");
        GuardedChatModel g = new GuardedChatModel(scripted, GuardConfig.of("w1"), rec);
        g.answerOnStop("Stop: {reason}. Answer now.", 0);
        AgentRunResult r = Agents.aiServices(g, scripted.newTools(), 100, null).run("what is it?");
        assertEquals(AgentRunResult.Ending.ANSWERED, r.ending(), r.toJson());
        assertEquals("The answer is 42 (found it: 42)", r.answer());
        assertEquals(3, scripted.calls());  // two iterations, then the wrap-up
        assertEquals(2, rec.events.size());  // the wrap-up is not an iteration
        assertTrue(g.wrapUpJson().contains("\"outcome\":\"stalled\""), g.wrapUpJson());
        assertEquals(1, r.stats().toolExecutions());  // the stopped response's tool never ran
    }

    @Test
    void theRequestAnswersTheStoppedToolsAndOffersNone() {
        ToolExecutionRequest call = ToolExecutionRequest.builder().id("c1").name("look").arguments("{}").build();
        ChatRequest req = WrapUp.request(List.of(UserMessage.from("q")), AiMessage.from(call), "Stop: {reason}", "loop");
        assertEquals(4, req.messages().size());
        assertTrue(req.toolSpecifications() == null || req.toolSpecifications().isEmpty());
        assertEquals("Stop: loop", ((UserMessage) req.messages().get(3)).singleText());
        ChatResponse none = ScriptedChatModel.fromJson(SCENARIO, null).chat(req);
        assertFalse(none.aiMessage().hasToolExecutionRequests());
    }

    /** A model that says something, then asks for a tool on every later call (its wrap-up reply too: no text). */
    private static final class ToolsOnly implements dev.langchain4j.model.chat.ChatModel {
        int calls;

        @Override
        public ChatResponse doChat(ChatRequest request) {
            calls++;
            ToolExecutionRequest call = ToolExecutionRequest.builder().id("c" + calls).name("look").arguments("{}").build();
            AiMessage ai = calls == 1 ? AiMessage.from("checking the first place", List.of(call)) : AiMessage.from(call);
            return ChatResponse.builder().aiMessage(ai).build();
        }
    }

    private static ToolSet look() {
        return ToolSet.fromMap(java.util.Map.of(
                dev.langchain4j.agent.tool.ToolSpecification.builder().name("look").description("look").build(),
                (request, memoryId) -> "nothing here"));
    }

    private static GuardedChatModel stoppedAtTwo(dev.langchain4j.model.chat.ChatModel model, String rule) {
        TestSupport.Recorder rec = new TestSupport.Recorder(e -> e.get("index").asInt() == 2
                ? "{\"action\":\"stop\",\"outcome\":\"expired\",\"reason\":\"over\",\"rule\":\"" + rule + "\"}"
                : "{\"action\":\"continue\"}");
        GuardedChatModel g = new GuardedChatModel(model, GuardConfig.of("w2"), rec);
        g.answerOnStop("Stop: {reason}. Answer now.", 0);
        return g;
    }

    @Test
    void aCapHoldsNoModelCallAfterItTheLastTextIsTheAnswer() {
        ToolsOnly model = new ToolsOnly();
        GuardedChatModel g = stoppedAtTwo(model, "cap:total_tokens");
        AgentRunResult r = Agents.aiServices(g, look(), 100, null).run("what is it?");
        assertEquals(2, model.calls);  // no wrap-up call after the cap was crossed
        assertEquals("checking the first place", r.answer(), r.toJson());
        assertTrue(g.wrapUpJson().contains("\"status\":\"not_made\""), g.wrapUpJson());
        assertTrue(g.wrapUpJson().contains("\"salvaged\":true"), g.wrapUpJson());
    }

    @Test
    void aWrapUpWithNoTextFallsBackToTheLastTextAndSaysSo() {
        ToolsOnly model = new ToolsOnly();
        GuardedChatModel g = stoppedAtTwo(model, "budget");
        AgentRunResult r = Agents.aiServices(g, look(), 100, null).run("what is it?");
        assertEquals(3, model.calls);  // the wrap-up was made, and answered with a tool call only
        assertEquals("checking the first place", r.answer(), r.toJson());
        String json = g.wrapUpJson();
        assertTrue(json.contains("\"status\":\"no_text\"") && json.contains("\"error_kind\":\"tool_call_only\""), json);
    }
}
