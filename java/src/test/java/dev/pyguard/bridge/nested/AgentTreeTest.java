package dev.pyguard.bridge.nested;

import dev.langchain4j.model.chat.ChatModel;
import dev.pyguard.bridge.GuardConfig;
import dev.pyguard.bridge.GuardStopException;
import dev.pyguard.bridge.GuardedChatModel;
import dev.pyguard.bridge.scripted.ScriptedChatModel;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.*;

/** The AgentTree on LangChain4j's real workflows: one child per invocation, routed models, the error handler. */
class AgentTreeTest {

    static ScriptedChatModel scenario(String name) {
        return ScriptedChatModel.fromFile(Path.of("..", "pyguard", "scenarios", name + ".json").toString(), null);
    }

    /** A Java stand-in for the Python run tree: each invocation gets an observe-only guarded model (or a stopped one). */
    static final class Recorder implements AgentTreeCallback {
        final List<String> log = new CopyOnWriteArrayList<>();
        final List<GuardedChatModel> children = new CopyOnWriteArrayList<>();
        final String stopAgent;
        Recorder(String stopAgent) { this.stopAgent = stopAgent; }

        @Override public ChatModel openChild(String agentName, String inputsJson, ChatModel base) {
            log.add("open " + agentName + " " + inputsJson);
            GuardedChatModel g = new GuardedChatModel(base, GuardConfig.observeOnly(agentName + "-" + children.size()), null);
            if (agentName.equals(stopAgent)) g.requestStop("stalled", "stuck", "test");
            children.add(g);
            return g;
        }

        @Override public void closeChild(String agentName, Object output, Throwable error) {
            log.add("close " + agentName + (error == null ? " ok" : " error"));
        }

        @Override public String recovery(String agentName, Throwable error) {
            return GuardStopException.findIn(error) != null ? "[stopped " + agentName + "]" : null;
        }
    }

    @Test
    void eachInvocationOfASequenceIsAChildOnItsOwnModel() {
        Recorder rec = new Recorder(null);
        AgentTree tree = new AgentTree(rec);
        ScriptedChatModel notifier = scenario("nested_notifier");
        AgentSystem system = NestedAgents.sequence(tree, List.of(
                NestedAgents.spec("notifier", null, notifier, notifier.newTools()),
                NestedAgents.spec("again", null, scenario("nested_notifier"), notifier.newTools())), 10);
        String answer = system.run("order 12345");
        assertTrue(answer.contains("DONE"), answer);
        assertEquals(List.of("open notifier {\"request\":\"order 12345\"}", "close notifier ok",
                "open again {\"request\":\"order 12345\"}", "close again ok"), rec.log);
        assertEquals(2, rec.children.size());
        assertEquals(2, rec.children.get(0).modelCalls(), "the invocation's calls went through its own guarded model");
        assertEquals(1, rec.children.get(0).stats().toolExecutions(), "tool hooks reach the invocation's model");
    }

    @Test
    void aChildStoppedByItsGuardHandsItsParentTheRecoveryText() {
        Recorder rec = new Recorder("tracker");
        AgentTree tree = new AgentTree(rec);
        ScriptedChatModel tracker = scenario("nested_tracker_stuck");
        ScriptedChatModel notifier = scenario("nested_notifier");
        AgentSystem system = NestedAgents.sequence(tree, List.of(
                NestedAgents.spec("tracker", null, tracker, tracker.newTools()),
                NestedAgents.spec("notifier", null, notifier, notifier.newTools())), 10);
        assertTrue(system.run("order 12345").contains("DONE"));
        assertEquals(0, rec.children.get(0).modelCalls(), "a stopped child makes no model call");
        assertTrue(rec.log.contains("close tracker error"), rec.log.toString());
        assertTrue(rec.log.contains("close notifier ok"), rec.log.toString());
    }

    @Test
    void aSubAgentNameIsRoutedOnce() {
        AgentTree tree = new AgentTree(new Recorder(null));
        tree.childModel("a", scenario("nested_notifier"));
        assertThrows(IllegalArgumentException.class, () -> tree.childModel("a", scenario("nested_notifier")));
        assertTrue(tree.routes("a"));
        assertFalse(tree.routes("b"));
    }
}
