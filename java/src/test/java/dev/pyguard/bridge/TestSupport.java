package dev.pyguard.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pyguard.bridge.scripted.ScriptedChatModel;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

final class TestSupport {
    static final ObjectMapper MAPPER = new ObjectMapper();

    static ScriptedChatModel scenario(String name) {
        return ScriptedChatModel.fromFile(Path.of("..", "pyguard", "scenarios", name + ".json").toString(), null);
    }

    /** A Java stand-in for the Python callback: records events, answers with the function of the event. */
    static final class Recorder implements GuardCallback {
        final List<JsonNode> events = new CopyOnWriteArrayList<>();
        final Function<JsonNode, String> reply;
        Recorder(Function<JsonNode, String> reply) { this.reply = reply; }
        Recorder() { this(e -> "{\"action\":\"continue\"}"); }
        @Override public String onIteration(String json) {
            try {
                JsonNode n = MAPPER.readTree(json);
                events.add(n);
                return reply.apply(n);
            } catch (java.io.IOException e) {
                throw new RuntimeException(e);
            }
        }
    }
}
