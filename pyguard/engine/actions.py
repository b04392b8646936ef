"""Which actions change the world: read-only tools versus side-effecting ones (writes).

A *write* is an action that changes something the agent will look at again: an edit, a created file, a sent
message, a shell command that modifies files. A new write (a write whose exact request was not made before in the
turn) is an *attempt with new content*: the engine counts it as progress, and a read repeated after it is a check
of the new state, not a loop (:mod:`pyguard.engine.stall`).

The kind of a tool is, in order: ``ToolsConfig.write_tools`` / ``read_tools`` when they name it; for a shell tool
(its name or its argument keys say it runs a command), the command text (:func:`shell_command_writes`); else its
name, split into words, against a list of side-effecting verbs. The inference is a guess and says so: a team whose
tool names mislead it sets the two lists in the policy file.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pyguard.engine.tool_json import NOT_JSON, tool_json

__all__: list[str] = []

ActionKind = str
"""``"read"`` or ``"write"``."""

WRITE_VERBS: frozenset[str] = frozenset(
    {
        "activate",
        "add",
        "adjust",
        "apply",
        "append",
        "assign",
        "authenticate",
        "book",
        "buy",
        "cancel",
        "cd",
        "change",
        "checkout",
        "close",
        "comment",
        "commit",
        "cp",
        "create",
        "deactivate",
        "delete",
        "deploy",
        "drop",
        "echo",
        "edit",
        "exchange",
        "fill",
        "follow",
        "insert",
        "install",
        "lock",
        "login",
        "logout",
        "make",
        "merge",
        "mkdir",
        "modify",
        "move",
        "mv",
        "new",
        "order",
        "patch",
        "pay",
        "place",
        "post",
        "press",
        "publish",
        "purchase",
        "put",
        "refund",
        "release",
        "remove",
        "rename",
        "replace",
        "reset",
        "resolve",
        "retweet",
        "return",
        "rm",
        "rmdir",
        "save",
        "send",
        "set",
        "share",
        "start",
        "stop",
        "str_replace",
        "submit",
        "toggle",
        "touch",
        "transfer",
        "unfollow",
        "unlock",
        "update",
        "upload",
        "upsert",
        "write",
    }
)
"""Verbs of side-effecting tools, read as the first word of a tool name (``createOrder``, ``send_email``,
``book_reservation``, ``cd``, ``mkdir``, ``lockDoors``): ``get_order`` is a read, ``order_pizza`` a write. Moving
about (``cd``) and logging in change what later reads return, so they count as writes too."""

WRITE_WORDS: frozenset[str] = frozenset(
    {
        "create",
        "delete",
        "edit",
        "insert",
        "modify",
        "patch",
        "remove",
        "rename",
        "replace",
        "submit",
        "update",
        "upload",
        "upsert",
        "write",
    }
)
"""Unambiguous verbs that make a tool a write wherever they stand in its name (``str_replace_editor``, ``file_edit``)."""

READ_SUBCOMMANDS: frozenset[str] = frozenset({"view", "read", "show", "list", "get", "cat", "search", "find", "open"})
"""Sub-commands that make a write-named tool read (``str_replace_editor`` with ``command: view``)."""

SHELL_TOOL_WORDS: frozenset[str] = frozenset(
    {"bash", "shell", "sh", "terminal", "cmd", "command", "exec", "execute", "run"}
)
"""Name words of tools that run a shell command (its kind then comes from the command)."""

_COMMAND_KEYS = ("command", "cmd", "script", "code", "input")
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1[^\n]*\n.*?\n\s*\2(?=\s|$)", re.S)
_SHELL_WRITE = re.compile(
    r"(?:^|[;&|(`\s])(?:"
    r"sed\s+(?:-[a-zA-Z]*\s+)*-[a-zA-Z]*i|perl\s+(?:-\w+\s+)*-\w*i|tee\b|mv\b|cp\b|rm\b|rmdir\b|touch\b|mkdir\b"
    r"|ln\b|chmod\b|truncate\b|patch\b|dd\b|install\b|git\s+(?:apply|am|checkout|restore|reset|stash|commit|merge"
    r"|rebase|cherry-pick|revert|mv|rm)\b|(?:pip|pip3|npm|yarn|apt-get|apt|conda)\s+(?:install|uninstall|remove)\b"
    r")"
)
"""Commands that change files (the command, not its arguments, at the start of a pipeline element)."""
_REDIRECT = re.compile(r"(?<![<>&\d])(?:\d?>>?|&>)\s*(?!&|/dev/null\b|/dev/std)[^\s;&|]")
"""An output redirection into a file (not ``2>&1``, not ``>/dev/null``)."""
_CODE_WRITE = re.compile(
    r"\bopen\([^)]*,\s*['\"][wax]|\.write_text\(|\.write_bytes\(|\bos\.(?:remove|rename|unlink)\(|shutil\."
)
"""File writes inside inline code (``python - <<EOF ... open(p, "w") ...``)."""


def name_words(name: str) -> tuple[str, ...]:
    """The words of a tool name: ``createOrder`` -> (create, order); ``str_replace_editor`` -> (str, replace, editor)."""
    return tuple(w.lower() for w in _WORDS.findall(name))


def shell_command_writes(command: str) -> bool:
    """True when a shell command changes files: an in-place edit, a redirection into a file, a move, copy or
    removal, a git or package operation that changes the tree, or inline code that opens a file for writing.
    Heredoc bodies are not read as commands (a ``>`` in Python code is a comparison), but inline code in them is."""
    first_lines = _HEREDOC.sub(lambda m: m.group(0).split("\n", 1)[0], command)
    if _SHELL_WRITE.search(first_lines) or _REDIRECT.search(first_lines):
        return True
    return bool(_CODE_WRITE.search(command))


def _command_text(arguments: str) -> str | None:
    """The command of a shell tool's arguments: a JSON object's command-like key, or the raw text."""
    text = arguments.strip()
    if not text:
        return None
    if text[0] == "{":
        obj = tool_json(text)
        if obj is NOT_JSON:
            return text
        if isinstance(obj, dict):
            for key in _COMMAND_KEYS:
                value = obj.get(key)
                if isinstance(value, str):
                    return value
            return None
    return text


@lru_cache(maxsize=4096)
def _name_kind(tool: str) -> tuple[bool, bool]:
    """What a tool's name says: (a write verb or word in it, a shell word in it). Cached per name: the calls of one
    tool differ by their arguments, which :func:`classify_action`'s own cache is keyed by too."""
    words = name_words(tool)
    named_write = bool(words) and (words[0] in WRITE_VERBS or any(w in WRITE_WORDS for w in words))
    return named_write, any(w in SHELL_TOOL_WORDS for w in words)


@lru_cache(maxsize=8192)
def classify_action(
    tool: str, arguments: str, write_tools: frozenset[str] = frozenset(), read_tools: frozenset[str] = frozenset()
) -> ActionKind:
    """``"write"`` or ``"read"`` for one tool call (see the module docstring for the order of the rules)."""
    if tool in write_tools:
        return "write"
    if tool in read_tools:
        return "read"
    named_write, shell = _name_kind(tool)
    obj = tool_json(arguments) if arguments.lstrip().startswith("{") else None
    if named_write and isinstance(obj, dict):
        # an editor with sub-commands (SWE-agent's str_replace_editor: view, create, str_replace, insert, undo_edit)
        sub = next((obj[k] for k in ("command", "action", "operation") if isinstance(obj.get(k), str)), None)
        if sub is not None:
            return "read" if name_words(sub)[:1] and name_words(sub)[0] in READ_SUBCOMMANDS else "write"
    if not shell and not named_write:
        shell = isinstance(obj, dict) and any(isinstance(obj.get(k), str) for k in ("command", "cmd"))
    if shell:
        command = _command_text(arguments)
        return "write" if command is not None and shell_command_writes(command) else "read"
    return "write" if named_write else "read"
