package dev.pyguard.bridge;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.service.tool.ToolExecutor;
import dev.pyguard.bridge.scripted.ConversationView;
import dev.pyguard.bridge.scripted.ConversationView.Message;
import dev.pyguard.bridge.scripted.ConversationView.Role;
import dev.pyguard.bridge.scripted.Scenario;
import dev.pyguard.bridge.scripted.ScenarioException;
import dev.pyguard.bridge.scripted.ScenarioPlayer;
import dev.pyguard.bridge.scripted.ScenarioTools;
import dev.pyguard.bridge.scripted.ScriptedChatModel;
import dev.pyguard.bridge.scripted.ScriptedReply;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.*;

/** The scenario format's extensions: conversations, argument-dependent tools and state, arguments from earlier results,
 * and a reaction to a reflection that tries something new before answering. */
class ScenarioFormatTest {

    private static Message user(String t) { return new Message(Role.USER, t, List.of(), t.length()); }
    private static Message tool(String t) { return new Message(Role.TOOL, t, List.of(), t.length()); }
    private static Message ai(String... ids) { return new Message(Role.ASSISTANT, "", List.of(ids), 10); }
    private static Message answer(String t) { return new Message(Role.ASSISTANT, t, List.of(), t.length()); }
    private static Message reflection() { return new Message(Role.REFLECTION, "[pyguard guard] stop repeating", List.of(), 30); }

    private static String call(ScenarioTools tools, String name, String args) {
        for (Map.Entry<ToolSpecification, ToolExecutor> e : tools.asMap().entrySet()) {
            if (e.getKey().name().equals(name)) {
                return e.getValue().execute(ToolExecutionRequest.builder().id("t").name(name).arguments(args).build(), null);
            }
        }
        throw new AssertionError("no tool " + name);
    }

    @Test
    void viewCountsUserTurnsAndFindsTheReaction() {
        List<Message> m = new ArrayList<>(List.of(new Message(Role.SYSTEM, "sys", List.of(), 3), user("one"), ai("call_1_1"),
                tool("r1"), answer("done"), user("two"), ai("call_u2_1_1"), tool("r2")));
        ConversationView v = ConversationView.of(m);
        assertEquals(1, v.userTurn());
        assertEquals(1, v.assistantTurns());
        assertEquals(List.of("r2"), v.lastToolResults());
        assertEquals(List.of("r1", "r2"), v.toolResults());
        assertFalse(v.reacting());
        assertNull(v.reflection());
        m.add(reflection());
        assertTrue(ConversationView.of(m).reflectionPresent());
        m.add(ai("react_u2_2_1"));
        m.add(tool("r3"));
        ConversationView after = ConversationView.of(m);
        assertEquals(1, after.reactionStart());
        assertNull(after.reflection(), "the reflection is not after the last assistant message any more");
        assertEquals(2, after.assistantTurns());
    }

    @Test
    void conversationPlaysOneSegmentPerUserMessage() {
        Scenario s = Scenario.parse("""
                {"name": "c", "conversation": [
                  {"user": "first", "turns": [{"tool_calls": [{"name": "a", "arguments": {"q": "x"}}]}, {"answer": "A1"}]},
                  {"user": "second", "turns": [{"answer": "A2 {user_turn}"}]}]}""");
        assertTrue(s.conversation());
        assertEquals(List.of("first", "second"), s.userMessages());
        ScenarioPlayer p = new ScenarioPlayer(s, 1L);
        ScriptedReply r0 = p.play(ConversationView.of(List.of(user("first"))));
        assertEquals("call_1_1", r0.toolCalls().get(0).id());
        assertEquals("A1", p.play(ConversationView.of(List.of(user("first"), ai("call_1_1"), tool("r")))).text());
        ScriptedReply r1 = p.play(ConversationView.of(List.of(user("first"), ai("call_1_1"), tool("r"), answer("A1"), user("second"))));
        assertEquals("A2 2", r1.text());
        ScenarioException e = assertThrows(ScenarioException.class, () -> Scenario.parse(
                "{\"name\":\"x\",\"turns\":[{\"answer\":\"a\"}],\"conversation\":[{\"user\":\"u\",\"turns\":[{\"answer\":\"a\"}]}]}"));
        assertTrue(e.getMessage().contains("either 'conversation' or 'turns'"), e.getMessage());
        e = assertThrows(ScenarioException.class, () -> Scenario.parse(
                "{\"name\":\"x\",\"conversation\":[{\"turns\":[{\"answer\":\"a\"}]}]}"));
        assertTrue(e.getMessage().contains("conversation[0]: 'user'"), e.getMessage());
    }

