"""The live wing: a guard for runs of a Java LangChain4j agent on the JVM. One run's lifecycle (run_host, run,
run_finish, on_stop, interrupts), the Guard (guard, guard_settings), conversations and agents attached for their
lifetime (conversation, conversations, agent_guard), run trees (nested_run, nested), and the drivers that run agents
through the guard (calibration/: live calibration; fuzzing). It stands on jvm/, the engine and the base; the offline
wing never imports it. The public names are exported by ``pyguard`` itself (``from pyguard import Guard``)."""

__all__: list[str] = []
