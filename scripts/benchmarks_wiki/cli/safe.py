"""Text made safe to show, and values as shell words, for everything the programs print: the portal's
text was written by strangers, and a character that is not printable, or that shows as nothing, could
rewrite the screen, hide text from the person while a model reads it, or forge a line of output."""

# Characters Python counts printable that show as nothing or change the look of their
# neighbours: fillers, the combining grapheme joiner, variation selectors.
_FILLERS = frozenset([0x00AD, 0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2800, 0x3164, 0xFFA0,
                      *range(0x180B, 0x1810), *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)])


def hidden(character: str) -> bool:
    """Whether a character would not show as itself: a control, a format character, a line or
    paragraph separator, unassigned, or a filler. Spaces of any width show as space."""
    if character.isprintable():
        return ord(character) in _FILLERS
    import unicodedata  # here: only text beyond the printable needs it

    return unicodedata.category(character) != "Zs"


def escape(character: str, bytes_below: int = 0x100) -> str:
    code = ord(character)
    return f"\\x{code:02x}" if code < bytes_below else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def visible(value: str, keep: str = "") -> str:
    if value.isprintable() and value.isascii():
        return value
    return "".join(escape(character) if character not in keep and hidden(character) else character
                   for character in value)


def shell_word(value: str) -> str:
    """One shell word on one line, that a shell reads back as ``value``."""
    if not any(map(hidden, value)):
        import shlex  # here, so that printing help does not pay for it

        return shlex.quote(value)
    escaped = []
    for character in value:
        if character in "\\'":
            escaped.append("\\" + character)
        elif hidden(character):  # bash reads \xNN as one byte, so only ASCII goes that way
            escaped.append(escape(character, bytes_below=0x80))
        else:
            escaped.append(character)
    return "$'" + "".join(escaped) + "'"


def text(value: str) -> str:
    return visible(value, keep="\n\t")


def line(value) -> str:
    """A value that must stay on one line: names, titles, timestamps."""
    return visible("" if value is None else str(value))
