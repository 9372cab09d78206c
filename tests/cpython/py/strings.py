# Writes str objects as this interpreter holds them in memory, for
# tests/cpython/unicode.test.sh: per line the object's bytes in hex (ctypes.string_at of
# id(s), sys.getsizeof(s) bytes: header and text of a compact string) and its text as
# UTF-8 in hex ("-" when empty), lone surrogates written as U+FFFD. Run by the
# interpreter under test (CPython: id() is the address).
import ctypes
import sys

strings = [
    "", "a", "main", "<module>", "Klass.method.<locals>.inner", "x" * 1000,
    "caf\u00e9", "\u00ff\u00e0\u00e7", "na\u00efve_\u00e5ngstr\u00f6m",          # Latin-1
    "\u0394\u03b9\u03b1", "\u65e5\u672c\u8a9e", "\u20ac5", "a\u0100b" * 50,       # BMP
    "\U0001f40d", "py\U0001f40dthon", "\U00010000\U0010ffff", "e\u0301\U0001d11e",  # astral
    "lone\ud800surrogate", "\udfff",
    sys.intern("interned_name"),
]
strings += [chr(c) for c in (0x7f, 0x80, 0xff, 0x100, 0x7ff, 0x800, 0xfffd, 0xffff, 0x10000)]

with open(sys.argv[1], "w") as out:
    for s in strings:
        obj = ctypes.string_at(id(s), sys.getsizeof(s))
        text = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in s)
        out.write(f"{obj.hex()} {text.encode().hex() or '-'}\n")
