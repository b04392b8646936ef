package dev.pyguard.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.pyguard.bridge.demo.LogisticsTools;
import dev.pyguard.bridge.scripted.ScriptedChatModel;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.*;

class GuardedChatModelTest {

    @Test
    void aiServicesRunProducesOneEventPerModelCallWithObservations() {
        ScriptedChatModel scripted = TestSupport.scenario("convergent");
        TestSupport.Recorder rec = new TestSupport.Recorder();
        GuardedChatModel g = new GuardedChatModel(scripted, GuardConfig.of("r1").withTaskType("lookup"), rec);
        AgentRunResult r = Agents.aiServices(g, scripted.newTools(), 100, null).run("Where is order 34567?");
        assertEquals(AgentRunResult.Ending.ANSWERED, r.ending(), r.toJson());
        assertEquals(4, scripted.calls());
        assertEquals(4, rec.events.size());
        assertEquals(4, g.modelCalls());
        for (int i = 0; i < 4; i++) {
            assertEquals(i + 1, rec.events.get(i).get("index").asInt());
            assertEquals("r1", rec.events.get(i).get("run_id").asText());
            assertEquals("lookup", rec.events.get(i).get("task_type").asText());
        }
        JsonNode first = rec.events.get(0);
        assertEquals("user", first.get("observations").get(0).get("kind").asText());
        assertEquals("get_shipment_status", first.get("tool_calls").get(0).get("name").asText());
        assertEquals("{\"orderId\":\"34567\"}", first.get("tool_calls").get(0).get("arguments").asText());
        JsonNode obs = rec.events.get(1).get("observations");
        assertEquals(1, obs.size());
        assertEquals("tool", obs.get(0).get("kind").asText());
        assertTrue(obs.get(0).get("text").asText().startsWith("Order 34567: status EXCEPTION"));
        assertEquals("call_1_1", obs.get(0).get("tool_call_id").asText());
        long in = 0;
        for (JsonNode e : rec.events) in += e.get("input_tokens").asLong();
        assertEquals(scripted.reportedInputTokens(), in);
        // the event carries the counts as reported: no total made up in Java (TokenUsage's own total, in + out)
        for (JsonNode e : rec.events) {
            assertEquals(e.get("input_tokens").asLong() + e.get("output_tokens").asLong(), e.get("total_tokens").asLong());
        }
        assertTrue(rec.events.get(3).get("tool_calls").isEmpty());
        assertEquals("STOP", rec.events.get(3).get("finish_reason").asText());
        assertEquals(3, r.stats().toolExecutions());
        // input tokens grow with the history the model re-reads
        assertTrue(rec.events.get(3).get("input_tokens").asInt() > rec.events.get(0).get("input_tokens").asInt());
    }

    @Test
    void createMakesTheRunsConfigInOneCall() {
        ScriptedChatModel scripted = TestSupport.scenario("convergent");
        assertEquals(new GuardConfig("c1", "lookup", GuardConfig.DEFAULT_MAX_MODEL_CALLS, 0, true),
                GuardedChatModel.create(scripted, "c1", "lookup", 0, 0, false, null).config());
        assertEquals(new GuardConfig("c2", null, 7, 250, true),
                GuardedChatModel.create(scripted, "c2", null, 7, 250, false, null).config());
        assertEquals(new GuardConfig("c3", null, Integer.MAX_VALUE, 0, false),
                GuardedChatModel.create(scripted, "c3", null, 7, 0, true, null).config());
        assertThrows(IllegalArgumentException.class, () -> GuardedChatModel.create(scripted, " ", null, 7, 0, false, null));
        // no tools given: the model's own (the scripted model's scenario tools), fresh for each agent
        assertEquals(scripted.newTools().names(), ToolSet.ownedBy(GuardedChatModel.create(scripted, "c4", null, 0, 0, true, null)).names());
        assertTrue(ToolSet.ownedBy(new Object()).isEmpty());
    }

