package dev.pyguard.bridge;

import dev.pyguard.bridge.demo.LogisticsTools;
import dev.pyguard.bridge.scripted.ScriptedStreamingChatModel;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.*;

class GuardedStreamingChatModelTest {

    private static ScriptedStreamingChatModel streaming(String name) {
        return new ScriptedStreamingChatModel(TestSupport.scenario(name));
    }

    @Test
    void oneEventPerCompletedStreamedCallWithUsage() {
        ScriptedStreamingChatModel scripted = streaming("convergent");
        TestSupport.Recorder rec = new TestSupport.Recorder();
        GuardedStreamingChatModel g = new GuardedStreamingChatModel(scripted, GuardConfig.of("s1"), rec);
        List<String> chunks = new CopyOnWriteArrayList<>();
        AgentRunResult r = ConversationAgents.streaming(g, scripted.newTools(), 100, null, null, chunks::add)
                .run("Where is order 34567?");
        assertEquals("answered", r.ending().value(), r.toJson());
        assertEquals(4, rec.events.size());
        assertEquals(4, g.modelCalls());
        long in = 0;
        for (com.fasterxml.jackson.databind.JsonNode e : rec.events) in += e.get("input_tokens").asLong();
        assertEquals(scripted.replies().reportedInputTokens(), in);
        assertEquals(r.answer(), String.join("", chunks.subList(chunks.size() - ScriptedStreamingChatModel.chunks(r.answer()).size(), chunks.size())));
        assertEquals(3, r.stats().toolExecutions());
    }

    @Test
    void theReflectionReachesTheNextStreamedRequest() {
        ScriptedStreamingChatModel scripted = streaming("logistics_incident");
        TestSupport.Recorder rec = new TestSupport.Recorder(e -> e.get("index").asInt() == 2
                ? "{\"action\":\"reflect\",\"reflection\":\"You keep asking the same thing.\",\"rule\":\"repeat_no_gain\"}"
                : "{\"action\":\"continue\"}");
        GuardedStreamingChatModel g = new GuardedStreamingChatModel(scripted, GuardConfig.of("s2"), rec);
        AgentRunResult r = ConversationAgents.streaming(g, ToolSet.of(new LogisticsTools()), 100, null, null, null)
                .run("Where is order 12345?");
        assertEquals(1, g.reflectionsInjected());
        assertEquals("answered", r.ending().value(), r.toJson());
        // the scenario answers with its on_reflection text only when the request carries the guard's reflection
        assertTrue(r.answer().startsWith("I already have the status"), r.answer());
        assertEquals(3, g.modelCalls());
    }

    @Test
    void aStopEndsTheStreamBeforeTheToolsOfTheLastResponse() {
        ScriptedStreamingChatModel scripted = streaming("logistics_incident");
        TestSupport.Recorder rec = new TestSupport.Recorder(e -> e.get("index").asInt() == 2
                ? "{\"action\":\"stop\",\"outcome\":\"stalled\",\"reason\":\"same call\",\"rule\":\"repeat_no_gain\"}"
                : "{\"action\":\"continue\"}");
        GuardedStreamingChatModel g = new GuardedStreamingChatModel(scripted, GuardConfig.of("s3"), rec);
        AgentRunResult r = ConversationAgents.streaming(g, ToolSet.of(new LogisticsTools()), 100, null, null, null)
                .run("Where is order 12345?");
        assertEquals("stopped", r.ending().value(), r.toJson());
        assertEquals("stalled", r.outcome());
        assertEquals(2, g.modelCalls());
        assertEquals(1, r.stats().toolExecutions()); // call 2's tool never ran
        assertEquals(2, rec.events.size());
    }

    @Test
    void chunksConcatenateToTheText() {
        String text = "Order 12345: status IN_TRANSIT, a-very-long-token-without-spaces-here, then more.";
        assertEquals(text, String.join("", ScriptedStreamingChatModel.chunks(text)));
        assertTrue(ScriptedStreamingChatModel.chunks(text).size() > 5);
        assertTrue(ScriptedStreamingChatModel.chunks(null).isEmpty());
    }
}
