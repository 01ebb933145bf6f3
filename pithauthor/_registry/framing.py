"""Where one HTTP/1.1 request ends (RFC 9112), decided from its head alone: pure, no I/O.

The local registry's waiting room reads every byte of a request before a worker sees it, so it
must know where the request ends. It asks `head_size` (where the head ends) and `body_length`
(how long the body is), and the worker parses the same bytes with the same parser
(`http.client.parse_headers`, as `http.server` does) and asks `body_length` again. One function
for both sides: the two can never disagree about where the next request starts, which is what
request smuggling needs.

Framing the registry refuses (400, and the connection is closed), per RFC 9112 section 6:
`Transfer-Encoding` in any form (it is not implemented, and with `Content-Length` beside it a
proxy and this server could split the stream differently), more than one `Content-Length`, a
`Content-Length` that is not only ASCII digits (`int()` would take `+10`, `1_0`, `\\f10`), a
header line that is not `name: value` (`Content-Length : 5` would be silently ignored by the
parser), a folded header line, and a body on a GET.
"""

from __future__ import annotations

import email.message
import http.client
import io
import re
from dataclasses import dataclass

MAX_LINE = 65536
"""A longer request line is 414, a longer header line 431 (as `http.server` and `http.client`)."""
MAX_HEADERS = 100
"""More header lines are 431 (`http.client`'s limit)."""
MAX_HEAD = MAX_LINE + 16384
"""A head (request line and headers) still unfinished at this size is 414/431 at once."""
TOO_LARGE = -1
"""`head_size`'s answer when the head is over the limits (the worker answers 414/431)."""

_DIGITS = re.compile(r"[0-9]+")
_OWS = " \t"  # the optional white space RFC 9110 allows around a field value


class FramingError(Exception):
    """A request whose length cannot be trusted: answered 400, connection closed."""


@dataclass(frozen=True)
class Head:
    """A parsed request head: `method` is None when the request line is not `METHOD PATH
    HTTP/x.y` (the worker's own parse answers it)."""

    method: str | None
    path: str
    headers: email.message.Message


def request_words(line: bytes) -> list[str]:
    """The words of a request line, split exactly as `http.server` splits them."""
    return str(line, "iso-8859-1").rstrip("\r\n").split()


def head_size(buf: bytes | bytearray) -> int | None:
    """The length of the request head at the start of `buf` (request line, header lines, the
    empty line), None while it is incomplete, TOO_LARGE when it is over the limits. An HTTP/0.9
    request line (two words) has no headers: its head is that line."""
    end = buf.find(b"\n", 0, MAX_LINE)
    if end < 0:
        return None if len(buf) < MAX_LINE else TOO_LARGE
    pos = end + 1
    if len(request_words(bytes(buf[:pos]))) == 2:
        return pos
    for _ in range(MAX_HEADERS + 1):
        end = buf.find(b"\n", pos, pos + MAX_LINE)
        if end < 0:
            unfinished = len(buf) - pos >= MAX_LINE or len(buf) >= MAX_HEAD
            return TOO_LARGE if unfinished else None
        line = buf[pos : end + 1]
        pos = end + 1
        if line in (b"\r\n", b"\n"):
            return pos if pos <= MAX_HEAD else TOO_LARGE
    return TOO_LARGE


def parse_head(head: bytes) -> Head:
    """The method, path and headers of a whole head (as `head_size` measured it)."""
    fp = io.BytesIO(head)
    words = request_words(fp.readline(MAX_LINE + 1))
    headers = http.client.parse_headers(fp)
    if len(words) != 3:
        return Head(None, "", headers)
    return Head(words[0], words[1], headers)


def body_length(method: str, headers: email.message.Message) -> int:
    """The length of the body that follows this head; FramingError when it cannot be trusted."""
    if headers.defects or headers.get_payload():
        # a line that is not `name: value` ends the parser's headers early: what follows it
        # (perhaps a Content-Length) would be read as neither header nor body
        raise FramingError("a header line is not 'name: value'")
    if any("\n" in str(value) for value in headers.values()):
        # obs-fold: RFC 9112 section 5.2 lets a server refuse it, and a proxy might read the
        # folded line as a header of its own
        raise FramingError("a header line is folded (starts with white space)")
    if headers.get_all("Transfer-Encoding"):
        raise FramingError("Transfer-Encoding is not supported: send the body with Content-Length")
    values = headers.get_all("Content-Length") or []
    if len(values) > 1:
        raise FramingError("more than one Content-Length header")
    if not values:
        return 0
    text = str(values[0]).strip(_OWS)
    if not _DIGITS.fullmatch(text):
        raise FramingError("Content-Length must be digits only")
    length = int(text)
    if length and method != "POST":
        raise FramingError(f"a {method} request has no body here")
    return length
