"""Copy the public recordings named in sources.toml from fetched git snapshots into DIR/<source>/.

    python benchmarks/real_data/prepare.py --out /work/realdata [--snapshots /work/.mirror] \
        [--snapshot fireact=/path/to/FireAct.git] [--only fireact,bfcl]

A snapshot is a git directory (bare or not) of the source repository at (or after) the pinned commit: clone
it (``git clone --bare https://github.com/OWNER/NAME``; a commit reachable only from a pull request also needs
``git fetch origin refs/pull/N/head``, the source's ``ref``; a source may also take single files, each from its
own commit: ``files = [{commit, ref, path}]``) or point ``--snapshots`` at a folder holding
``OWNER+NAME/repo`` git directories; ``exclude`` globs leave files out of ``paths``. The files are taken from the pinned commit exactly as published (``git
show COMMIT:path``), so the figures of ``real_replay`` can be reproduced byte for byte. Each DIR/<source>/ gets
a ``source.toml`` manifest (name, origin repo@commit, licence, attribution, format, kind, label rule, runs,
labels, terminal tools, step cap) that ``benchmarks/run.py real_replay --data DIR`` reads.
"""

from __future__ import annotations

import argparse
import fnmatch
import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "sources.toml"
MANIFEST_KEYS = (
    "repo",
    "commit",
    "ref",
    "licence",
    "attribution",
    "format",
    "kind",
    "label_rule",
    "runs",
    "labels",
    "terminal_tools",
    "step_cap",
    "notes",
)


def load_sources(path: Path = SOURCES) -> dict[str, dict]:
    with open(path, "rb") as f:
        return tomllib.load(f)["sources"]


def _git(gitdir: Path, *args: str) -> bytes:
    out = subprocess.run(["git", "--git-dir", str(gitdir), *args], capture_output=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"git {' '.join(args[:2])} failed in {gitdir}: {out.stderr.decode(errors='replace').strip()}")
    return out.stdout


def _gitdir(path: Path) -> Path:
    return path / ".git" if (path / ".git").is_dir() else path


def _toml_value(value: object) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} to TOML")


def manifest(name: str, spec: dict) -> str:
    lines = [
        f"# {name}: copied by benchmarks/real_data/prepare.py from {spec['repo']}@{spec['commit']}",
        f"name = {_toml_value(name)}",
    ]
    for key in MANIFEST_KEYS:
        if key in spec:
            lines.append(f"{key} = {_toml_value(spec[key])}")
    lines.append(f"origin = {_toml_value(spec['repo'] + '@' + spec['commit'])}")
    if spec.get("files"):
        lines.append(f"files = {_toml_value([f'{c}:{p}' for c, p in _pinned_files(spec)])}")
    return "\n".join(lines) + "\n"


def _need_commit(name: str, spec: dict, gitdir: Path, commit: str, ref: str | None) -> None:
    present = subprocess.run(
        ["git", "--git-dir", str(gitdir), "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True, check=False
    )
    if present.returncode != 0:
        where = ref or "its default branch"
        raise SystemExit(
            f"{name}: commit {commit[:12]} is not in {gitdir}; it is reachable from {where} of"
            f" https://github.com/{spec['repo']}: git --git-dir {gitdir} fetch origin {where}"
        )


def _pinned_files(spec: dict) -> list[tuple[str, str]]:
    """``(commit, path)`` of every single file a source takes from its own commit (``files``: runs published on
    several branches of one repository, each file pinned to the commit of its branch)."""
    return [(f["commit"], f["path"]) for f in spec.get("files", [])]


def prepare(name: str, spec: dict, snapshot: Path, out: Path) -> int:
    gitdir = _gitdir(snapshot)
    commit = spec["commit"]
    _need_commit(name, spec, gitdir, commit, spec.get("ref"))
    files = _git(gitdir, "ls-tree", "-r", "--name-only", commit).decode().splitlines()
    chosen = [
        (commit, f)
        for f in files
        if any(fnmatch.fnmatch(f, pattern) for pattern in spec["paths"])
        and not any(fnmatch.fnmatch(f, pattern) for pattern in spec.get("exclude", []))
    ]
    if not chosen:
        raise SystemExit(f"{name}: no file of {snapshot} at {commit} matches {spec['paths']}")
    for f in spec.get("files", []):
        _need_commit(name, spec, gitdir, f["commit"], f.get("ref"))
    chosen += _pinned_files(spec)
    dest = out / name
    for at, f in chosen:
        target = dest / f
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(_git(gitdir, "show", f"{at}:{f}"))
    (dest / "source.toml").write_text(manifest(name, spec), encoding="utf-8")
    return len(chosen)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path, help="directory to write DIR/<source>/ into")
    parser.add_argument(
        "--snapshots",
        type=Path,
        default=Path("/work/.mirror"),
        help="folder of fetched snapshots laid out as OWNER+NAME/repo (default /work/.mirror)",
    )
    parser.add_argument(
        "--snapshot",
        action="append",
        default=[],
        metavar="SOURCE=GITDIR",
        help="the git directory of one source's repository (overrides --snapshots)",
    )
    parser.add_argument("--only", default=None, help="comma-separated source names (default: all)")
    args = parser.parse_args(argv)
    sources = load_sources()
    explicit = dict(item.split("=", 1) for item in args.snapshot)
    names = [n.strip() for n in args.only.split(",")] if args.only else list(sources)
    unknown = [n for n in [*names, *explicit] if n not in sources]
    if unknown:
        parser.error(f"unknown source(s) {', '.join(unknown)}; sources.toml names {', '.join(sources)}")
    for name in names:
        spec = sources[name]
        snapshot = (
            Path(explicit[name]) if name in explicit else args.snapshots / spec["repo"].replace("/", "+") / "repo"
        )
        if not snapshot.exists():
            print(
                f"{name}: no snapshot at {snapshot}; clone https://github.com/{spec['repo']} there "
                f"(or pass --snapshot {name}=GITDIR)",
                file=sys.stderr,
            )
            return 2
        n = prepare(name, spec, snapshot, args.out)
        print(f"{name}: {n} files from {spec['repo']}@{spec['commit'][:12]} -> {args.out / name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
