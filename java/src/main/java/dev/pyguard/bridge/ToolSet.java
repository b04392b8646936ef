package dev.pyguard.bridge;

import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.agent.tool.ToolSpecifications;
import dev.langchain4j.service.tool.DefaultToolExecutor;
import dev.langchain4j.service.tool.ToolExecutor;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The tools of one run: objects with {@code @Tool} methods and/or explicit {@link ToolSpecification} →
 * {@link ToolExecutor} pairs. AiServices and agentic agents receive the objects as objects (LangChain4j's own
 * {@code @Tool} path) and the pairs as a map; {@link ExplicitAgentLoop} uses {@link #asMap()}.
 */
public final class ToolSet {

    private final List<Object> objects;
    private final Map<ToolSpecification, ToolExecutor> map;

    private ToolSet(List<Object> objects, Map<ToolSpecification, ToolExecutor> map) {
        this.objects = List.copyOf(objects);
        this.map = new LinkedHashMap<>(map);
    }

    public static ToolSet of(Object... objectsWithTools) {
        for (Object o : objectsWithTools) {
            if (o == null) throw new IllegalArgumentException("a tool object is null");
            if (o instanceof ToolSet) throw new IllegalArgumentException("pass the ToolSet itself, not inside ToolSet.of(...)");
            boolean any = Arrays.stream(o.getClass().getMethods()).anyMatch(m -> m.isAnnotationPresent(Tool.class));
            if (!any) throw new IllegalArgumentException(o.getClass().getName() + " has no public @Tool method");
        }
        return new ToolSet(Arrays.asList(objectsWithTools), Map.of());
    }

    public static ToolSet fromMap(Map<ToolSpecification, ToolExecutor> tools) {
        return new ToolSet(List.of(), tools);
    }

    public static ToolSet empty() { return new ToolSet(List.of(), Map.of()); }

    private static final ClassValue<Method> NEW_TOOLS = new ClassValue<>() {
        @Override protected Method computeValue(Class<?> type) {
            try {
                Method m = type.getMethod("newTools");
                return ToolSet.class.isAssignableFrom(m.getReturnType()) ? m : null;
            } catch (NoSuchMethodException e) {
                return null;
            }
        }
    };

    /**
     * The tools a model brings with it, fresh: a model with a public no-argument {@code ToolSet newTools()} method
     * (pyguard's scripted models: their scenario's tools) makes them; a {@link GuardedChatModel} or
     * {@link GuardedStreamingChatModel} is looked through to the model it wraps; any other model brings none (an empty
     * set).
     */
    public static ToolSet ownedBy(Object model) {
        Object inner = model instanceof GuardedChatModel g ? g.delegate()
                : model instanceof AgentGuardedChatModel a ? a.delegate()
                : model instanceof GuardedStreamingChatModel s ? s.delegate() : model;
        if (inner == null) return empty();
        Method m = NEW_TOOLS.get(inner.getClass());
        if (m == null) return empty();
        try {
            return (ToolSet) m.invoke(inner);
        } catch (ReflectiveOperationException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new IllegalStateException(inner.getClass().getName() + ".newTools() failed: " + cause, cause);
        }
    }

    public ToolSet plus(ToolSet other) {
        List<Object> o = new ArrayList<>(objects);
        o.addAll(other.objects);
        Map<ToolSpecification, ToolExecutor> m = new LinkedHashMap<>(map);
        m.putAll(other.map);
        return new ToolSet(o, m);
    }

    public List<Object> objects() { return objects; }
    public Map<ToolSpecification, ToolExecutor> explicitTools() { return map; }
    public boolean isEmpty() { return objects.isEmpty() && map.isEmpty(); }

    /** Every tool as a specification/executor pair ({@code @Tool} methods through LangChain4j's DefaultToolExecutor). */
    public Map<ToolSpecification, ToolExecutor> asMap() {
        Map<ToolSpecification, ToolExecutor> all = new LinkedHashMap<>();
        for (Object o : objects) {
            for (Method m : o.getClass().getDeclaredMethods()) {
                if (m.isAnnotationPresent(Tool.class)) {
                    all.put(ToolSpecifications.toolSpecificationFrom(m), new DefaultToolExecutor(o, m));
                }
            }
        }
        all.putAll(map);
        return all;
    }

    public List<String> names() {
        List<String> names = new ArrayList<>();
        for (ToolSpecification s : asMap().keySet()) names.add(s.name());
        return names;
    }
}
