package dev.pyguard.bridge;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.*;

class GuardDecisionTest {

    @Test
    void turnStartIsReadWhenGivenAndAbsentOtherwise() {
        assertEquals(-1, GuardDecision.parse("{\"action\":\"continue\"}").turnStart());
        assertEquals(7, GuardDecision.parse("{\"action\":\"continue\",\"turn_start\":7}").turnStart());
        assertEquals(-1, GuardDecision.CONTINUE.turnStart());
    }

    @Test
    void aStopWithoutAnOutcomeIsRefusedNotDefaulted() {
        for (String reply : new String[] {"{\"action\":\"stop\",\"reason\":\"loop\"}",
                "{\"action\":\"stop\",\"outcome\":\"  \"}", "{\"action\":\"stop\",\"outcome\":null}"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GuardDecision.parse(reply));
            assertTrue(e.getMessage().contains("has no \"outcome\""), e.getMessage());
        }
        assertEquals("expired", GuardDecision.parse("{\"action\":\"stop\",\"outcome\":\"expired\"}").outcome());
    }

    @Test
    void aStopWithoutAnOutcomeLeavesTheRunToTheFailSafe() {
        ScriptedChatModelHolder h = new ScriptedChatModelHolder();
        TestSupport.Recorder bad = new TestSupport.Recorder(e -> "{\"action\":\"stop\",\"reason\":\"loop\"}");
        GuardedChatModel g = new GuardedChatModel(h.model, GuardConfig.of("no-outcome").withMaxModelCalls(3), bad);
        AgentRunResult r = Agents.explicit(g, h.model.newTools(), 100, null).run("status?");
        assertEquals(AgentRunResult.Ending.STOPPED, r.ending(), r.toJson());
        assertTrue(r.failSafe(), r.toJson());
        assertEquals("guard_error", r.outcome(), "a broken reply is a guard failure, never a made-up stall");
        assertEquals(3, r.stats().modelCalls());
        assertEquals(3, r.stats().callbackFailures());
        assertTrue(r.stats().lastCallbackError().contains("has no \"outcome\""), r.stats().lastCallbackError());
    }

    private static final class ScriptedChatModelHolder {
        final dev.pyguard.bridge.scripted.ScriptedChatModel model = TestSupport.scenario("oscillating");
    }

    @Test
    void aBadTurnStartNamesTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> GuardDecision.parse("{\"action\":\"continue\",\"turn_start\":-2}"));
        assertTrue(e.getMessage().contains("turn_start") && e.getMessage().contains("-2"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> GuardDecision.parse("{\"action\":\"continue\",\"turn_start\":\"3\"}"));
        assertTrue(e.getMessage().contains("non-negative integer"), e.getMessage());
    }
}
