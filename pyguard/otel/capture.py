"""Whether message content goes into the export: the switch OpenTelemetry's GenAI instrumentations read.

``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` (or ``GuardTelemetry(capture_content=...)``) takes the values
of the GenAI instrumentations: ``NO_CONTENT`` (the default), ``SPAN_ONLY``, ``EVENT_ONLY``, ``SPAN_AND_EVENT``, and the
older ``true``/``false``. pyguard writes content only as span attributes, so ``SPAN_ONLY``, ``SPAN_AND_EVENT`` and
``true`` turn it on and ``EVENT_ONLY`` leaves the spans without it (pyguard emits no content events).

Without content, nothing the user, the model or a tool wrote leaves the process: no task, answer, messages, tool
arguments or results, decision or outcome reasons, reflection texts or error messages; only names, rule ids,
actions, counts, tokens and timings.
"""

from __future__ import annotations

import logging
import os
from enum import StrEnum

from pyguard.base.errors import ConfigError
from pyguard.otel import semconv as sc

__all__: list[str] = []

log = logging.getLogger(__name__)


class ContentCapture(StrEnum):
    """The values of ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` in OpenTelemetry's GenAI utilities."""

    NO_CONTENT = "NO_CONTENT"
    SPAN_ONLY = "SPAN_ONLY"
    EVENT_ONLY = "EVENT_ONLY"
    SPAN_AND_EVENT = "SPAN_AND_EVENT"


_ON = {"true": ContentCapture.SPAN_ONLY, "1": ContentCapture.SPAN_ONLY, "yes": ContentCapture.SPAN_ONLY}
_OFF = {"false": ContentCapture.NO_CONTENT, "0": ContentCapture.NO_CONTENT, "no": ContentCapture.NO_CONTENT}


def _parse(value: str | bool | ContentCapture) -> ContentCapture:
    if isinstance(value, bool):
        return ContentCapture.SPAN_ONLY if value else ContentCapture.NO_CONTENT
    text = str(value).strip()
    if text == "":
        return ContentCapture.NO_CONTENT
    found = _ON.get(text.lower()) or _OFF.get(text.lower())
    if found is not None:
        return found
    try:
        return ContentCapture(text.upper())
    except ValueError:
        accepted = ", ".join(c.value for c in ContentCapture)
        raise ConfigError(
            f"content capture {value!r} is not one of {accepted} (or true/false): choose one; "
            "NO_CONTENT keeps message content out of the export"
        ) from None


def capture_on_spans(value: str | bool | ContentCapture | None) -> bool:
    """True when ``value`` (None: the environment variable) asks for content on spans. A bad explicit value raises
    :class:`~pyguard.base.errors.ConfigError`; a bad environment value is logged and read as ``NO_CONTENT``."""
    if value is not None:
        return _parse(value) in (ContentCapture.SPAN_ONLY, ContentCapture.SPAN_AND_EVENT)
    return content_capture_default()


def content_capture_default() -> bool:
    """True when ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` asks for content on spans (``SPAN_ONLY``,
    ``SPAN_AND_EVENT`` or ``true``)."""
    raw = os.environ.get(sc.CAPTURE_CONTENT_ENV, "")
    try:
        mode = _parse(raw)
    except ConfigError as exc:
        log.warning("pyguard: %s=%r: %s; exporting no content", sc.CAPTURE_CONTENT_ENV, raw, exc)
        return False
    return mode in (ContentCapture.SPAN_ONLY, ContentCapture.SPAN_AND_EVENT)
