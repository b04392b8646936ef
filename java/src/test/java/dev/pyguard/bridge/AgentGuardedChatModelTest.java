package dev.pyguard.bridge;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.pyguard.bridge.demo.SupportAgents;
import dev.pyguard.bridge.scripted.ScriptedChatModel;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.*;

class AgentGuardedChatModelTest {

    /** Opens a run per user turn with a recorder each; records how each ended. */
    static final class Runs implements AgentGuardedChatModel.Runs {
        final ScriptedChatModel delegate;
        final List<TestSupport.Recorder> recorders = new ArrayList<>();
        final List<String> endings = new ArrayList<>();

        Runs(ScriptedChatModel delegate) { this.delegate = delegate; }

        @Override public synchronized GuardedChatModel open(String userMessage) {
            TestSupport.Recorder rec = new TestSupport.Recorder();
            recorders.add(rec);
            return new GuardedChatModel(delegate, GuardConfig.of("run" + recorders.size()), rec);
        }

        @Override public synchronized GuardOutcome ended(String runId, String answer, Throwable error) {
            endings.add(runId + ":" + (answer != null ? "answered" : error != null ? "error" : "unfinished"));
            String outcome = answer != null ? "succeeded" : error != null ? "failed" : "expired";
            return new GuardOutcome(runId, outcome, null, "", answer != null ? "model" : null, 0, null);
        }
    }

    @Test
    void everyChatCallOfAnAgentBuiltOnceIsARunOfItsOwn() {
        ScriptedChatModel scripted = TestSupport.scenario("convergent");
        Runs runs = new Runs(scripted);
        AgentGuardedChatModel model = new AgentGuardedChatModel(scripted, runs);
        SupportAgents.SupportAgent agent = SupportAgents.create(model, scripted.newTools(), model.beforeToolExecutionHook(),
                model.afterToolExecutionHook(), 25);
        agent.chat("alice", "Where is order 34567?");
        agent.chat("alice", "And now?");
        agent.chat("bob", "Where is order 34567?");
        assertEquals(List.of("run1:answered", "run2:answered", "run3:answered"), runs.endings);
        assertEquals(scripted.calls(), runs.recorders.stream().mapToInt(r -> r.events.size()).sum());
        for (TestSupport.Recorder r : runs.recorders) assertEquals(1, r.events.get(0).get("index").asInt());
        assertTrue(model.openRuns().isEmpty());
    }

    @Test
    void theCallingThreadReadsHowItsLastTurnEndedAndListenersHearEveryTurn() throws Exception {
        ScriptedChatModel scripted = TestSupport.scenario("convergent");
        Runs runs = new Runs(scripted);
        AgentGuardedChatModel model = new AgentGuardedChatModel(scripted, runs);
        List<GuardOutcome> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
        model.addOutcomeListener(heard::add).addOutcomeListener(o -> { throw new IllegalStateException("ignored"); });
        SupportAgents.SupportAgent agent = SupportAgents.create(model, scripted.newTools(), model.beforeToolExecutionHook(),
                model.afterToolExecutionHook(), 25);
        assertNull(model.lastOutcome());
        agent.chat("alice", "Where is order 34567?");
        assertEquals("run1", model.lastOutcome().runId());
        assertTrue(model.lastOutcome().succeeded() && !model.lastOutcome().stopped());
        Thread other = new Thread(() -> agent.chat("bob", "Where is order 34567?"));
        other.start();
        other.join();
        assertEquals("run1", model.lastOutcome().runId());  // the other thread's turn is its own
        assertEquals(List.of("run1", "run2"), heard.stream().map(GuardOutcome::runId).toList());
    }

    @Test
    void aWatchedAgentsTurnEndsWhenItsCallEndsEvenAtItsOwnCap() {
        ScriptedChatModel scripted = TestSupport.scenario("logistics_incident");
        Runs runs = new Runs(scripted);
        AgentGuardedChatModel model = new AgentGuardedChatModel(scripted, runs);
        SupportAgents.SupportAgent agent = model.watch(SupportAgents.create(model, scripted.newTools(),
                model.beforeToolExecutionHook(), model.afterToolExecutionHook(), 2));
        RuntimeException e = assertThrows(RuntimeException.class, () -> agent.chat("alice", "Where is order 12345?"));
        assertTrue(AgentGuardedChatModel.agentCapEnded(e), e.toString());
        assertEquals(List.of("run1:error"), runs.endings);  // ended by the call's exception, not left open
        assertTrue(model.openRuns().isEmpty());
        assertEquals("run1", model.lastOutcome().runId());
        assertThrows(IllegalArgumentException.class, () -> model.watch(new Object()));
    }

    @Test
    void aTurnBeginsWithAUserMessageAfterTheLastAiMessage() {
        ToolExecutionRequest call = ToolExecutionRequest.builder().id("c1").name("t").arguments("{}").build();
        assertTrue(AgentGuardedChatModel.startsTurn(List.of(UserMessage.from("hi"))));
        assertFalse(AgentGuardedChatModel.startsTurn(List.of(UserMessage.from("hi"), AiMessage.from(call),
                ToolExecutionResultMessage.from(call, "ok"))));
        assertTrue(AgentGuardedChatModel.startsTurn(List.of(UserMessage.from("hi"), AiMessage.from("done"),
                UserMessage.from("next"))));
    }

    @Test
    void aClosedGuardRefusesEveryLaterCall() {
        ScriptedChatModel scripted = TestSupport.scenario("convergent");
        AgentGuardedChatModel model = new AgentGuardedChatModel(scripted, new Runs(scripted));
        model.close("closed: attach again");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> model.chat("hello"));
        assertEquals("closed: attach again", e.getMessage());
        assertEquals(0, scripted.calls());
    }
}
