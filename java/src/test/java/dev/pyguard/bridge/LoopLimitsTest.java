package dev.pyguard.bridge;

import dev.pyguard.bridge.scripted.ScriptedChatModel;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.*;

/** The off-by-ones of the loops' own caps, checked on the real LangChain4j loops. */
class LoopLimitsTest {

    @Test
    void aiServicesMaxToolCallingRoundTripsAllowsNPlusOneModelCalls() {
        for (int n : new int[] {1, 3}) {
            ScriptedChatModel scripted = TestSupport.scenario("oscillating");
            GuardedChatModel g = new GuardedChatModel(scripted, GuardConfig.observeOnly("rt" + n), null);
            AgentRunResult r = Agents.aiServices(g, scripted.newTools(), n, null).run("status?");
            assertEquals(AgentRunResult.Ending.EXHAUSTED, r.ending(), "the loop's own cap is exhaustion, not a failure");
            assertTrue(r.reason().contains("exceeded " + n + " tool calling round trips"), r.reason());
            assertEquals(n + 1, scripted.calls(), "maxToolCallingRoundTrips=" + n);
            assertEquals(n, r.stats().toolExecutions());
        }
    }

    @Test
    void aiServicesAnswerOnTheLastAllowedCallIsStillExhausted() {
        // convergent answers at model call 4; with maxToolCallingRoundTrips=3 the 4th response is an answer, and LangChain4j still throws.
        ScriptedChatModel scripted = TestSupport.scenario("convergent");
        GuardedChatModel g = new GuardedChatModel(scripted, GuardConfig.observeOnly("rt-edge"), null);
        AgentRunResult r = Agents.aiServices(g, scripted.newTools(), 3, null).run("x");
        assertEquals(4, scripted.calls());
        assertEquals(AgentRunResult.Ending.EXHAUSTED, r.ending(), r.toJson());
        assertNull(r.answer(), "LangChain4j discards the answer of call N+1");
        AgentRunResult ok = Agents.aiServices(new GuardedChatModel(TestSupport.scenario("convergent"), GuardConfig.observeOnly("rt-ok"), null),
                TestSupport.scenario("convergent").newTools(), 4, null).run("x");
        assertEquals(AgentRunResult.Ending.ANSWERED, ok.ending());
    }

    @Test
    void agenticLoopRunsExactlyMaxIterations() {
        for (int n : new int[] {1, 3}) {
            ScriptedChatModel scripted = TestSupport.scenario("convergent");
            GuardedChatModel g = new GuardedChatModel(scripted, GuardConfig.observeOnly("ag" + n), null);
            AgentRunResult r = Agents.agenticLoop(g, scripted.newTools(), n, 100, "", null).run("x");
            assertEquals(n, r.iterations(), r.toJson());
            assertEquals(4 * n, scripted.calls());
            assertEquals(AgentRunResult.Ending.EXHAUSTED, r.ending());
        }
    }

    @Test
    void agenticLoopExitsOnFirstAnswerByDefault() {
        ScriptedChatModel scripted = TestSupport.scenario("convergent");
        GuardedChatModel g = new GuardedChatModel(scripted, GuardConfig.of("ag-exit"), new TestSupport.Recorder());
        AgentRunResult r = Agents.agenticLoop(g, scripted.newTools(), 5, 100, null, null).run("x");
        assertEquals(AgentRunResult.Ending.ANSWERED, r.ending(), r.toJson());
        assertEquals(1, r.iterations());
        assertEquals(4, r.stats().events());
        assertEquals(3, r.stats().toolExecutions());
    }

    @Test
    void agenticLoopStopsOnGuardStop() {
        ScriptedChatModel scripted = TestSupport.scenario("oscillating");
        TestSupport.Recorder rec = new TestSupport.Recorder(e -> e.get("index").asInt() >= 4
                ? "{\"action\":\"stop\",\"outcome\":\"stalled\",\"reason\":\"loop\",\"rule\":\"cycle\"}" : "{\"action\":\"continue\"}");
        GuardedChatModel g = new GuardedChatModel(scripted, GuardConfig.of("ag-stop"), rec);
        AgentRunResult r = Agents.agenticLoop(g, scripted.newTools(), 10, 100, null, null).run("x");
        assertEquals(AgentRunResult.Ending.STOPPED, r.ending(), r.toJson());
        assertEquals("cycle", r.rule());
        assertEquals(4, scripted.calls());
        assertEquals(3, r.stats().toolExecutions());
    }

    @Test
    void explicitLoopMaxIterationsIsMaxModelCalls() {
        ScriptedChatModel scripted = TestSupport.scenario("oscillating");
        GuardedChatModel g = new GuardedChatModel(scripted, GuardConfig.of("ex"), new TestSupport.Recorder());
        AgentRunResult r = Agents.explicit(g, scripted.newTools(), 4, null).run("x");
        assertEquals(AgentRunResult.Ending.EXHAUSTED, r.ending());
        assertEquals(4, scripted.calls());
        assertEquals(4, r.iterations());
        assertEquals(3, r.stats().toolExecutions());
        ScriptedChatModel conv = TestSupport.scenario("convergent");
        AgentRunResult ok = Agents.explicit(conv, conv.newTools(), 4, null).run("x");
        assertEquals(AgentRunResult.Ending.ANSWERED, ok.ending());
        assertNull(ok.stats());
    }
}
