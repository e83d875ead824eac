"""Hypothesis strategies the property tests share."""

from __future__ import annotations

from hypothesis import strategies as st

#: Any character a UTF-8 file can hold: every code point but the surrogates.
#: That is Hypothesis's default alphabet for ``text`` and ``from_regex`` too,
#: but it works that one out by encoding every code point with the codec (1.6 s
#: of CPU in each worker of a fresh checkout, until its cache is written); by
#: category it reads Unicode's table (0.1 s).
UTF8_CHARACTERS = st.characters(exclude_categories=("Cs",))


def utf8_text(*, max_size: int) -> st.SearchStrategy[str]:
    return st.text(UTF8_CHARACTERS, max_size=max_size)