    @Test
    void argumentsComeFromTheMostRecentMatchingResult() {
        Scenario s = Scenario.parse("""
                {"name": "a", "turns": [{"tool_calls": [{"name": "status", "arguments": {"job": "none", "n": "{turn}"},
                  "arguments_from": {"job": "job (\\\\S+) started"}}]}]}""");
        ScenarioPlayer p = new ScenarioPlayer(s, 1L);
        String args = p.play(ConversationView.of(List.of(user("u"), ai("call_1_1"), tool("job j-1 started"), ai("call_2_1"),
                tool("job j-2 started"), ai("call_3_1"), tool("unrelated")))).toolCalls().get(0).arguments();
        assertEquals("{\"job\":\"j-2\",\"n\":\"4\"}", args);
        assertEquals("{\"job\":\"none\",\"n\":\"1\"}", p.play(ConversationView.of(List.of(user("u")))).toolCalls().get(0).arguments());
        ScenarioException e = assertThrows(ScenarioException.class, () -> Scenario.parse(
                "{\"name\":\"x\",\"turns\":[{\"tool_calls\":[{\"name\":\"t\",\"arguments\":{},\"arguments_from\":{\"q\":\"([\"}}]}]}"));
        assertTrue(e.getMessage().contains("arguments_from.q"), e.getMessage());
    }

    @Test
    void toolCasesDependOnArgumentsAndState() {
        Scenario s = Scenario.parse("""
                {"name": "t", "tools": [
                  {"name": "search", "parameters": {"query": "string"}, "cases": [
                    {"when": {"query": "Scatman John"}, "result": "Scatman John (1942-1999) was a jazz musician."},
                    {"when_matches": {"query": "^Scat"}, "results": ["first miss {arg:query}", "then {case_call}"]},
                    {"error": "Could not find [{arg:query}]. Similar: ['Scatman John']"}]},
                  {"name": "edit", "parameters": {"new": "string"}, "cases": [
                    {"when_state": {"content": "{arg:new}"}, "error": "No replacement was performed"},
                    {"set": {"content": "{arg:new}"}, "result": "The file has been edited ({state:content})."}]},
                  {"name": "test", "parameters": {}, "cases": [
                    {"when_state": {"content": "fix"}, "result": "1 passed"}, {"result": "1 failed"}]}],
                 "turns": [{"answer": "a"}]}""");
        ScenarioTools tools = new ScenarioTools(s);
        assertEquals("Scatman John (1942-1999) was a jazz musician.", call(tools, "search", "{\"query\":\"Scatman John\"}"));
        assertEquals("first miss Scat", call(tools, "search", "{\"query\":\"Scat\"}"));
        assertEquals("then 2", call(tools, "search", "{\"query\":\"Scatman\"}"));
        assertEquals("then 3", call(tools, "search", "{\"query\":\"Scatman\"}"));
        Exception miss = assertThrows(IllegalStateException.class, () -> call(tools, "search", "{\"query\":\"Bebop\"}"));
        assertEquals("Could not find [Bebop]. Similar: ['Scatman John']", miss.getMessage());
        assertEquals("1 failed", call(tools, "test", "{}"));
        assertEquals("The file has been edited (a).", call(tools, "edit", "{\"new\":\"a\"}"));
        assertThrows(IllegalStateException.class, () -> call(tools, "edit", "{\"new\":\"a\"}"), "re-applying the same edit");
        call(tools, "edit", "{\"new\":\"fix\"}");
        assertEquals("fix", tools.state("content"));
        assertEquals("1 passed", call(tools, "test", "{}"));
        ScenarioException e = assertThrows(ScenarioException.class, () -> new ScenarioTools(Scenario.parse(
                "{\"name\":\"x\",\"tools\":[{\"name\":\"t\",\"cases\":[{\"result\":\"a\",\"error\":\"b\"}]}],\"turns\":[{\"answer\":\"a\"}]}")));
        assertTrue(e.getMessage().contains("cases[0] needs exactly one of"), e.getMessage());
        e = assertThrows(ScenarioException.class, () -> new ScenarioTools(Scenario.parse(
                "{\"name\":\"x\",\"tools\":[{\"name\":\"t\",\"cases\":[{\"whem\":{},\"result\":\"a\"}]}],\"turns\":[{\"answer\":\"a\"}]}")));
        assertTrue(e.getMessage().contains("unknown key 'whem'"), e.getMessage());
    }

    @Test
    void aReactionTriesSomethingNewBeforeAnswering() {
        Scenario s = Scenario.parse("""
                {"name": "r", "turns": [{"tool_calls": [{"name": "same", "arguments": {}}]}],
                 "on_reflection": {"recover_probability": 1.0, "answer": "found it: {last_result}",
                   "try_first": [{"tool_calls": [{"name": "other", "arguments": {"q": "new"}}]},
                                 {"tool_calls": [{"name": "third", "arguments": {}}]}]}}""");
        ScenarioPlayer p = new ScenarioPlayer(s, 5L);
        List<Message> m = new ArrayList<>(List.of(user("u"), ai("call_1_1"), tool("same"), ai("call_2_1"), tool("same"), reflection()));
        ScriptedReply first = p.play(ConversationView.of(m));
        assertTrue(first.recovered());
        assertEquals("other", first.toolCalls().get(0).name());
        assertEquals("react_3_1", first.toolCalls().get(0).id());
        m.remove(m.size() - 1); // the reflection is in that one request only
        m.add(ai("react_3_1"));
        m.add(tool("something new"));
        ScriptedReply second = p.play(ConversationView.of(m));
        assertEquals("third", second.toolCalls().get(0).name());
        assertFalse(second.recovered());
        m.add(ai("react_4_1"));
        m.add(tool("the answer"));
        ScriptedReply last = p.play(ConversationView.of(m));
        assertTrue(last.isFinal());
        assertEquals("found it: the answer", last.text());
    }

