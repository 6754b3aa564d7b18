"""MkDocs hook: in shell code blocks, a word with a hyphen (``--episodes``, ``6GiB``-like options, paths such as
``runs/4x6-tc``) is never split at the hyphen when the site's CSS wraps a long command line.

Browsers may break a line after any hyphen, so ``--update forward --episodes 77000`` could wrap as
``--update forward --`` / ``episodes 77000``, which reads as another command line. Each such word goes into a
``<span class="md-nowrap">`` (styled ``white-space: nowrap`` in ``stylesheets/extra.css``); the text, and so
what the copy button copies, stays the same.
"""

from __future__ import annotations

import re

SHELL_BLOCK = re.compile(r'(<div class="language-(?:sh|bash|console|shell) highlight"><pre>.*?<code>)(.*?)(</code>)',
                         re.S)
TAG = re.compile(r"(<[^>]*>)")
HYPHENATED = re.compile(r"[^\s<>]*-[^\s<>]*")
LONGEST = 40  # a longer word may still break (at a hyphen, or anywhere) rather than run off the block


def _keep_words(code: str) -> str:
    parts = TAG.split(code)
    for i in range(0, len(parts), 2):  # the text between the tags
        parts[i] = HYPHENATED.sub(
            lambda m: f'<span class="md-nowrap">{m[0]}</span>' if len(m[0]) <= LONGEST else m[0], parts[i])
    return "".join(parts)


def on_page_content(html: str, **kwargs) -> str:
    return SHELL_BLOCK.sub(lambda m: m[1] + _keep_words(m[2]) + m[3], html)
