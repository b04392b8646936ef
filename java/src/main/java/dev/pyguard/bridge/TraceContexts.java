package dev.pyguard.bridge;

import java.lang.reflect.Method;

/**
 * The W3C {@code traceparent} of the OpenTelemetry span active on the calling thread, read through the OpenTelemetry
 * Java API by reflection when the application has it on its classpath (the Java agent, Spring Boot or Quarkus
 * instrumentation), so pyguard's jar needs no OpenTelemetry dependency. {@link GuardSensor} calls it in
 * {@code onRequest}, on the agent's own thread, because the guard callback may run on another thread
 * ({@code pyguard-callback-N}) where no span is active.
 *
 * <p>Never throws: without the API, or with no valid span active, it returns null.
 */
public final class TraceContexts {

    private static final Method CURRENT;
    private static final Method SPAN_CONTEXT;
    private static final Method IS_VALID;
    private static final Method TRACE_ID;
    private static final Method SPAN_ID;
    private static final Method IS_SAMPLED;

    static {
        Method[] found = new Method[6];
        try {
            Class<?> span = Class.forName("io.opentelemetry.api.trace.Span", false, TraceContexts.class.getClassLoader());
            Class<?> ctx = Class.forName("io.opentelemetry.api.trace.SpanContext", false, span.getClassLoader());
            found = new Method[] {
                span.getMethod("current"), span.getMethod("getSpanContext"), ctx.getMethod("isValid"),
                ctx.getMethod("getTraceId"), ctx.getMethod("getSpanId"), ctx.getMethod("isSampled"),
            };
        } catch (ReflectiveOperationException | LinkageError e) {
            found = new Method[6];  // no OpenTelemetry API on the classpath
        }
        CURRENT = found[0];
        SPAN_CONTEXT = found[1];
        IS_VALID = found[2];
        TRACE_ID = found[3];
        SPAN_ID = found[4];
        IS_SAMPLED = found[5];
    }

    private TraceContexts() {}

    /** True when the OpenTelemetry API is on the classpath. */
    public static boolean available() { return CURRENT != null; }

    /** {@code 00-<trace id>-<span id>-<flags>} of {@code Span.current()}, or null (no API, no valid span). */
    public static String currentTraceparent() {
        if (CURRENT == null) return null;
        try {
            Object context = SPAN_CONTEXT.invoke(CURRENT.invoke(null));
            if (!Boolean.TRUE.equals(IS_VALID.invoke(context))) return null;
            boolean sampled = Boolean.TRUE.equals(IS_SAMPLED.invoke(context));
            return "00-" + TRACE_ID.invoke(context) + "-" + SPAN_ID.invoke(context) + (sampled ? "-01" : "-00");
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }
}