    @Test
    void theHttpServerPlaysAConversationAndAReactionAsTheChatModelDoes() throws Exception {
        String json = java.nio.file.Files.readString(java.nio.file.Path.of("..", "pyguard", "scenarios", "support_conversation.json"));
        try (dev.pyguard.bridge.server.LocalOpenAiServer server = dev.pyguard.bridge.server.LocalOpenAiServer.start(json)) {
            GuardedChatModel g = new GuardedChatModel(dev.pyguard.bridge.server.OpenAiClients.chatModel(server.baseUrl(), "m"),
                    GuardConfig.of("http-conv"), new TestSupport.Recorder());
            AgentRunResult r = Agents.aiServices(g, ScriptedChatModel.toolsFor(server.scenario()), 5, null)
                    .runTurns(server.scenario().userMessages());
            assertEquals(AgentRunResult.Ending.ANSWERED, r.ending(), r.toJson());
            assertTrue(r.answer().startsWith("Yes: {\"product_id\": \"6817146515\""), r.answer());
            assertEquals(11, server.requests());
        }
        String loop = java.nio.file.Files.readString(java.nio.file.Path.of("..", "pyguard", "scenarios", "edit_loop.json"));
        try (dev.pyguard.bridge.server.LocalOpenAiServer server = dev.pyguard.bridge.server.LocalOpenAiServer.start(loop)) {
            TestSupport.Recorder reflectAt5 = new TestSupport.Recorder(e -> e.get("index").asInt() == 5
                    ? "{\"action\":\"reflect\",\"reflection\":\"You are undoing your own edit.\"}" : "{\"action\":\"continue\"}");
            GuardedChatModel g = new GuardedChatModel(dev.pyguard.bridge.server.OpenAiClients.chatModel(server.baseUrl(), "m"),
                    GuardConfig.of("http-react"), reflectAt5);
            AgentRunResult r = Agents.aiServices(g, ScriptedChatModel.toolsFor(server.scenario()), 20, null).run("fix it");
            assertEquals(AgentRunResult.Ending.ANSWERED, r.ending(), r.toJson());
            assertTrue(r.answer().startsWith("Fixed with `value = int(raw.strip())`: 42"), r.answer());
            assertEquals(8, server.requests()); // 5 calls, the reflection, a new edit, a re-run, the answer
        }
    }

    @Test
    void aConversationRunsThroughAiServicesWithOneMemory() {
        ScriptedChatModel model = ScriptedChatModel.fromJson("""
                {"name": "conv", "seed": 1, "tools": [
                   {"name": "lookup", "parameters": {"id": "string"}, "results": ["record {call}"]}],
                 "conversation": [
                   {"user": "first", "turns": [{"tool_calls": [{"name": "lookup", "arguments": {"id": "a"}}]}, {"answer": "A1"}]},
                   {"user": "second", "turns": [{"tool_calls": [{"name": "lookup", "arguments": {"id": "b"}}]},
                                                 {"tool_calls": [{"name": "lookup", "arguments": {"id": "c"}}]}, {"answer": "A2 after {last_result}"}]}]}""", null);
        TestSupport.Recorder rec = new TestSupport.Recorder();
        GuardedChatModel g = new GuardedChatModel(model, GuardConfig.of("conv-1"), rec);
        AgentRunResult r = Agents.aiServices(g, model.newTools(), 3, null).runTurns(model.scenario().userMessages());
        assertEquals(AgentRunResult.Ending.ANSWERED, r.ending(), r.toJson());
        assertEquals("A2 after record 3", r.answer());
        assertEquals(5, r.stats().modelCalls());
        assertEquals(5, rec.events.size());
        // the second user message arrives as an observation of the 3rd model call, after the first answer
        assertEquals("user", rec.events.get(2).get("observations").get(0).get("kind").asText());
        assertEquals("second", rec.events.get(2).get("observations").get(0).get("text").asText());
        // LangChain4j's cap (3) is per chat() call: the run made 5 model calls; the single-task styles refuse conversations
        assertThrows(UnsupportedOperationException.class,
                () -> Agents.explicit(g, model.newTools(), 10, null).runTurns(List.of("a", "b")));
    }
}
