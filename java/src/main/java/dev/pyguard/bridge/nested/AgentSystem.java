package dev.pyguard.bridge.nested;

/** A multi-agent system built by {@link NestedAgents}: one task in, the system's answer out. */
public interface AgentSystem {
    /** {@code supervisor}, {@code sequence} or {@code loop}. */
    String kind();

    String run(String task);
}
