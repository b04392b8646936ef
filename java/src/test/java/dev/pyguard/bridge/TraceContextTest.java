package dev.pyguard.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pyguard.bridge.scripted.ScriptedChatModel;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.*;

/** The application's span, active on the agent's thread, travels with every event, although the guard callback runs
 *  on a pool thread (the default deadline mode) where no span is active. */
class TraceContextTest {

    @Test
    void theAgentThreadsSpanTravelsWithEachEvent() {
        Tracer tracer = SdkTracerProvider.builder().build().get("app");
        ScriptedChatModel scripted = TestSupport.scenario("convergent");
        List<String> callbackThreads = new CopyOnWriteArrayList<>();
        List<String> seenOnCallbackThread = new CopyOnWriteArrayList<>();
        TestSupport.Recorder rec = new TestSupport.Recorder(e -> {
            callbackThreads.add(Thread.currentThread().getName());
            String there = TraceContexts.currentTraceparent();
            seenOnCallbackThread.add(there == null ? "none" : there);
            return "{\"action\":\"continue\"}";
        });
        GuardedChatModel g = new GuardedChatModel(scripted, GuardConfig.of("t1").withCallbackTimeoutMs(10_000), rec);
        Span span = tracer.spanBuilder("POST /orders").startSpan();
        try (Scope ignored = span.makeCurrent()) {
            Agents.aiServices(g, scripted.newTools(), 100, null).run("Where is order 34567?");
        } finally {
            span.end();
        }
        String expected = "00-" + span.getSpanContext().getTraceId() + "-" + span.getSpanContext().getSpanId() + "-01";
        assertEquals(4, rec.events.size());
        for (JsonNode e : rec.events) assertEquals(expected, e.get("trace_context").asText());
        assertTrue(callbackThreads.stream().allMatch(t -> t.startsWith("pyguard-callback-")), callbackThreads.toString());
        assertEquals(List.of("none", "none", "none", "none"), seenOnCallbackThread);
    }

    @Test
    void noActiveSpanNoContext() {
        ScriptedChatModel scripted = TestSupport.scenario("convergent");
        TestSupport.Recorder rec = new TestSupport.Recorder();
        GuardedChatModel g = new GuardedChatModel(scripted, GuardConfig.of("t2"), rec);
        Agents.aiServices(g, scripted.newTools(), 100, null).run("Where is order 34567?");
        assertTrue(TraceContexts.available());
        assertTrue(rec.events.stream().allMatch(e -> e.get("trace_context").isNull()));
        assertEquals("scripted:convergent", rec.events.get(0).get("response_model").asText());
        assertEquals("scripted-convergent-1", rec.events.get(0).get("response_id").asText());
    }
}
