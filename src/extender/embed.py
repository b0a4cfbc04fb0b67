#!/usr/bin/env python3
"""embed.py IN OUT NAME: writes C source defining `const char NAME[]`, the
bytes of IN followed by a NUL, and `const size_t NAME_len` (without the
NUL). Run by meson at build time (src/meson.build), so the page is edited
as plain HTML. Bytes, not a string literal: C11 promises string literals of
4,095 characters only (-Woverlength-strings)."""
import sys

src, out, name = sys.argv[1], sys.argv[2], sys.argv[3]
data = open(src, "rb").read() + b"\0"
rows = [", ".join(str(b - 256 if b > 127 else b) for b in data[i:i + 16]) for i in range(0, len(data), 16)]
with open(out, "w") as f:
    f.write("/* Made by src/extender/embed.py from %s: edit that file. */\n" % src.split("/")[-1])
    f.write("#include <stddef.h>\n\n")
    f.write("extern const char %s[];\nextern const size_t %s_len;\n" % (name, name))
    f.write("const char %s[] = {\n    %s};\n" % (name, ",\n    ".join(rows)))
    f.write("const size_t %s_len = sizeof(%s) - 1;\n" % (name, name))
