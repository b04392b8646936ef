"""pyguard: drive Java LangChain4j agents from Python and guard their tool-calling loops.

``import pyguard`` starts no JVM and imports no jpype: the JVM lives in :mod:`pyguard.jvm` only.
"""

from pyguard.decisions import Action, Decision
from pyguard.errors import (
    BudgetError,
    ConfigError,
    InputError,
    JvmError,
    PyguardError,
    RunError,
    TraceFormatError,
)
from pyguard.events import IterationEvent, Observation, Outcome, RunEnd, RunRecord, RunStart, ToolCall

__version__ = "0.1.0"

__all__ = [
    "Action",
    "BudgetError",
    "ConfigError",
    "Decision",
    "InputError",
    "IterationEvent",
    "JvmError",
    "Observation",
    "Outcome",
    "PyguardError",
    "RunEnd",
    "RunError",
    "RunRecord",
    "RunStart",
    "ToolCall",
    "TraceFormatError",
    "__version__",
]
