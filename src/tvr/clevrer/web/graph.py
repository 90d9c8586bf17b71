"""The causal graph of a video laid out for an SVG: events at their frames, edges to their causes."""

from __future__ import annotations

from dataclasses import dataclass

from tvr.clevrer.programs.facts import Event
from tvr.clevrer.world.events import causal_graph

WIDTH = 760
ROW = 34
LEFT = 150
RIGHT = 20


@dataclass(frozen=True)
class Node:
    x: float
    y: float
    event: Event
    label: str


@dataclass(frozen=True)
class Edge:
    """A cause -> effect arrow, its head stopped at the effect's circle."""

    x1: float
    y1: float
    x2: float
    y2: float


def _edge(a: Node, b: Node, radius: float = 7.0) -> Edge:
    dx, dy = b.x - a.x, b.y - a.y
    length = max((dx * dx + dy * dy) ** 0.5, 1e-9)
    cut = min(radius, length / 2) / length
    return Edge(a.x + dx * cut, a.y + dy * cut, b.x - dx * cut, b.y - dy * cut)


@dataclass(frozen=True)
class Layout:
    width: int
    height: int
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    bars: tuple[Edge, ...]
    rows: tuple[tuple[float, str], ...]
    ticks: tuple[tuple[float, int], ...]


def layout(events: list[Event], object_names: list[str], last_frame: int) -> Layout:
    """Node positions: x by frame, y by object row (a collision between its two rows)."""
    graph = causal_graph(events)
    span = max(last_frame, 1)

    def x_of(frame: int) -> float:
        return LEFT + (WIDTH - LEFT - RIGHT) * frame / span

    def y_of(obj: int) -> float:
        return 24 + ROW * obj

    # an event is a dot on each of its objects' rows (a collision: two dots and a bar between);
    # a cause -> effect arrow runs along the row of the object the two events share
    nodes, bars, edges = [], [], []
    at: dict[tuple[int, int], Node] = {}
    for k, e in enumerate(graph.events):
        objs = "-".join(str(o) for o in e.objects)
        for o in e.objects:
            at[k, o] = Node(x_of(e.frame), y_of(o), e, f"{e.kind} {objs} @ {e.frame}")
            nodes.append(at[k, o])
        if len(e.objects) == 2:
            a, b = (at[k, o] for o in e.objects)
            bars.append(Edge(a.x, a.y, b.x, b.y))
        for p in graph.parents[k]:
            for o in set(graph.events[p].objects) & set(e.objects):
                edges.append(_edge(at[p, o], at[k, o]))
    rows = tuple((y_of(i), f"{i}: {name}") for i, name in enumerate(object_names))
    ticks = tuple((x_of(f), f) for f in range(0, span + 1, 25))
    height = int(y_of(max(len(object_names) - 1, 0)) + 40)
    return Layout(WIDTH, height, tuple(nodes), tuple(edges), tuple(bars), rows, ticks)