    @Test
    void stopDecisionEndsTheRunBeforeTheNextCallAndBeforeTheTools() {
        ScriptedChatModel scripted = TestSupport.scenario("logistics_incident");
        TestSupport.Recorder rec = new TestSupport.Recorder(e -> e.get("index").asInt() == 3
                ? "{\"action\":\"stop\",\"outcome\":\"stalled\",\"reason\":\"same call, no new information\",\"rule\":\"repeat_no_gain\"}"
                : "{\"action\":\"continue\"}");
        GuardedChatModel g = new GuardedChatModel(scripted, GuardConfig.of("r2"), rec);
        LogisticsTools tools = new LogisticsTools();
        AgentRunResult r = Agents.aiServices(g, ToolSet.of(tools), 100, null).run("Where is order 12345?");
        assertEquals(AgentRunResult.Ending.STOPPED, r.ending(), r.toJson());
        assertEquals("stalled", r.outcome());
        assertEquals("repeat_no_gain", r.rule());
        assertEquals(3, scripted.calls());
        assertEquals(3, rec.events.size());
        assertEquals(2, tools.calls("get_shipment_status"), "tools of the stopped response must not run");
        assertFalse(r.failSafe());
    }

    @Test
    void reflectionIsAddedToTheNextRequestOnlyAndIsNotAnObservation() {
        ScriptedChatModel scripted = TestSupport.scenario("oscillating");
        TestSupport.Recorder rec = new TestSupport.Recorder(e -> e.get("index").asInt() == 2
                ? "{\"action\":\"reflect\",\"reflection\":\"You repeat the same lookup.\"}" : "{\"action\":\"continue\"}");
        java.util.List<ChatRequest> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        dev.langchain4j.model.chat.ChatModel spy = new dev.langchain4j.model.chat.ChatModel() {
            @Override public dev.langchain4j.model.chat.response.ChatResponse doChat(ChatRequest req) {
                seen.add(req);
                return scripted.chat(req);
            }
        };
        GuardedChatModel g = new GuardedChatModel(spy, GuardConfig.of("r3").withMaxModelCalls(10), rec);
        AgentRunResult r = Agents.aiServices(g, scripted.newTools(), 100, null).run("status of 12345?");
        assertEquals(1, g.reflectionsInjected());
        assertTrue(seen.size() >= 3, r.toJson());
        var third = seen.get(2).messages();
        var last = third.get(third.size() - 1);
        // the model receives the guard's text verbatim: one label (the guard's own, in its text), nothing added
        assertTrue(last instanceof UserMessage u && u.singleText().equals("You repeat the same lookup."), last.toString());
        for (JsonNode o : rec.events.get(2).get("observations")) assertNotEquals("user", o.get("kind").asText());
        for (int i = 3; i < seen.size(); i++) {
            for (var m : seen.get(i).messages()) assertFalse(Reflections.isReflection(m), "reflection must not persist");
        }
    }

    @Test
    void failSafeHoldsWhenTheCallbackRaises() {
        ScriptedChatModel scripted = TestSupport.scenario("oscillating");
        GuardCallback broken = json -> { throw new IllegalStateException("python side broke"); };
        GuardedChatModel g = new GuardedChatModel(scripted, GuardConfig.of("r4").withMaxModelCalls(5), broken);
        AgentRunResult r = Agents.aiServices(g, scripted.newTools(), 100, null).run("status?");
        assertEquals(AgentRunResult.Ending.STOPPED, r.ending());
        assertEquals("guard_error", r.outcome());
        assertTrue(r.failSafe());
        assertEquals(5, scripted.calls());
        assertEquals(5, r.stats().callbackFailures());
        assertTrue(r.reason().contains("python side broke"), r.reason());
    }

