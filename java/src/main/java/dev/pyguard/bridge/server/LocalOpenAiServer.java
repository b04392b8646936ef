package dev.pyguard.bridge.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.pyguard.bridge.scripted.ConversationView;
import dev.pyguard.bridge.scripted.Scenario;
import dev.pyguard.bridge.scripted.ScenarioPlayer;
import dev.pyguard.bridge.scripted.ScriptedReply;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A local OpenAI-compatible server (JDK {@code com.sun.net.httpserver}, loopback only) that serves a {@link Scenario}
 * over {@code POST /v1/chat/completions}, with {@code usage}, so LangChain4j's real {@code OpenAiChatModel}
 * ({@code baseUrl} pointed at {@link #baseUrl()}) runs against it exactly as against a hosted provider. A request with
 * {@code "stream": true} is answered with server-sent events ({@link SseCompletion}), for
 * {@code OpenAiStreamingChatModel}.
 *
 * <p>Its replies depend on the request only (see {@link ConversationView}), so one server serves many runs at once.
 * Fault modes, applied from the {@code faultFrom}-th request on (1-based, counted per server): {@code omit_usage},
 * {@code http_500}, {@code http_429} (with {@code Retry-After: 0}), {@code malformed_json}.
 */
public final class LocalOpenAiServer implements AutoCloseable {

    public enum Fault { NONE, OMIT_USAGE, HTTP_500, HTTP_429, MALFORMED_JSON;
        public static Fault parse(String s) {
            if (s == null || s.isBlank()) return NONE;
            try {
                return valueOf(s.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("fault '" + s + "' is unknown; use none, omit_usage, http_500, http_429 or malformed_json");
            }
        }
    }

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final AtomicInteger THREADS = new AtomicInteger();

    private final ScenarioPlayer player;
    private final HttpServer server;
    private final ExecutorService pool;
    private final AtomicInteger requests = new AtomicInteger();
    private final AtomicInteger completions = new AtomicInteger();
    private final java.util.concurrent.atomic.AtomicLong inputTokens = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong outputTokens = new java.util.concurrent.atomic.AtomicLong();
    private volatile Fault fault;
    private volatile int faultFrom;

    private LocalOpenAiServer(ScenarioPlayer player, int port, Fault fault, int faultFrom) throws IOException {
        this.player = player;
        this.fault = fault;
        this.faultFrom = Math.max(1, faultFrom);
        this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
        this.pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "pyguard-openai-server-" + THREADS.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(pool);
        server.createContext("/v1/chat/completions", this::handle);
        server.createContext("/", ex -> send(ex, 404, error("not found: " + ex.getRequestURI().getPath()
                + " (this server serves POST /v1/chat/completions)", "not_found")));
        // HttpServer's dispatcher thread inherits the daemon flag of the thread that starts it: start it from a
        // daemon thread, so a server someone forgot to stop never keeps the JVM (and the Python process) alive.
        Thread starter = new Thread(server::start, "pyguard-openai-server-start");
        starter.setDaemon(true);
        starter.start();
        try {
            starter.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while starting the server", e);
        }
    }

    /**
     * Starts a server on 127.0.0.1.
     *
     * @param port      0 for an ephemeral port
     * @param fault     none, omit_usage, http_500, http_429 or malformed_json (null = none)
     * @param faultFrom the first (1-based) request the fault applies to
     */
    public static LocalOpenAiServer start(String scenarioJson, Long seed, int port, String fault, int faultFrom) {
        Scenario scenario = Scenario.parse(scenarioJson);
        if (port < 0 || port > 65535) throw new IllegalArgumentException("port=" + port + " must be 0 (ephemeral) or 1..65535");
        try {
            return new LocalOpenAiServer(new ScenarioPlayer(scenario, seed), port, Fault.parse(fault), faultFrom);
        } catch (IOException e) {
            throw new IllegalStateException("cannot start the local OpenAI server on 127.0.0.1:" + port + ": " + e.getMessage(), e);
        }
    }

    public static LocalOpenAiServer start(String scenarioJson) { return start(scenarioJson, null, 0, null, 1); }

    public String baseUrl() { return "http://127.0.0.1:" + port() + "/v1"; }
    public int port() { return server.getAddress().getPort(); }
    public int requests() { return requests.get(); }
    /** Requests answered with a scripted completion (faulty answers excluded). */
    public int completions() { return completions.get(); }
    public Scenario scenario() { return player.scenario(); }
    /** Sum of {@code usage.prompt_tokens} this server sent. */
    public long reportedInputTokens() { return inputTokens.get(); }
    /** Sum of {@code usage.completion_tokens} this server sent. */
    public long reportedOutputTokens() { return outputTokens.get(); }
    public void setFault(String fault, int faultFrom) { this.fault = Fault.parse(fault); this.faultFrom = Math.max(1, faultFrom); }

    public void stop() {
        server.stop(0);
        pool.shutdownNow();
    }

    @Override public void close() { stop(); }

    private void handle(HttpExchange ex) throws IOException {
        try {
            int n = requests.incrementAndGet();
            if (!"POST".equalsIgnoreCase(ex.getRequestMethod())) {
                send(ex, 405, error("use POST", "invalid_request_error"));
                return;
            }
            JsonNode body;
            try (InputStream in = ex.getRequestBody()) {
                body = MAPPER.readTree(in);
            } catch (IOException e) {
                send(ex, 400, error("request body is not valid JSON: " + e.getMessage(), "invalid_request_error"));
                return;
            }
            JsonNode messages = body == null ? null : body.get("messages");
            if (messages == null || !messages.isArray() || messages.isEmpty()) {
                send(ex, 400, error("'messages' must be a non-empty array", "invalid_request_error"));
                return;
            }
            Fault f = n >= faultFrom ? fault : Fault.NONE;
            switch (f) {
                case HTTP_500 -> { send(ex, 500, error("scripted internal server error", "server_error")); return; }
                case HTTP_429 -> {
                    ex.getResponseHeaders().add("Retry-After", "0");
                    send(ex, 429, error("Rate limit reached (scripted)", "rate_limit_exceeded"));
                    return;
                }
                case MALFORMED_JSON -> { send(ex, 200, "{\"id\":\"chatcmpl-broken\",\"choices\":[{\"index\":0,\"message\":{\"role\":"); return; }
                default -> { }
            }
            ConversationView v = view(messages);
            boolean toolsOffered = body.path("tools").isArray() && !body.path("tools").isEmpty();
            ScriptedReply r = player.isWrapUp(v, toolsOffered) ? player.wrapUp(v) : player.play(v);
            completions.incrementAndGet();
            if (f != Fault.OMIT_USAGE && r.inputTokens() != null) {
                inputTokens.addAndGet(r.inputTokens());
                outputTokens.addAndGet(r.outputTokens());
            }
            String model = body.path("model").asText(player.scenario().name());
            if (body.path("stream").asBoolean(false)) {
                boolean usage = f != Fault.OMIT_USAGE && body.path("stream_options").path("include_usage").asBoolean(false);
                SseCompletion.send(ex, r, model, n, usage);
                return;
            }
            send(ex, 200, completion(r, model, n, f != Fault.OMIT_USAGE));
        } catch (Throwable t) {
            send(ex, 500, error("server error: " + t, "server_error"));
        }
    }

    /** The OpenAI message list as the scenario player sees it (same rules as ScriptedChatModel.view). */
    public static ConversationView view(JsonNode messages) {
        List<ConversationView.Message> out = new ArrayList<>();
        String previous = null;
        for (JsonNode m : messages) {
            String role = m.path("role").asText();
            String content = content(m.get("content"));
            long chars = content.length();
            List<String> ids = new ArrayList<>();
            ConversationView.Role r;
            switch (role) {
                case "assistant" -> {
                    r = ConversationView.Role.ASSISTANT;
                    for (JsonNode tc : m.path("tool_calls")) {
                        chars += tc.path("function").path("name").asText().length() + tc.path("function").path("arguments").asText().length();
                        ids.add(tc.path("id").asText(""));
                    }
                }
                // Over HTTP only text arrives: the guard's reflection is the user message right after tool results
                // (a user's own message follows the model's answer), the one place pyguard puts it.
                case "user" -> r = "tool".equals(previous) ? ConversationView.Role.REFLECTION : ConversationView.Role.USER;
                case "tool" -> r = ConversationView.Role.TOOL;
                default -> r = ConversationView.Role.SYSTEM;
            }
            out.add(new ConversationView.Message(r, content, ids, chars));
            previous = role;
        }
        return ConversationView.of(out);
    }

    private static String content(JsonNode c) {
        if (c == null || c.isNull()) return "";
        if (c.isTextual()) return c.asText();
        if (c.isArray()) {
            StringBuilder sb = new StringBuilder();
            for (JsonNode part : c) {
                if (part.has("text")) {
                    if (sb.length() > 0) sb.append('\n');
                    sb.append(part.get("text").asText());
                }
            }
            return sb.toString();
        }
        return c.toString();
    }

    private static String completion(ScriptedReply r, String model, int n, boolean usage) {
        ObjectNode o = MAPPER.createObjectNode();
        o.put("id", "chatcmpl-pyguard-" + n);
        o.put("object", "chat.completion");
        o.put("created", System.currentTimeMillis() / 1000);
        o.put("model", model);
        ArrayNode choices = o.putArray("choices");
        ObjectNode choice = choices.addObject();
        choice.put("index", 0);
        ObjectNode msg = choice.putObject("message");
        msg.put("role", "assistant");
        if (r.text() == null) msg.putNull("content"); else msg.put("content", r.text());
        if (!r.isFinal()) {
            ArrayNode calls = msg.putArray("tool_calls");
            for (ScriptedReply.Call c : r.toolCalls()) {
                ObjectNode tc = calls.addObject();
                tc.put("id", c.id());
                tc.put("type", "function");
                ObjectNode fn = tc.putObject("function");
                fn.put("name", c.name());
                fn.put("arguments", c.arguments());
            }
        }
        choice.put("finish_reason", r.isFinal() ? "stop" : "tool_calls");
        if (usage && r.inputTokens() != null) {
            ObjectNode u = o.putObject("usage");
            u.put("prompt_tokens", r.inputTokens());
            u.put("completion_tokens", r.outputTokens());
            u.put("total_tokens", r.totalTokens());
        }
        return o.toString();
    }

    private static String error(String message, String type) {
        ObjectNode o = MAPPER.createObjectNode();
        ObjectNode e = o.putObject("error");
        e.put("message", message);
        e.put("type", type);
        return o.toString();
    }

    private static void send(HttpExchange ex, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
        ex.close();
    }
}
