"""The one format table: every format :func:`pyguard.loading.load_runs` reads, how it is recognised, how it is read.

A text format is recognised by one run object (``run_check``); a binary or file-level format by the file's first
bytes (``file_check``). Every file is read through :func:`pyguard.base.safe_reader.read_source` (the line-size limit) and
every JSON text through :func:`pyguard.base.safe_reader.loads` (nesting depth, integer size). A new importer adds one
:class:`Format` row here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pyguard.base.errors import TraceFormatError, UnreadableRecord
from pyguard.base.events import RunRecord
from pyguard.base.safe_reader import TOO_LARGE, SourceBytes, loads, oversize_error, read_source
from pyguard.otel.otlp_import import import_otlp
from pyguard.otel.otlp_json import looks_like_otlp
from pyguard.store.parquet import is_parquet, read_parquet
from pyguard.trace.atif_import import is_atif_run, parse_atif
from pyguard.trace.bfcl_import import is_bfcl_run, parse_bfcl
from pyguard.trace.containers import parse_container
from pyguard.trace.intercode_import import is_intercode_run, parse_intercode
from pyguard.trace.labels import Labels
from pyguard.trace.medagent_import import is_medagent_run, parse_medagent
from pyguard.trace.miniswe_import import is_miniswe_run, parse_miniswe
from pyguard.trace.openai_import import is_openai_run, parse_openai_text
from pyguard.trace.react_import import is_react_run, parse_react_text
from pyguard.trace.reader import read_trace_bytes
from pyguard.trace.records import RECORD_TYPES, TraceFile, TraceRun
from pyguard.trace.sweagent_import import is_sweagent_run, parse_sweagent
from pyguard.trace.tau2_import import is_tau2_file, is_tau2_simulation, parse_tau2
from pyguard.trace.textworld_import import is_textworld_run, parse_textworld
from pyguard.trace.tolerance import SkipLog

__all__: list[str] = []

_SNIFF_LINES = 20  # JSON Lines records looked at to detect a format


@dataclass
class Recording:
    """One file or stream being loaded, with the options of the load; its bytes are read once, when first asked."""

    name: str
    """As given (``-`` for standard input)."""
    stem: str
    """What names its runs when they carry no id: the file name without its suffix."""
    log: SkipLog
    terminal_tools: frozenset[str] | None = None
    labels: Labels | None = None
    _source: SourceBytes | None = field(default=None, repr=False)

    @property
    def shown(self) -> str:
        return "<stdin>" if self.name == "-" else self.name

    def source(self) -> SourceBytes:
        if self._source is None:
            self._source = read_source(self.name)
        return self._source

    def _whole_text(self) -> str:
        """The text; a text that held nothing but over-size lines is refused, naming the limit."""
        src = self.source()
        text = src.text()
        if src.oversize and not text.strip():
            src.refuse_oversize()
        return text

    def detect(self) -> str | None:
        """The format of this recording's text (None when it is empty)."""
        return detect_text(self._whole_text(), self.shown)

    def text(self) -> str:
        """The text for an importer: each over-size line is counted in the log as a record that cannot be read
        (strict: raised)."""
        text = self._whole_text()
        src = self.source()
        for number in src.oversize:
            self.log.skip(UnreadableRecord(str(oversize_error(self.shown, number, src.limit)), reason=TOO_LARGE))
        return text

    @property
    def importer_options(self) -> dict[str, Any]:
        return {"log": self.log, "terminal_tools": self.terminal_tools, "labels": self.labels}


def _runs(records: list[RunRecord], rec: Recording) -> TraceFile:
    return TraceFile(path=rec.shown, runs=[TraceRun(record=r, source=rec.shown) for r in records])


def _pyguard(rec: Recording) -> TraceFile:
    src = rec.source()
    src.refuse_oversize()  # a pyguard trace is read strictly: a damaged line is an error
    return read_trace_bytes(src.data, rec.shown)


def _container(
    parse: Callable[..., list[RunRecord]], check: Callable[[Any], bool], *, named: bool
) -> Callable[[Recording], TraceFile]:
    def read(rec: Recording) -> TraceFile:
        items = parse_container(rec.text(), rec.shown, rec.log, is_run=check)
        extra = {"default_id": rec.stem} if named else {}
        return _runs(parse(items, source=rec.shown, **extra, **rec.importer_options), rec)

    return read


def _text_importer(parse: Callable[..., list[RunRecord]]) -> Callable[[Recording], TraceFile]:
    def read(rec: Recording) -> TraceFile:
        return _runs(parse(rec.text(), source=rec.shown, default_id_prefix=rec.stem, **rec.importer_options), rec)

    return read


def _otel(rec: Recording) -> TraceFile:
    return _runs(import_otlp(rec.name).runs, rec)


def _parquet(rec: Recording) -> TraceFile:
    return TraceFile(path=rec.shown, runs=read_parquet(rec.name, log=rec.log))


def _is_tau2(obj: Any) -> bool:
    return is_tau2_file(obj) or is_tau2_simulation(obj)


@dataclass(frozen=True)
class Format:
    """One format: its name, how it is recognised, how a file of it is read into runs."""

    name: str
    read: Callable[[Recording], TraceFile]
    run_check: Callable[[Any], bool] | None = None
    """Recognises one run object of this format (text formats); None for pyguard traces (a record ``type``)."""
    specificity: int = 0
    """Among run checks, the higher is tried first (a τ²-bench file also has OpenAI-like messages)."""
    file_check: Callable[[str], bool] | None = None
    """Recognises a file by its first bytes (OTLP JSON exports, Parquet): tried before the text formats."""
    suffixes: tuple[str, ...] = ()
    """File suffixes read from a directory besides .jsonl, .ndjson, .json and .traj."""


