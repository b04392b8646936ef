"""Result templates: what a tool says once the parts that merely reflect its own arguments are taken out.

A lookup that fails answers every rephrasing the same way: ``Could not find ["Scat"]. Similar: ['Scat singing',
'Scatman John', ...]``, then ``Could not find ["Scatman"]. Similar: ['Scatman John', 'Scatman (song)', ...]``. The
text differs each time, but only where it repeats the request: the echoed query, and the suggestions built from
it. The *template* of a result is its prepared text (:func:`pyguard.engine.novelty.prepare_text`: lower case,
volatile tokens masked, echoed argument values replaced by a mark, raw and normalised forms alike) in which every
quoted string and every bracketed group that contains an echo, or a word of the request, is collapsed to one mark.
Two results of the same tool with equal templates say the same thing about different requests: the second brings
no information, in whatever wording or language the tool writes.

What is kept is everything not tied to the request: a JSON record of another customer (``{"name": "bob", "city":
"rome"}`` for a request naming ``bob``) keeps ``rome``, so its template differs from ``alice``'s in ``paris``.

Linear time: the patterns below are negated character classes with bounded alternation, and only the first
``TEMPLATE_CHARS`` characters of a result are read (a template is about what a result *is*, which its start says).
"""

from __future__ import annotations

import re
from functools import lru_cache

from pyguard.engine.fingerprint import short_digest

__all__: list[str] = []

TEMPLATE_CHARS = 4000
"""Characters of a prepared result that make its template."""

_ECHO = "\u2405"
_GROUP = re.compile(r"\"[^\"\n]{0,400}\"|'[^'\n]{0,400}'|\[[^\[\]]{0,2000}\]|\([^()]{0,400}\)")
"""A quoted string or an innermost list or parenthesis (bounded: no backtracking blow-up). Braces are never
collapsed whole: a record keeps the fields that are not tied to the request."""
SHORT_PROSE_CHARS = 400
"""A result of at most this many characters that is prose (not JSON) and echoes its request is a message about the
request (``No article matches "reset password" exactly. Related: 'Billing (faq)', 'Login (policy)'.``): every
quoted string in it collapses, related titles included although they share no word with the request. Longer
results, and JSON, keep the quoted strings that are not tied to the request: they are content."""
MIN_FRAME_WORDS = 3
"""Words (outside the marks) a template needs before two equal templates count as the same answer: ``could not
find . similar: .`` has four; a bare list (``[...]``) or ``{"results": [...]}`` has too few to say anything."""
_WORD = re.compile(r"[^\W_]{3,}")
_COLLAPSED = "\u2406"


@lru_cache(maxsize=4096)
def request_words(arg_values: tuple[str, ...]) -> frozenset[str]:
    """The words (3+ letters or digits, lower case) of a request's argument values."""
    words: set[str] = set()
    for value in arg_values:
        words.update(_WORD.findall(value.lower()[:2000]))
    return frozenset(words)


def result_template(prepared: str, words: frozenset[str]) -> str:
    """The template of a prepared result (see the module docstring). Groups nest: the innermost are collapsed
    first, so a list of suggestions collapses once its items have."""
    text = prepared[:TEMPLATE_CHARS]
    if '"' not in text and "'" not in text and "[" not in text and "(" not in text:
        return text  # no group opens: nothing to collapse (a quick answer for plain prose)
    prose = len(text) <= SHORT_PROSE_CHARS and _ECHO in text and text.lstrip()[:1] not in ("{", "[")

    def collapse(m: re.Match[str]) -> str:
        group = m.group(0)
        if prose and (group[0] in "\"'" or "'" in group or '"' in group):
            # a quoted name in a short message about the request (a suggestion, a related title), or a list of them
            return _COLLAPSED
        if _ECHO in group or _COLLAPSED in group:
            return _COLLAPSED if group[0] in "\"'" or "{" not in group else group
        if words and any(w in words for w in _WORD.findall(group)):
            return _COLLAPSED
        return group

    for _ in range(3):  # three levels of nesting at most
        collapsed = _GROUP.sub(collapse, text)
        if collapsed == text:
            break
        text = collapsed
    return text


def template_key(prepared: str, words: frozenset[str]) -> str | None:
    """Digest of the template, or None when the result has nothing tied to the request (no echo, nothing
    collapsed): such a result is judged by its novelty alone."""
    template = result_template(prepared, words)
    if _ECHO not in template and _COLLAPSED not in template:
        return None
    if len(_WORD.findall(template.replace(_ECHO, " ").replace(_COLLAPSED, " "), 0, 2000)) < MIN_FRAME_WORDS:
        return None
    return short_digest(template)
