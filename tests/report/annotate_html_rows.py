#!/usr/bin/env python3
"""Checks a `tally annotate --html` page against the text annotation of the same function,
with Python's own HTML parser: the page is well-formed (every element that is not void is
closed, in order; no script and no element from a name or an instruction), and its
instruction rows carry exactly the text's addresses, weights and instruction texts, in
the same order. Prints what differs and exits 1, or exits 0.

usage: annotate_html_rows.py PAGE.html TEXT.txt (the text written with --color never)
       annotate_html_rows.py --rows TEXT.txt: prints the text's rows, "ADDR WEIGHT TEXT"
"""
import html.parser
import re
import sys

VOID = {"meta", "br", "hr", "img", "input", "link", "area", "base", "col", "embed",
        "source", "track", "wbr"}
# The elements annotate writes; anything else came from the data.
KNOWN = {"html", "head", "meta", "title", "style", "body", "h1", "p", "b", "span", "a",
         "table", "thead", "tbody", "tr", "th", "td"}


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.rows = [], [], []
        self.row = None
        self.cell = None

    def handle_starttag(self, tag, attrs):
        if tag not in KNOWN:
            self.errors.append(f"unexpected element <{tag}> at {self.getpos()}")
        if tag not in VOID:
            self.stack.append(tag)
        a = dict(attrs)
        if tag == "tr" and "data-addr" in a:
            self.row = [a["data-addr"], int(a["data-w"]), []]
        elif tag == "td" and self.row is not None:
            self.cell = []

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> at {self.getpos()} closes {self.stack[-1:]}")
            return
        self.stack.pop()
        if tag == "td" and self.cell is not None:
            self.row[2].append("".join(self.cell))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.rows.append((self.row[0], self.row[1], self.row[2][-1]))
            self.row = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def text_rows(path):
    """(address, weight, instruction) of each instruction line of the text annotation."""
    row = re.compile(r"^(?: *[0-9.]+% +([0-9,]+) +#*)? +([0-9a-f]+):  (.*)$")
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f.read().split("\n"):
            m = row.match(line)
            if m and not line.startswith(" " * 36):
                out.append((m.group(2), int((m.group(1) or "0").replace(",", "")), m.group(3)))
    return out


def main():
    if sys.argv[1] == "--rows":
        for addr, weight, text in text_rows(sys.argv[2]):
            print(addr, weight, text)
        return
    page = Page()
    with open(sys.argv[1], encoding="utf-8") as f:
        page.feed(f.read())
    page.close()
    problems = page.errors[:5]
    if page.stack:
        problems.append(f"unclosed at the end: {page.stack}")
    want = text_rows(sys.argv[2])
    if not want:
        problems.append("the text annotation has no instruction rows")
    if page.rows != want:
        diff = [(i, h, t) for i, (h, t) in enumerate(zip(page.rows, want)) if h != t][:3]
        problems.append(f"rows: html {len(page.rows)}, text {len(want)}; first differences "
                        f"(html, text): {diff}")
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


main()
