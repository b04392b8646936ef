package dev.pyguard.bridge.scripted;

/** A scenario file or string is invalid; the message names the field and the bad value. */
public final class ScenarioException extends IllegalArgumentException {
    public ScenarioException(String message) { super(message); }
    public ScenarioException(String message, Throwable cause) { super(message, cause); }
}
