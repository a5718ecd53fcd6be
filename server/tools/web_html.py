"""Turning a fetched body into text for the model: charset decoding, HTML → Markdown or plain text.

HTML is cleaned before conversion: scripts, styles, comments, embedded frames and hidden
elements never reach the model, and the page's main content (`<main>`, `role=main`, a single
`<article>`) is kept when the page marks one, else the body without navigation, headers,
footers and sidebars. Links and images are made absolute against the page URL.
"""

from __future__ import annotations

import codecs
import re
from typing import Any
from urllib.parse import urljoin

DROP_TAGS = [
    "script",
    "style",
    "noscript",
    "template",
    "iframe",
    "frame",
    "frameset",
    "object",
    "embed",
    "svg",
    "canvas",
    "link",
    "meta",
    "title",
    "button",
    "select",
]
BOILERPLATE = (
    "nav, footer, aside, dialog, [role=navigation], [role=banner], [role=contentinfo], "
    "[role=complementary], [role=search]"
)
IN_CONTENT_BOILERPLATE = "nav, [role=navigation], [role=search]"
BLOCK_TAGS = {
    "address",
    "article",
    "aside",
    "blockquote",
    "dd",
    "details",
    "div",
    "dl",
    "dt",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "tr",
    "ul",
}
# WHATWG decodes these labels with a wider charset than Python's codec of the same name.
CHARSET_ALIASES = {
    "iso-8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "shift_jis": "cp932",
    "sjis": "cp932",
    "x-sjis": "cp932",
    "euc-kr": "cp949",
}
HEADINGS = ["h1", "h2", "h3", "h4", "h5", "h6"]
# Anchors that only give a heading its own link ("¶" in Sphinx, "#" in many blogs).
PERMALINK_MARKS = {"", "¶", "#", "§", "🔗"}
UNSAFE_LINK = re.compile(r"^\s*(javascript|vbscript|data):", re.IGNORECASE)
HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)""", re.IGNORECASE)
XML_ENCODING = re.compile(rb"""^<\?xml[^>]+encoding\s*=\s*["']([\w.:-]+)""")
HTML_TYPES = ("text/html", "application/xhtml+xml")
BINARY_TYPES = ("application/pdf", "application/zip", "application/gzip", "application/wasm")
BINARY_FAMILIES = ("image", "audio", "video", "font")


def mime_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def is_html(content_type: str, body: bytes) -> bool:
    mime = mime_type(content_type)
    if mime in HTML_TYPES:
        return True
    head = body[:512].lstrip().lower()
    return mime in ("", "text/plain") and head.startswith((b"<!doctype html", b"<html"))


