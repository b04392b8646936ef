"""start_jvm with a user classpath holding another version of a bundled artifact: the warning, which jar the JVM
loads the classes from, and user_classpath_first. Each case starts its JVM in a subprocess (one JVM per process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

from pyguard.jvm import bridge_jars


def _relabelled(bundled_prefix: str, version: str, out_dir: Path) -> Path:
    """A copy of a bundled jar (same classes) whose pom.properties and file name say ``version``."""
    src = next(j for j in bridge_jars() if j.name.startswith(bundled_prefix))
    artifact = src.name[: -len(".jar")].rsplit("-", 1)[0]
    dst = out_dir / f"{artifact}-{version}.jar"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item)
            if item.filename.endswith("/pom.properties"):
                data = b"\n".join(
                    b"version=" + version.encode() if line.startswith(b"version=") else line
                    for line in data.splitlines()
                )
            zout.writestr(item, data)
    return dst


_PROBE = """
    import json, warnings
    import jpype
    from pyguard.jvm import ClasspathConflictWarning, start_jvm
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        info = start_jvm(classpath=[{jar!r}])
    where = str(jpype.JClass({cls!r}).class_.getProtectionDomain().getCodeSource().getLocation())
    print(json.dumps({{
        "warnings": [str(w.message) for w in caught if issubclass(w.category, ClasspathConflictWarning)],
        "classpath": list(info.classpath),
        "loaded_from": where,
        "user_first": info.user_classpath_first,
        "conflicts": [c.coordinates for c in info.conflicts],
    }}))
"""


def _start(jar: Path, cls: str, env: dict[str, str]) -> dict:
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_PROBE.format(jar=str(jar), cls=cls))],
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard: a JVM starts in it, on a machine that may be loaded
        env={**os.environ, **env},
        check=False,
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_by_default_pyguards_langchain4j_is_loaded_and_the_other_version_is_named(tmp_path):
    user = _relabelled("langchain4j-core-", "1.10.0", tmp_path)
    out = _start(user, "dev.langchain4j.model.chat.ChatModel", {"PYGUARD_USER_CLASSPATH_FIRST": "0"})
    bundled = next(str(j) for j in bridge_jars() if j.name.startswith("langchain4j-core-"))
    assert out["conflicts"] == ["dev.langchain4j:langchain4j-core"] and out["user_first"] is False
    assert out["classpath"].index(bundled) < out["classpath"].index(str(user))
    assert out["loaded_from"].endswith("/" + Path(bundled).name)  # the JVM runs pyguard's version
    [warning] = out["warnings"]
    assert f"pyguard's 1.19.0 ({bundled}) comes first" in warning
    assert f"yours, 1.10.0 ({user}), is shadowed" in warning
    assert "user_classpath_first=True" in warning and "PYGUARD_USER_CLASSPATH_FIRST=1" in warning


def test_user_classpath_first_from_the_environment_loads_the_users_jar(tmp_path):
    user = _relabelled("slf4j-api-", "2.0.99", tmp_path)
    out = _start(user, "org.slf4j.LoggerFactory", {"PYGUARD_USER_CLASSPATH_FIRST": "1"})
    assert out["user_first"] is True and out["classpath"][0] == str(user)
    assert not any(Path(p).name.startswith("slf4j-api-2.0.18") for p in out["classpath"])  # left out
    assert out["loaded_from"].endswith("/slf4j-api-2.0.99.jar")
    [warning] = out["warnings"]
    assert "yours, 2.0.99" in warning and "comes first (user_classpath_first)" in warning and "is left out" in warning
