#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that every figure an example page quotes in its prose comes from that page's tables or command output.

For each docs/examples/*.md except README.md (or the pages named on the command line):

Sources: every number in a Markdown table row (a line whose first non-blank character is `|`), in a fenced code
block (``` or ~~~: commands and their output), and in a generated block between `<!-- summary-table NAME -->`
and `<!-- /summary-table NAME -->` (the table and its note, written by the program's run).

Prose: every other line, less headings (`#`), HTML comments, inline code spans (`...`), link and image targets
(`](...)`) and bare URLs. A figure in the prose is a number written with a decimal point (84.52, 0.20 points,
1.3e-9), or followed by a per-cent sign (93 %, 93.00 %) or by a ratio sign (1.28×, 3× fewer; `4×4` and `32 × 64`,
where a number or a letter follows the sign, are dimensions and not figures). Each figure must be one of the
page's sources, where the same number with a different count of trailing zeros, a sign (+, −) or thousands commas
counts as the same (93.00 = 93.0 = 93, −0.63 = 0.63). These are not figures, and are not checked:
- dates, years and times of day (2026-11-27, 12:40–12:44 UTC);
- references to the papers' numbered parts: a number after §, eq., Def., Thm., Table, Fig., Remark, Algorithm, …
  (§6.2, eq. 6.7–6.8, Def. 5.5);
- versions: a dotted number with two or more dots (3.4.0), or one after a program's name (g++ 12.2, CUDA 13.0);
- the machine's load (`load average 1.3–2.0`): it describes the run, it is not a result.

Derived figures: a figure with two or more decimals that is not a source still passes when its own sentence
quotes the two sources it comes from, and says how: a ratio (the figure carries ×) of the two, `1.28× slower (11.3
against 8.8 s)`; or a difference (the figure is followed by "points" or signed, +1.60, −0.63) of two numbers each
at least five times its size, `+1.60 points (84.52 against 82.92 %)`; to within 0.6 of a unit of its last digit.
Nothing else is derived (figures with fewer decimals, numbers from other sentences or other pages, sums,
percentages of a ratio): too many pairs of a page's numbers would match such a figure by chance.

Exemption: an HTML comment `<!-- figures: not from the table: REASON -->` alone on the line before a paragraph
exempts that paragraph (up to the next blank line, heading, table, fence or list item), e.g. a figure measured by a
command on another page, a setting of the program, or a figure of a paper. The reason must not be empty. The
comment may be indented, so that it sits inside a list item, before the item that follows it.

Exit status 1 with one line `page:line: figure X is not in the page's tables or command output` per figure
(or `page:line: ...` for a malformed exemption), 0 when every figure is found.
"""

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "docs" / "examples"

# A number: optional thousands groups, optional decimals, optional exponent (1.3e-9). Not part of a word or of a
# longer dotted number (d768, s1024_p16, x86).
NUMBER = re.compile(
    r"(?<![\w.])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)*(?:[eE][-−+]?\d+)?(?![\w])"
)
FENCE = re.compile(r"^\s*(```|~~~)")
TABLE_ROW = re.compile(r"^\s*\|")
HEADING = re.compile(r"^\s{0,3}#")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
SUMMARY_OPEN = re.compile(r"^\s*<!--\s*summary-table\s+(\S+)\s*-->\s*$")
SUMMARY_CLOSE = re.compile(r"^\s*<!--\s*/summary-table\s+(\S+)\s*-->\s*$")
EXEMPT = re.compile(r"^\s*<!--\s*figures:\s*not from the table:(.*?)-->\s*$")
EXEMPT_LOOSE = re.compile(r"^\s*<!--\s*figures\b")

# What prose loses before its numbers are read.
INLINE_CODE = re.compile(r"`+[^`]*`+")
HTML_COMMENT = re.compile(r"<!--.*?-->")
LINK_TARGET = re.compile(r"\]\([^)]*\)")
URL = re.compile(r"<?https?://\S+>?")
DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
TIME = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b")
LOAD = re.compile(r"\bload(?:\s+averages?)?\s+(?:of\s+|about\s+|under\s+|at\s+)?[\d.,\s–\-→]*\d")
REFERENCE = re.compile(
    r"(?:§\s*|\b(?:eqs?|Eqs?|equations?|Def|Defs|Definitions?|Thm|Theorems?|Tables?|Figs?|Figures?|Sections?"
    r"|Remarks?|Algorithms?|Lemmas?|Props?|Propositions?|Cor|Corollary|Examples?)\.?\s+)$"
)
VERSION_OF = re.compile(
    r"\b(?:g\+\+|gcc|GCC|clang|CUDA|nvcc|Eigen|FFTW|PyTorch|torch|Python|python3?|Open MPI|OpenMPI|MPI|OpenBLAS"
    r"|CMake|cmake|Debian|driver|libstdc\+\+|version|v)\s*$"
)
RANGE_DASH = re.compile(r"^\s*[–-]\s*$")