    @Test
    void failSafeHoldsWithoutACallbackAndPastADeadline() {
        ScriptedChatModel scripted = TestSupport.scenario("oscillating");
        GuardedChatModel none = new GuardedChatModel(scripted, GuardConfig.of("r5").withMaxModelCalls(3), null);
        AgentRunResult r = Agents.explicit(none, scripted.newTools(), 100, null).run("status?");
        assertEquals("guard_error", r.outcome());
        assertEquals(3, r.stats().modelCalls());

        java.util.concurrent.CountDownLatch never = new java.util.concurrent.CountDownLatch(1);
        GuardCallback blocking = json -> { try { never.await(); } catch (InterruptedException e) { Thread.currentThread().interrupt(); } return "{\"action\":\"continue\"}"; };
        GuardedChatModel late = new GuardedChatModel(scripted, GuardConfig.of("r6").withMaxModelCalls(3).withCallbackTimeoutMs(5), blocking);
        AgentRunResult r2 = Agents.explicit(late, scripted.newTools(), 100, null).run("status?");
        never.countDown();
        // one deadline per run: the first late callback gives up the guard and the run stops before its next model
        // call (the callback never answers: whatever the machine's load, event 1 is the one that misses)
        assertEquals(AgentRunResult.Ending.STOPPED, r2.ending());
        assertEquals("guard_error", r2.outcome());
        assertEquals("failsafe_deadline", late.stopException().rule());
        assertTrue(r2.failSafe());
        assertEquals(1, r2.stats().modelCalls());
        assertEquals(1, late.sensor().missedDeadlineAt());
        assertEquals(1, r2.stats().callbackFailures());
        assertTrue(r2.reason().contains("model call 1 missed its deadline of 5 ms"), r2.reason());
        assertTrue(r2.stats().lastCallbackError().contains("did not answer within 5 ms (event 1"), r2.stats().lastCallbackError());
        // the late reply of event 1 can no longer be claimed: Python discards it too
        assertFalse(late.sensor().claim(1));
    }

    @Test
    void aReplyClaimedInTimeIsApplied() {
        ScriptedChatModel scripted = TestSupport.scenario("oscillating");
        GuardedChatModel[] self = new GuardedChatModel[1];
        GuardCallback claiming = json -> {
            int index = Integer.parseInt(json.replaceAll(".*\"index\":(\\d+).*", "$1"));
            return self[0].sensor().claim(index) ? "{\"action\":\"stop\",\"outcome\":\"stalled\",\"reason\":\"r\"}"
                    : "{\"action\":\"continue\"}";
        };
        self[0] = new GuardedChatModel(scripted, GuardConfig.of("r8").withMaxModelCalls(10).withCallbackTimeoutMs(60_000), claiming);
        AgentRunResult r = Agents.explicit(self[0], scripted.newTools(), 100, null).run("status?");
        assertEquals("stalled", r.outcome());
        assertEquals(1, r.stats().modelCalls());
        assertEquals(0, r.stats().callbackFailures());
    }

    @Test
    void onlyTheGuardsOwnMessageIsAReflectionWhateverTheText() {
        assertTrue(Reflections.isReflection(Reflections.message("change your approach")));
        assertFalse(Reflections.isReflection(dev.langchain4j.data.message.UserMessage.from("change your approach")));
        assertFalse(Reflections.isReflection(dev.langchain4j.data.message.UserMessage.builder()
                .contents(java.util.List.of(dev.langchain4j.data.message.TextContent.from("change your approach")))
                .attributes(java.util.Map.of(Reflections.ATTRIBUTE, Boolean.TRUE)).build()));
    }

    @Test
    void healthyGuardThatNeverStopsHitsTheCapAsExpired() {
        ScriptedChatModel scripted = TestSupport.scenario("divergent");
        GuardedChatModel g = new GuardedChatModel(scripted, GuardConfig.of("r7").withMaxModelCalls(4), new TestSupport.Recorder());
        AgentRunResult r = Agents.aiServices(g, scripted.newTools(), 100, null).run("why?");
        assertEquals("expired", r.outcome());
        assertEquals("failsafe_cap", r.rule());
        assertEquals(4, r.stats().modelCalls());
        assertEquals(3, r.stats().toolExecutions(), "the 4th response's tools are not run: no model call could read them");
    }

    @Test
    void badDecisionJsonCountsAsAFailure() {
        ScriptedChatModel scripted = TestSupport.scenario("convergent");
        GuardedChatModel g = new GuardedChatModel(scripted, GuardConfig.of("r8"), json -> "{not json");
        AgentRunResult r = Agents.aiServices(g, scripted.newTools(), 100, null).run("x");
        assertEquals(AgentRunResult.Ending.ANSWERED, r.ending());
        assertEquals(4, r.stats().callbackFailures());
        assertTrue(r.stats().lastCallbackError().contains("malformed JSON"));
    }
}
