"""Values as shell words, for the commands the programs print. A module of its own, beneath
both the command table, which spells commands with it, and render, which reads the table."""

from __future__ import annotations


def shell_word(value: str) -> str:
    """One shell word on one line: $'...' where the value holds a line break or a control."""
    if value.isprintable():
        return _quote(value)
    escaped = []
    for character in value:
        if character in "\\'":
            escaped.append("\\" + character)
        elif character.isprintable():
            escaped.append(character)
        else:  # bash reads \xNN as one byte, so only ASCII goes that way
            code = ord(character)
            escaped.append(f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}" if code <= 0xFFFF
                           else f"\\U{code:08x}")
    return "$'" + "".join(escaped) + "'"


def _quote(value: str) -> str:
    import shlex  # here, so that printing help does not pay for it

    return shlex.quote(value)
