package dev.pyguard.bridge.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.pyguard.bridge.scripted.ScriptedReply;
import dev.pyguard.bridge.scripted.ScriptedStreamingChatModel;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * A scripted reply as an OpenAI streamed completion ({@code "stream": true}): server-sent events of
 * {@code chat.completion.chunk} objects — the text in chunks, each tool call (id, name, then its arguments), the
 * {@code finish_reason}, a last chunk with {@code usage} when the request asked for it
 * ({@code stream_options.include_usage}) — then {@code data: [DONE]}.
 */
final class SseCompletion {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private SseCompletion() {}

    static void send(HttpExchange ex, ScriptedReply r, String model, int n, boolean usage) throws IOException {
        ex.getResponseHeaders().set("Content-Type", "text/event-stream");
        ex.getResponseHeaders().set("Cache-Control", "no-cache");
        ex.sendResponseHeaders(200, 0); // chunked
        String id = "chatcmpl-pyguard-" + n;
        try (OutputStream out = ex.getResponseBody()) {
            ObjectNode first = chunk(id, model);
            first.withArray("choices").addObject().put("index", 0).putObject("delta").put("role", "assistant");
            event(out, first);
            for (String piece : ScriptedStreamingChatModel.chunks(r.text())) {
                ObjectNode c = chunk(id, model);
                c.withArray("choices").addObject().put("index", 0).putObject("delta").put("content", piece);
                event(out, c);
            }
            int index = 0;
            for (ScriptedReply.Call call : r.toolCalls()) {
                ObjectNode head = chunk(id, model);
                ObjectNode tc = head.withArray("choices").addObject().put("index", 0).putObject("delta")
                        .putArray("tool_calls").addObject();
                tc.put("index", index).put("id", call.id()).put("type", "function");
                tc.putObject("function").put("name", call.name()).put("arguments", "");
                event(out, head);
                ObjectNode args = chunk(id, model);
                ArrayNode calls = args.withArray("choices").addObject().put("index", 0).putObject("delta").putArray("tool_calls");
                calls.addObject().put("index", index).putObject("function").put("arguments", call.arguments());
                event(out, args);
                index++;
            }
            ObjectNode fin = chunk(id, model);
            ObjectNode choice = fin.withArray("choices").addObject().put("index", 0);
            choice.putObject("delta");
            choice.put("finish_reason", r.isFinal() ? "stop" : "tool_calls");
            event(out, fin);
            if (usage && r.inputTokens() != null) {
                ObjectNode u = chunk(id, model);
                u.putArray("choices");
                ObjectNode usageNode = u.putObject("usage");
                usageNode.put("prompt_tokens", r.inputTokens());
                usageNode.put("completion_tokens", r.outputTokens());
                usageNode.put("total_tokens", r.totalTokens());
                event(out, u);
            }
            out.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
            out.flush();
        }
        ex.close();
    }

    private static ObjectNode chunk(String id, String model) {
        ObjectNode o = MAPPER.createObjectNode();
        o.put("id", id);
        o.put("object", "chat.completion.chunk");
        o.put("created", System.currentTimeMillis() / 1000);
        o.put("model", model);
        return o;
    }

    private static void event(OutputStream out, ObjectNode o) throws IOException {
        out.write(("data: " + o + "\n\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }
}
