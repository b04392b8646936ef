"""pyguard traces: the JSON Lines trace format, its writer and reader, the OpenAI-messages importer, and
:func:`load_runs`, which reads either format from a file or a directory.

    from pyguard.trace import TraceWriter, load_runs
    with TraceWriter("runs.jsonl") as w:
        w.start(RunStart(run_id="r1")); w.iteration(event); w.decision("r1", decision); w.end(run_end)
    runs = load_runs("runs.jsonl")             # -> list[RunRecord]; a run with no footer has end=None

The format is described in docs/trace-format.md.
"""

from pyguard.trace.loading import FORMATS, detect_format, load_runs, load_traces
from pyguard.trace.openai_import import import_openai, openai_run_to_record, parse_openai_runs
from pyguard.trace.reader import read_trace
from pyguard.trace.records import FORMAT_VERSION, RECORD_TYPES, TraceFile, TraceRun, encode_record
from pyguard.trace.writer import TraceWriter, trace_file_name, write_runs

__all__ = [
    "FORMATS",
    "FORMAT_VERSION",
    "RECORD_TYPES",
    "TraceFile",
    "TraceRun",
    "TraceWriter",
    "detect_format",
    "encode_record",
    "import_openai",
    "load_runs",
    "load_traces",
    "openai_run_to_record",
    "parse_openai_runs",
    "read_trace",
    "trace_file_name",
    "write_runs",
]
