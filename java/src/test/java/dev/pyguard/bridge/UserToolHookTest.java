package dev.pyguard.bridge;

import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.tool.BeforeToolExecution;
import dev.pyguard.bridge.demo.LogisticsTools;
import dev.pyguard.bridge.scripted.ScriptedChatModel;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.*;

/** A user's own AiServices agent, built by code that knows no pyguard type, still has its last tools stopped. */
class UserToolHookTest {

    /** What a user's factory looks like: LangChain4j and JDK types only (no pyguard jar needed to compile it). */
    static final class UserAgents {
        interface Assistant { String chat(String message); }

        static Assistant create(ChatModel model, Object tools, Consumer<BeforeToolExecution> beforeTool) {
            AiServices<Assistant> b = AiServices.builder(Assistant.class).chatModel(model).tools(tools);
            if (beforeTool != null) b.beforeToolExecution(beforeTool);
            return b.build();
        }
    }

    private static int toolRunsWhenStoppedAfterCall(int stopAfter, boolean withHook) {
        ScriptedChatModel scripted = TestSupport.scenario("logistics_incident");
        TestSupport.Recorder stopping = new TestSupport.Recorder(e -> e.get("index").asInt() >= stopAfter
                ? "{\"action\":\"stop\",\"outcome\":\"stalled\",\"reason\":\"loop\",\"rule\":\"cycle\"}"
                : "{\"action\":\"continue\"}");
        GuardedChatModel guarded = new GuardedChatModel(scripted, GuardConfig.of("user-hook"), stopping);
        LogisticsTools tools = new LogisticsTools();
        UserAgents.Assistant agent = UserAgents.create(guarded, tools, withHook ? guarded.beforeToolExecutionHook() : null);
        RuntimeException e = assertThrows(RuntimeException.class, () -> agent.chat("Where is order 12345?"));
        GuardStopException stop = GuardStopException.findIn(e);
        assertNotNull(stop, e.toString());
        assertEquals("stalled", stop.outcome());
        assertEquals(stopAfter, guarded.modelCalls());
        return tools.calls("get_shipment_status");
    }

    @Test
    void aStopKeepsTheLastRequestedToolFromRunning() {
        // the 3rd response asks for the tool again; the guard decided to stop after seeing it
        assertEquals(2, toolRunsWhenStoppedAfterCall(3, true), "with the hook, the 3rd response's tool never runs");
        assertEquals(3, toolRunsWhenStoppedAfterCall(3, false), "without it, the tool runs and the next call is refused");
    }

    @Test
    void theUsersFactoryNeedsNoPyguardType() {
        for (Method m : UserAgents.class.getDeclaredMethods()) {
            for (Class<?> t : m.getParameterTypes()) assertFalse(t.getName().startsWith("dev.pyguard"), m.toString());
        }
        for (Method m : new Method[] {methodNamed("beforeToolExecutionHook"), methodNamed("afterToolExecutionHook")}) {
            assertEquals(Consumer.class, m.getReturnType(), m.toString());
            assertTrue(m.getGenericReturnType().getTypeName().contains("dev.langchain4j.service.tool."), m.toString());
        }
    }

    private static Method methodNamed(String name) {
        try {
            return GuardedChatModel.class.getMethod(name);
        } catch (NoSuchMethodException e) {
            throw new AssertionError(e);
        }
    }
}
