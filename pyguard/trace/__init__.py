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

from pyguard.trace.labels import Labels, load_labels
from pyguard.trace.openai_import import import_openai, parse_openai_runs
from pyguard.trace.reader import read_trace
from pyguard.trace.records import FORMAT_VERSION, TraceFile, TraceRun
from pyguard.trace.tolerance import LoadResult
from pyguard.trace.writer import TraceWriter, trace_file_name, write_runs

__all__ = [
    "FORMAT_VERSION",
    "LoadResult",
    "Labels",
    "TraceFile",
    "TraceRun",
    "TraceWriter",
    "import_openai",
    "load_labels",
    "parse_openai_runs",
    "read_trace",
    "trace_file_name",
    "write_runs",
]
