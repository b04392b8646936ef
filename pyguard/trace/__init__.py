"""pyguard traces: the JSON Lines trace format, its writer and reader, and the importers of recorded runs (OpenAI
messages, ReAct text, mini-swe-agent and SWE-agent trajectories, BFCL results). :func:`pyguard.loading.load_runs`,
above this package, reads any of them from a file, a directory or a stream, tolerantly.

    from pyguard.loading import load_runs
    from pyguard.trace import TraceWriter
    with TraceWriter("runs.jsonl") as w:
        w.start(RunStart(run_id="r1")); w.iteration(event); w.decision("r1", decision); w.end(run_end)
    runs = load_runs("runs.jsonl")             # -> LoadResult: a list of RunRecord, plus .skipped counts
    runs = load_runs("trajs/", format="miniswe", labels="results.json", terminal_tools="finish,submit")

The formats are described in docs/trace-format.md.
"""

from pyguard.trace.ending import DEFAULT_TERMINAL_TOOLS, build_end, is_terminal, normalise_tool_names
from pyguard.trace.labels import Labels, load_labels
from pyguard.trace.openai_import import import_openai, openai_run_to_record, parse_openai_runs, parse_openai_text
from pyguard.trace.react_import import parse_react_text
from pyguard.trace.reader import read_trace, read_trace_bytes
from pyguard.trace.records import FORMAT_VERSION, RECORD_TYPES, TraceFile, TraceRun, encode_record
from pyguard.trace.tolerance import LoadResult, SkipLog
from pyguard.trace.writer import TraceWriter, trace_file_name, write_runs

__all__ = [
    "DEFAULT_TERMINAL_TOOLS",
    "FORMAT_VERSION",
    "LoadResult",
    "Labels",
    "RECORD_TYPES",
    "SkipLog",
    "TraceFile",
    "TraceRun",
    "TraceWriter",
    "build_end",
    "encode_record",
    "import_openai",
    "is_terminal",
    "load_labels",
    "normalise_tool_names",
    "openai_run_to_record",
    "parse_openai_runs",
    "parse_openai_text",
    "parse_react_text",
    "read_trace",
    "read_trace_bytes",
    "trace_file_name",
    "write_runs",
]
