"""This process's own counters and histograms (app/process_metrics.py) as metric families,
and a minimal HTTP endpoint that serves them from a `faithscreen worker` process."""

from __future__ import annotations

import asyncio
import math

from app.observability.exposition import CONTENT_TYPE, MetricFamily, Sample, render
from app.process_metrics import FAMILIES, REGISTRY, Family, Histogram, Registry


def process_families(registry: Registry = REGISTRY) -> list[MetricFamily]:
    return [_family(family, registry) for family in FAMILIES]


def _family(family: Family, registry: Registry) -> MetricFamily:
    if family.kind != "histogram":
        samples = [
            Sample(dict(zip(family.labels, labels, strict=True)), value)
            for labels, value in registry.series(family)
        ]
        return MetricFamily(family.name, family.kind, family.help, samples)
    samples = [
        sample
        for labels, histogram in registry.histogram_series(family)
        for sample in _histogram(family, dict(zip(family.labels, labels, strict=True)), histogram)
    ]
    return MetricFamily(family.name, "histogram", family.help, samples)


def _histogram(family: Family, labels: dict[str, str], histogram: Histogram) -> list[Sample]:
    cumulative, samples = 0, []
    for bound, n in zip(family.bounds, histogram.counts, strict=True):
        cumulative += n
        samples.append(Sample(labels | {"le": _bound(bound)}, cumulative, "_bucket"))
    return [
        *samples,
        Sample(labels | {"le": "+Inf"}, histogram.count, "_bucket"),
        Sample(labels, histogram.total, "_sum"),
        Sample(labels, histogram.count, "_count"),
    ]


def _bound(value: float) -> str:
    return "+Inf" if math.isinf(value) else repr(float(value))


async def serve_process_metrics(host: str, port: int) -> asyncio.Server:
    """GET /metrics on host:port answers this process's families; anything else 404. No
    key: bind it where only the scraper reaches (the default host is 127.0.0.1)."""
    return await asyncio.start_server(_answer, host, port)


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        request = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=10)
        method, path, *_ = [*request.split(b" ", 2), b"", b""]
        if (method, path.split(b"?")[0]) == (b"GET", b"/metrics"):
            status, content_type, body = "200 OK", CONTENT_TYPE, render(process_families())
        else:
            status, content_type, body = "404 Not Found", "text/plain", "not found\n"
        data = body.encode("utf-8")
        head = (
            f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
        )
        writer.write(head.encode("ascii") + data)
        await writer.drain()
    except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
        pass
    finally:
        writer.close()