def canonical(token):
    """The number a token writes, as a string: no sign, no thousands commas, no trailing zeros after the point."""
    t = token.replace(",", "").replace("−", "-").lstrip("+-").lower()
    mantissa, _, exponent = t.partition("e")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    mantissa = mantissa.lstrip("0") or "0"
    if mantissa.startswith("."):
        mantissa = "0" + mantissa
    return mantissa + ("e" + str(int(exponent.replace("−", "-"))) if exponent else "")


def value(token):
    return float(token.replace(",", "").replace("−", "-").lstrip("+"))


def decimals(token):
    mantissa = token.lower().partition("e")[0]
    return len(mantissa.partition(".")[2]) if "." in mantissa else 0


def numbers(text):
    """Every number token of a text (for the sources)."""
    return [m.group(0) for m in NUMBER.finditer(text)]


def blank_out(pattern, text):
    """Replaces each match by spaces (newlines kept), so that offsets and line numbers stay as they were."""
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def strip_prose(text):
    """The prose less what is not read: HTML comments, inline code, link targets, URLs."""
    for pattern in (HTML_COMMENT, INLINE_CODE, LINK_TARGET, URL):
        text = blank_out(pattern, text)
    return text


def prose_figures(text):
    """The figures of a paragraph (its lines joined by newlines): (offset, token) for every checked number."""
    text = strip_prose(text)
    for pattern in (DATE, TIME, LOAD):
        text = blank_out(pattern, text)
    found = []
    previous_reference = None  # end offset of the last number that was a reference or a version
    for m in NUMBER.finditer(text):
        token = m.group(0)
        before = text[: m.start()]
        after = text[m.end():]
        if token.count(".") >= 2:  # 3.4.0: a version
            previous_reference = m.end()
            continue
        if REFERENCE.search(before) or VERSION_OF.search(before):
            previous_reference = m.end()
            continue
        if previous_reference is not None and RANGE_DASH.match(text[previous_reference:m.start()]):
            previous_reference = m.end()  # eq. 6.7–6.8: the range's second end is a reference too
            continue
        previous_reference = None
        percent = re.match(r"^[ \u00a0\u2009\u202f]?%", after) is not None
        ratio = re.match(r"^[ \u00a0\u2009\u202f]?×", after) is not None
        ratio = ratio and re.match(r"^×[\w(]", after) is None  # 4×4, 2×2: dimensions
        # 32 × 64, 128 × R1, 20,002 × d: dimensions (a number, or a one-letter name, follows the sign)
        ratio = ratio and re.match(r"^\s*×\s+(?:[\d(]|[^\W\d_](?![a-z]))", after) is None
        if "." in token.lower().partition("e")[0] or percent or ratio:
            points = re.match(r"^(?:\s*[–-]\s*[\d.]+)?\s+points?\b", after) is not None
            signed = re.search(r"[+−](?:\s*)$", before) is not None
            found.append((m.start(), token, "ratio" if ratio else "difference" if points or signed else None))
    return found


SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z*(\[`])")


def sentence_around(text, offset):
    """The sentence of text that holds offset: from the end of the previous one to the start of the next."""
    start, end = 0, len(text)
    for m in SENTENCE_END.finditer(text):
        if m.end() <= offset:
            start = m.end()
        elif m.start() >= offset:
            end = m.start()
            break
    return text[start:end]


def derivable(token, relation, operands):
    """Whether the figure is the ratio (relation "ratio") or the difference ("difference") of two of the source
    numbers its sentence quotes; a difference only of two numbers at least five times its size."""
    d = decimals(token)
    if d < 2 or relation is None:
        return False
    x = abs(value(token))
    tolerance = 0.6 * 10 ** (-d)
    values = sorted({abs(value(t)) for t in operands})
    for a in values:
        for b in values:
            if a == b or b == 0:
                continue
            if relation == "ratio" and abs(a / b - x) <= tolerance:
                return True
            if relation == "difference" and min(a, b) >= 5 * x and abs(abs(a - b) - x) <= tolerance:
                return True
    return False


def check(page):
    lines = page.read_text(encoding="utf-8").splitlines()
    try:
        rel = page.relative_to(REPO)
    except ValueError:
        rel = page
    problems = []

    # Pass 1: classify the lines and collect the sources.
    kind = []  # "source", "prose", "skip"
    sources = set()
    in_fence = None
    in_summary = None
    for line in lines:
        fence = FENCE.match(line)
        if in_fence is not None:
            kind.append("source")
            sources.update(canonical(t) for t in numbers(line))
            if fence and fence.group(1) == in_fence:
                in_fence = None
            continue
        if fence:
            in_fence = fence.group(1)
            kind.append("source")
            continue
        opened = SUMMARY_OPEN.match(line)
        if opened:
            in_summary = opened.group(1)
            kind.append("skip")
            continue
        closed = SUMMARY_CLOSE.match(line)
        if closed:
            in_summary = None
            kind.append("skip")
            continue
        if in_summary is not None or TABLE_ROW.match(line):
            kind.append("source")
            sources.update(canonical(t) for t in numbers(line))
            continue
        if HEADING.match(line) or not line.strip():
            kind.append("skip")
            continue
        kind.append("prose")
    if in_fence is not None:
        problems.append(f"{rel}: a fenced code block is not closed")

    # Pass 2: paragraphs (a run of prose lines up to a blank line, a heading, a table, a fence, an exemption or the
    # next list item).
    paragraphs = []
    for i, line in enumerate(lines):
        if kind[i] != "prose":
            continue
        if EXEMPT_LOOSE.match(line):
            paragraphs.append([i])  # an exemption comment stands alone
            continue
        starts = (i == 0 or kind[i - 1] != "prose" or LIST_ITEM.match(line) or EXEMPT_LOOSE.match(lines[i - 1]))
        if starts:
            paragraphs.append([])
        paragraphs[-1].append(i)

    exempt = set()  # indices into paragraphs
    for n, para in enumerate(paragraphs):
        line = lines[para[0]]
        if not EXEMPT_LOOSE.match(line):
            continue
        m = EXEMPT.match(line)
        if not m or not m.group(1).strip():
            problems.append(f"{rel}:{para[0] + 1}: an exemption must read "
                            "`<!-- figures: not from the table: REASON -->` with a reason")
            continue
        nxt = paragraphs[n + 1] if n + 1 < len(paragraphs) else None
        if nxt is None or nxt[0] != para[0] + 1 or EXEMPT_LOOSE.match(lines[nxt[0]]):
            problems.append(f"{rel}:{para[0] + 1}: an exemption must stand on the line right before a paragraph")
            continue
        exempt.add(n + 1)

    for n, para in enumerate(paragraphs):
        if n in exempt or EXEMPT_LOOSE.match(lines[para[0]]):
            continue
        text = "\n".join(lines[i] for i in para)
        stripped = strip_prose(text)
        for offset, token, relation in prose_figures(text):
            if canonical(token) in sources:
                continue
            quoted = [t for t in numbers(sentence_around(stripped, offset)) if canonical(t) in sources]
            if derivable(token, relation, quoted):
                continue
            line_number = para[0] + text.count("\n", 0, offset) + 1
            problems.append(f"{rel}:{line_number}: figure {token} is not in the page's tables or command output")
    return problems


def main(argv):
    pages = [Path(a).resolve() for a in argv[1:]] or sorted(
        p for p in EXAMPLES.glob("*.md") if p.name != "README.md")
    if not pages:
        print(f"check-doc-figures: no pages under {EXAMPLES}", file=sys.stderr)
        return 1
    problems = []
    for page in pages:
        problems.extend(check(page))
    for p in problems:
        print(p)
    if problems:
        print(f"check-doc-figures: {len(problems)} problem(s) in {len(pages)} page(s)", file=sys.stderr)
        return 1
    print(f"check-doc-figures: every figure of {len(pages)} page(s) is in its tables or command output")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
