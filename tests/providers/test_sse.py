"""The SSE decoder: the same events whatever line boundaries the network produced."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from react_agent_mini.providers.http import error_detail, parse_retry_after
from react_agent_mini.providers.sse import ServerSentEvent, SSEDecoder, iter_sse


def decode(lines: list[str]) -> list[ServerSentEvent]:
    decoder = SSEDecoder()
    out = [e for line in lines if (e := decoder.feed(line)) is not None]
    if (tail := decoder.flush()) is not None:
        out.append(tail)
    return out


def test_fields_comments_and_multiline_data() -> None:
    stream = ": keep-alive", "event: message_start", 'data: {"a":', "data: 1}", "", "data:[DONE]", ""
    assert decode(list(stream)) == [ServerSentEvent("message_start", '{"a":\n1}'), ServerSentEvent("message", "[DONE]")]


def test_event_without_final_blank_line_is_flushed() -> None:
    assert decode(["data: tail"]) == [ServerSentEvent("message", "tail")]


payloads = st.lists(
    st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc", "Zl", "Zp"]), max_size=20), max_size=8
)


@given(payloads, st.data())
def test_any_chunking_of_the_byte_stream_gives_the_same_events(datas: list[str], data: st.DataObject) -> None:
    wire = "".join(f"event: e{i}\ndata: {d}\n\n" for i, d in enumerate(datas))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(wire)), max_size=10)))
    chunks = [wire[a:b] for a, b in zip([0, *cuts], [*cuts, len(wire)], strict=True)]

    async def lines():
        # reassemble lines the way a network reader would: split only at newlines, across chunks
        buffer = ""
        for chunk in chunks:
            buffer += chunk
            while "\n" in buffer:
                line, buffer = buffer.split("\n", 1)
                yield line
        if buffer:
            yield buffer

    import asyncio

    async def run() -> list[ServerSentEvent]:
        return [e async for e in iter_sse(lines())]

    assert asyncio.run(run()) == [ServerSentEvent(f"e{i}", d) for i, d in enumerate(datas)]


def test_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({}) is None
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0


def test_error_detail_reads_both_providers_shapes() -> None:
    assert error_detail(b'{"error": {"message": "Incorrect API key"}}') == "Incorrect API key"
    assert error_detail(b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}') == "Overloaded"
    assert error_detail(b"<html>bad gateway</html>") == "<html>bad gateway</html>"
