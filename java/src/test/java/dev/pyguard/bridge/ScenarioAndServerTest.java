package dev.pyguard.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.pyguard.bridge.scripted.ConversationView;
import dev.pyguard.bridge.scripted.Scenario;
import dev.pyguard.bridge.scripted.ScenarioException;
import dev.pyguard.bridge.scripted.ScenarioPlayer;
import dev.pyguard.bridge.scripted.ScriptedChatModel;
import dev.pyguard.bridge.scripted.ScriptedReply;
import dev.pyguard.bridge.server.LocalOpenAiServer;
import dev.pyguard.bridge.server.OpenAiClients;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.*;

class ScenarioAndServerTest {

    private static String file(String name) throws Exception {
        return Files.readString(Path.of("..", "pyguard", "scenarios", name + ".json"));
    }

    @Test
    void playerIsAPureFunctionOfTheConversation() throws Exception {
        ScenarioPlayer p = new ScenarioPlayer(Scenario.parse(file("logistics_incident")), 3L);
        for (int n = 0; n < 30; n++) {
            ConversationView v = new ConversationView(n, null, List.of("r"), 1000);
            assertEquals(p.play(v), p.play(v));
        }
        ScriptedReply first = p.play(new ConversationView(0, null, List.of(), 10));
        assertEquals("{\"orderId\":\"12345\"}", first.toolCalls().get(0).arguments());
        assertEquals("{\"orderId\":\"SO-12345\"}", p.play(new ConversationView(7, null, List.of(), 10)).toolCalls().get(0).arguments());
        // after the SO- phase it loops there (answering with p=0.5 each turn)
        for (int n = 10; n < 40; n++) {
            ScriptedReply r = p.play(new ConversationView(n, null, List.of(), 10));
            assertTrue(r.isFinal() || r.toolCalls().get(0).arguments().contains("SO-12345"));
        }
    }

    @Test
    void onResultAndUsage() throws Exception {
        ScenarioPlayer p = new ScenarioPlayer(Scenario.parse(file("polling")), null);
        assertFalse(p.play(new ConversationView(3, null, List.of("job exp-77: RUNNING 95%"), 400)).isFinal());
        ScriptedReply done = p.play(new ConversationView(4, null, List.of("job exp-77: DONE, 1204 rows"), 400));
        assertTrue(done.isFinal());
        assertEquals("The export finished: job exp-77: DONE, 1204 rows", done.text());
        assertEquals(120 + 100, done.inputTokens()); // base 120 + 400 chars / 4
    }

    @Test
    void scenarioErrorsNameTheField() {
        ScenarioException e = assertThrows(ScenarioException.class,
                () -> Scenario.parse("{\"name\":\"x\",\"turns\":[{\"answer\":\"a\",\"repeat\":0}]}"));
        assertTrue(e.getMessage().contains("turns[0].repeat=0"), e.getMessage());
        e = assertThrows(ScenarioException.class, () -> Scenario.parse("{\"name\":\"x\",\"turns\":[],\"loop_from\":0}"));
        assertTrue(e.getMessage().contains("'turns' must be a non-empty list"));
        e = assertThrows(ScenarioException.class, () -> Scenario.parse("[1]"));
        assertTrue(e.getMessage().contains("must be a JSON object"));
    }

    @Test
    void openAiChatModelRunsAgainstTheLocalServer() throws Exception {
        try (LocalOpenAiServer server = LocalOpenAiServer.start(file("convergent"))) {
            OpenAiChatModel client = OpenAiClients.chatModel(server.baseUrl(), "convergent");
            TestSupport.Recorder rec = new TestSupport.Recorder();
            GuardedChatModel g = new GuardedChatModel(client, GuardConfig.of("http-1"), rec);
            AgentRunResult r = Agents.aiServices(g, ScriptedChatModel.toolsFor(server.scenario()), 100, "You are a logistics agent.")
                    .run("Where is order 34567?");
            assertEquals(AgentRunResult.Ending.ANSWERED, r.ending(), r.toJson());
            assertEquals(4, server.requests());
            long in = 0;
            for (JsonNode e : rec.events) in += e.get("input_tokens").asLong();
            assertEquals(server.reportedInputTokens(), in);
            JsonNode first = rec.events.get(0);
            assertEquals("OPEN_AI", first.get("provider").asText());
            assertEquals("system", first.get("observations").get(0).get("kind").asText());
        }
    }

    @Test
    void malformedJsonFaultFailsFastWithAnErrorEvent() throws Exception {
        try (LocalOpenAiServer server = LocalOpenAiServer.start(file("convergent"), null, 0, "malformed_json", 1)) {
            TestSupport.Recorder rec = new TestSupport.Recorder();
            GuardedChatModel g = new GuardedChatModel(OpenAiClients.chatModel(server.baseUrl(), "m"), GuardConfig.of("http-2"), rec);
            AgentRunResult r = Agents.explicit(g, ScriptedChatModel.toolsFor(server.scenario()), 10, null).run("x");
            assertEquals(AgentRunResult.Ending.FAILED, r.ending());
            assertEquals(1, rec.events.size());
            assertFalse(rec.events.get(0).get("error").isNull());
        }
    }
}
