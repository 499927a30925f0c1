"""Resource detection for resource memory in offline mode.

Documents and screenshots are always resources. A chat message becomes one only when it is
clearly pasted content (long text, or many lines of code, markdown or table), so ordinary chat
stays in episodic memory. The draft keeps the full text; title and summary make it findable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["ResourceDraft", "classify_resource"]

TITLE_MAX = 80
SUMMARY_MAX = 300
MIN_STRUCTURED_LINES = 8


@dataclass(frozen=True)
class ResourceDraft:
    """A document, pasted file or screenshot text, ready for resource memory."""

    title: str
    summary: str
    resource_type: str
    content: str


_FENCE = re.compile(r"^\s*(?:```|~~~)")
_MD_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(\S.*?)\s*#*\s*$")
_MD_LINE = re.compile(r"^\s{0,3}(?:#{1,6}\s+\S|[-*+]\s+\S|\d{1,3}[.)]\s+\S|>\s?\S|\|.*\||[-=]{3,}\s*$|!?\[[^\]]+\]\([^)]+\))")
_PIPE_ROW = re.compile(r"^\s*\|?(?:[^|\n]*\|){2,}[^|\n]*$")
_PIPE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+\|?\s*$")
_CODE_LINE = re.compile(
    r"""^\s*(?:
        (?:def|class|import|from\s+\S+\s+import|return|async\s+def|await|yield|raise|lambda|
           function|const|let|var|export|public|private|protected|static|void|package|func|fn|
           impl|struct|interface|using|namespace|template|SELECT|INSERT\s+INTO|CREATE\s+TABLE)\b
      | (?:if|elif|for|while|with|except|switch)\b.*[:{]\s*$
      | (?:else|try|finally)\s*[:{]\s*$
      | \#include\b | @\w+ | //|/\*|\*/|<!--|</?\w+[^>]*>\s*$
      | [})\]];?\s*$
    )
    | ^\s+\#  # an indented "#" is a comment, never a markdown heading
    """,
    re.VERBOSE,
)
_CODE_TAIL = re.compile(r"(?:[;{}]|\)\s*\{|=>\s*\{?|\):)\s*$")
_CALL = re.compile(r"^\s*(?:await\s+)?[A-Za-z_][\w.]*\(.*\)\s*;?\s*$")
_ASSIGNMENT = re.compile(r"^\s*[A-Za-z_][\w.\[\]'\"]*\s*(?:[+\-*/]?=|:=)\s*\S")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(])")


def _is_code_line(line: str) -> bool:
    if not line.strip():
        return False
    return bool(
        _CODE_LINE.match(line) or _CODE_TAIL.search(line) or _ASSIGNMENT.match(line) or _CALL.match(line)
    )


def _is_table_line(line: str, csv_cols: int | None) -> bool:
    if _PIPE_ROW.match(line) or _PIPE_RULE.match(line):
        return True
    if csv_cols and csv_cols >= 2:
        for sep in (",", "\t", ";"):
            if line.count(sep) + 1 == csv_cols:
                return True
    return False


def _csv_columns(lines: list[str]) -> int | None:
    """Column count shared by most lines when they look like CSV/TSV rows, else None."""
    best = None
    for sep in ("\t", ",", ";"):
        counts = [ln.count(sep) for ln in lines if ln.strip()]
        if len(counts) < 3:
            continue
        common = max(set(counts), key=counts.count)
        if common >= 1 and counts.count(common) >= 0.8 * len(counts):
            # Prose has commas too; CSV cells are short.
            cells = [c for ln in lines if ln.count(sep) == common for c in ln.split(sep)]
            if sum(len(c.strip()) for c in cells) / max(len(cells), 1) <= 30:
                best = common + 1
                break
    return best


def _analyse(lines: list[str]) -> dict[str, int]:
    nonempty = [ln for ln in lines if ln.strip()]
    csv_cols = _csv_columns(nonempty)
    in_fence = False
    fenced = code = md = table = headings = structured = 0
    for ln in nonempty:
        if _FENCE.match(ln):
            in_fence = not in_fence
            md += 1
            structured += 1
            continue
        if in_fence:
            fenced += 1
            code += 1
            structured += 1
            continue
        is_code, is_md, is_table = _is_code_line(ln), bool(_MD_LINE.match(ln)), _is_table_line(ln, csv_cols)
        code += is_code
        md += is_md
        table += is_table
        structured += is_code or is_md or is_table
        if _MD_HEADING.match(ln):
            headings += 1
    return {
        "lines": len(nonempty),
        "code": code,
        "fenced": fenced,
        "markdown": md,
        "table": table,
        "headings": headings,
        "structured": structured,
    }


def _resource_type(kind: str, stats: dict[str, int]) -> str:
    if kind == "screenshot":
        return "screenshot"
    n = max(stats["lines"], 1)
    if stats["fenced"] and stats["headings"] >= 1:
        return "markdown"  # a README-style document with code blocks
    # "# comment" lines look like headings, so code wins whenever most lines are code.
    if stats["code"] >= 3 and stats["code"] >= 0.5 * n:
        return "code"
    if stats["table"] >= 3 and stats["table"] >= 0.6 * n:
        return "table"
    if stats["headings"] >= 1 and stats["markdown"] >= 2:
        return "markdown"
    return "document"


def _title(lines: list[str], resource_type: str) -> str:
    if resource_type != "code":
        for ln in lines:
            m = _MD_HEADING.match(ln)
            if m:
                return _shorten(m.group(2).strip("*_ "), TITLE_MAX)
    for ln in lines:
        stripped = ln.strip()
        if stripped and not _FENCE.match(stripped) and not _PIPE_RULE.match(stripped):
            return _shorten(stripped.strip("#*_| ").strip() or stripped, TITLE_MAX)
    return "Untitled"


def _summary(lines: list[str]) -> str:
    """The first one or two sentences of prose, skipping headings, code, tables and lists."""
    prose: list[str] = []
    in_fence = False
    for ln in lines:
        if _FENCE.match(ln):
            in_fence = not in_fence
            if prose:
                break
            continue
        stripped = ln.strip()
        if in_fence or not stripped or _MD_HEADING.match(ln) or _is_code_line(ln) or _PIPE_ROW.match(ln):
            if prose:
                break
            continue
        if re.match(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+", ln) or len(stripped.split()) < 4:
            if prose:
                break
            continue
        prose.append(stripped)
    if not prose:
        return ""
    paragraph = " ".join(prose)
    sentences = _SENTENCE.split(paragraph)
    return _shorten(" ".join(sentences[:2]), SUMMARY_MAX)


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return (cut or text[: limit - 1]) + "…"


def classify_resource(text: str, *, kind: str = "text", min_chars: int = 1200) -> ResourceDraft | None:
    """Return a resource draft for documents, screenshots and long pasted content, else None.

    `kind` is the input kind ("text", "messages", "document", "screenshot"); blank text is
    never a resource since it gives nothing to store or search.
    """
    if not text or not text.strip():
        return None
    lines = text.splitlines()
    stats = _analyse(lines)
    structured = stats["structured"]
    forced = kind in ("document", "screenshot")
    if not forced and len(text) < min_chars and structured < MIN_STRUCTURED_LINES:
        return None
    resource_type = _resource_type(kind, stats)
    summary = _summary(lines)
    if not summary:
        summary = f"{resource_type.capitalize()} with {stats['lines']} line{'s' if stats['lines'] != 1 else ''}"
    return ResourceDraft(
        title=_title(lines, resource_type),
        summary=summary,
        resource_type=resource_type,
        content=text,
    )