def is_binary(content_type: str, body: bytes) -> bool:
    mime = mime_type(content_type)
    if mime.split("/", 1)[0] in BINARY_FAMILIES or mime in BINARY_TYPES:
        return True
    return b"\x00" in body[:1024] and not body.startswith(
        (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
    )


def decode_body(body: bytes, content_type: str) -> str:
    """Decode with the BOM, the header charset or the document's own declaration; else UTF-8
    when the bytes are UTF-8 and Windows-1252 (what browsers assume) when they are not."""
    boms = (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    )
    for bom, bom_codec in boms:
        if body.startswith(bom):
            return body.decode(bom_codec, errors="replace")
    name = _known_charset(_declared_charset(body, content_type))
    if name is None:
        name = "utf-8" if _is_utf8(body) else "cp1252"
    return body.decode(name, errors="replace")


def _declared_charset(body: bytes, content_type: str) -> str | None:
    match = re.search(r"charset\s*=\s*[\"']?([\w.:-]+)", content_type, re.IGNORECASE)
    if match:
        return match.group(1)
    head = body[:4096]
    found = XML_ENCODING.search(head) or META_CHARSET.search(head)
    return found.group(1).decode("ascii", errors="replace") if found else None


def _known_charset(label: str | None) -> str | None:
    if not label:
        return None
    label = CHARSET_ALIASES.get(label.strip().lower(), label.strip().lower())
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def _is_utf8(body: bytes) -> bool:
    # A body cut at the size cap may end inside a character: the decoder is not told it ended.
    try:
        codecs.getincrementaldecoder("utf-8")().decode(body, final=False)
    except UnicodeDecodeError:
        return False
    return True


def html_to_markdown(html: str, base_url: str) -> str:
    from markdownify import MarkdownConverter

    root = _main_content(_clean_soup(html, base_url))
    converter = MarkdownConverter(
        heading_style="ATX",
        bullets="-",
        escape_underscores=False,
        escape_asterisks=False,
        table_infer_header=True,
        wrap=True,
        wrap_width=None,
        code_language_callback=_code_language,
    )
    return _tidy(converter.convert_soup(root))


def html_to_text(html: str, base_url: str) -> str:
    from bs4 import NavigableString

    pieces: list[str] = []
    kept: list[str] = []  # preformatted text, put back after the rest is reflowed
    # An explicit stack rather than recursion: pages can nest deeper than Python's limit.
    stack: list[Any] = [_main_content(_clean_soup(html, base_url))]
    while stack:
        node = stack.pop()
        if isinstance(node, NavigableString):
            pieces.append(re.sub(r"\s+", " ", node))
        elif isinstance(node, str):
            pieces.append(node)
        elif node.name == "br":
            pieces.append("\n")
        elif node.name == "pre":
            kept.append(node.get_text())
            pieces.append(f"\n\x00{len(kept) - 1}\x00\n")
        else:
            block = node.name in BLOCK_TAGS
            stack.append("\t" if node.name in ("td", "th") else "\n" if block else "")
            stack.extend(reversed(node.contents))
            pieces.append("\n" if block else "")
    text = "\n".join(line.strip(" ") for line in "".join(pieces).splitlines())
    return _tidy(re.sub("\x00(\\d+)\x00", lambda m: kept[int(m.group(1))], text))


def _clean_soup(html: str, base_url: str) -> Any:
    from bs4 import BeautifulSoup
    from bs4.element import PreformattedString, Tag

    soup = BeautifulSoup(html, "html.parser")
    # Comments, doctype, CDATA and processing instructions
    for node in soup.find_all(string=lambda s: isinstance(s, PreformattedString)):
        node.extract()
    for tag in soup.find_all(DROP_TAGS):
        tag.decompose()
    for tag in soup.find_all(_is_hidden):
        tag.decompose()
    base_tag = soup.find("base", href=True)
    href = base_tag.get("href") if isinstance(base_tag, Tag) else None
    base = urljoin(base_url, href) if isinstance(href, str) else base_url
    _absolutize(soup, base)
    return soup


def _is_hidden(tag: Any) -> bool:
    if tag.has_attr("hidden") or tag.get("aria-hidden") == "true":
        return True
    return bool(HIDDEN_STYLE.search(tag.get("style", "")))


def _absolutize(soup: Any, base: str) -> None:
    for link in soup.find_all("a", href=True):
        href = link["href"].strip()
        if href.startswith("#") and link.get_text(strip=True) in PERMALINK_MARKS:
            link.decompose()
        elif UNSAFE_LINK.match(href) or (href.startswith("#") and link.find_parent(HEADINGS)):
            link.unwrap()
        else:
            link["href"] = urljoin(base, href)
    for image in soup.find_all("img"):
        src = image.get("src", "")
        if not src or UNSAFE_LINK.match(src):
            image.decompose()
        else:
            image["src"] = urljoin(base, src.strip())


def _main_content(soup: Any) -> Any:
    body = soup.body or soup
    root = _landmark(body)
    if root is not None:
        for tag in root.select(IN_CONTENT_BOILERPLATE):
            tag.decompose()
        return root
    for tag in body.select(BOILERPLATE):
        tag.decompose()
    for header in body.find_all("header"):
        if not header.find_parent(["article", "main"]):
            header.decompose()
    return body


def _landmark(body: Any) -> Any:
    for selector in ("main", "[role=main]", "article"):
        found = body.select(selector)
        # A landmark holding a small share of the text marks a widget, not the page's content.
        if len(found) == 1 and _text_size(found[0]) >= 0.2 * _text_size(body):
            return found[0]
    return None


def _text_size(tag: Any) -> int:
    return len(tag.get_text(" ", strip=True))


def _code_language(element: Any) -> str:
    for tag in (element, element.find("code")):
        for name in (tag.get("class") or []) if tag else []:
            if name.startswith(("language-", "lang-")):
                return name.split("-", 1)[1]
    return ""


def _tidy(text: str) -> str:
    text = text.replace("\xa0", " ").replace("\u200b", "")
    lines = [line.rstrip() for line in text.splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