FORMAT_TABLE: tuple[Format, ...] = (
    Format("pyguard", _pyguard),
    Format("openai", _text_importer(parse_openai_text), run_check=is_openai_run, specificity=0),
    Format("react", _text_importer(parse_react_text), run_check=is_react_run, specificity=1),
    Format("miniswe", _container(parse_miniswe, is_miniswe_run, named=True), run_check=is_miniswe_run, specificity=3),
    Format(
        "sweagent", _container(parse_sweagent, is_sweagent_run, named=True), run_check=is_sweagent_run, specificity=2
    ),
    Format("bfcl", _container(parse_bfcl, is_bfcl_run, named=False), run_check=is_bfcl_run, specificity=4),
    Format(
        "medagent", _container(parse_medagent, is_medagent_run, named=False), run_check=is_medagent_run, specificity=5
    ),
    Format("tau2", _container(parse_tau2, _is_tau2, named=False), run_check=_is_tau2, specificity=6),
    Format(
        "intercode",
        _container(parse_intercode, is_intercode_run, named=False),
        run_check=is_intercode_run,
        specificity=7,
    ),
    Format("atif", _container(parse_atif, is_atif_run, named=False), run_check=is_atif_run, specificity=8),
    Format(
        "textworld",
        _container(parse_textworld, is_textworld_run, named=False),
        run_check=is_textworld_run,
        specificity=9,
    ),
    Format("otel", _otel, file_check=looks_like_otlp),
    Format("parquet", _parquet, file_check=is_parquet, suffixes=(".parquet",)),
)
FORMATS: tuple[str, ...] = tuple(f.name for f in FORMAT_TABLE)
BY_NAME: dict[str, Format] = {f.name: f for f in FORMAT_TABLE}
_RUN_CHECKS = sorted((f for f in FORMAT_TABLE if f.run_check is not None), key=lambda f: -f.specificity)
_FORMAT_HINT = "name the format (--format on the command line, format= in load_runs): one of " + ", ".join(
    repr(f) for f in FORMATS
)


def _kind_of(obj: Any) -> str | None:
    return next((f.name for f in _RUN_CHECKS if f.run_check is not None and f.run_check(obj)), None)


def _try_loads(text: str, source: str, line: int | None) -> Any:
    """A JSON value, or None when the text is not JSON or a limit refuses it (detection looks further)."""
    try:
        return loads(text, source=source, line=line)
    except (ValueError, TraceFormatError):
        return None


def detect_file(path: str) -> str | None:
    """The file-level format of ``path`` (OTLP JSON, Parquet), or None when it is none of them."""
    return next((f.name for f in FORMAT_TABLE if f.file_check is not None and f.file_check(path)), None)


def detect_text(text: str, name: str = "<input>") -> str | None:
    """The format of one recording's text; None when it is empty. Raises TraceFormatError when it cannot tell, and
    when the only way left to tell is a JSON document a limit of the safe reader refuses."""
    stripped = text.lstrip()
    if not stripped:
        return None
    lines = stripped.split("\n", _SNIFF_LINES)[:_SNIFF_LINES]
    first = _try_loads(lines[0], name, 1)
    if isinstance(first, dict):
        is_pyguard = first.get("type") in RECORD_TYPES
        kind = _kind_of(first)
        if is_pyguard and kind is not None:
            raise TraceFormatError(
                f"the format is ambiguous: the first record has both a pyguard 'type' and {kind} run keys; {_FORMAT_HINT}",
                path=name,
                line=1,
            )
        if is_pyguard:
            return "pyguard"
        if kind is not None:
            return kind
    for line in lines[1:]:  # JSON Lines whose first record is unreadable (a test that errored): look further
        kind = _kind_of(_try_loads(line, name, None))
        if kind is not None:
            return kind
    if not stripped.startswith(("[", "{")):
        if is_react_run({"traj": text}):
            return "react"
        raise TraceFormatError(
            f"cannot tell the format: the text is neither JSON nor a ReAct transcript; {_FORMAT_HINT}",
            path=name,
            line=1,
        )
    refused: TraceFormatError | None = None
    try:
        whole: Any = loads(text, source=name)
    except TraceFormatError as exc:  # a limit: refused below, naming it, unless the first record tells
        refused, whole = exc, first
    except ValueError:
        whole = first
    candidates: list[Any] = []
    if isinstance(whole, list):
        candidates = whole[:1]
    elif isinstance(whole, dict):
        candidates = [whole] + [v for v in list(whole.values())[:1] if isinstance(v, dict)]
    for obj in candidates:
        kind = _kind_of(obj)
        if kind is not None:
            return kind
    if refused is not None:
        raise refused
    raise TraceFormatError(
        "cannot tell the format: the first record has neither a pyguard 'type' (" + ", ".join(RECORD_TYPES) + ") nor"
        f" the keys of a known recording (OpenAI 'messages'/'traj', ReAct text, mini-swe-agent or SWE-agent trajectory,"
        f" BFCL 'inference_log', τ²-bench 'simulations', InterCode 'turn_history', ATIF 'schema_version'/'steps', TextWorld game 'outcome'/'tw_make_args'); {_FORMAT_HINT}",
        path=name,
        line=1,
    )
