"""scripts/mvnq: Maven without the colour codes Maven 3.8 leaks into `make demo`'s setup, exit status kept."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

MVNQ = Path(__file__).parents[2] / "scripts" / "mvnq"


def test_colour_codes_are_stripped_and_the_exit_status_kept(tmp_path: Path) -> None:
    fake = tmp_path / "mvn"
    fake.write_text(
        "#!/usr/bin/env bash\nprintf '\\033[0m\\033[0m[\\033[1;31mERROR\\033[m] args: %s\\n' \"$*\"\nexit 3\n"
    )
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", str(MVNQ), "-f", "java/pom.xml", "package"], capture_output=True, text=True, env=env, timeout=30
    )
    assert done.returncode == 3
    assert done.stdout == "[ERROR] args: -q -B -f java/pom.xml package\n"
    assert "\x1b" not in done.stdout + done.stderr
