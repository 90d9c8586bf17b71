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
class Layout:
    width: int
    height: int
    nodes: tuple[Node, ...]
    edges: tuple[tuple[Node, Node], ...]
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

    nodes = []
    for e in graph.events:
        y = sum(y_of(o) for o in e.objects) / len(e.objects)
        objs = "-".join(str(o) for o in e.objects)
        nodes.append(Node(x_of(e.frame), y, e, f"{e.kind} {objs} @ {e.frame}"))
    edges = tuple((nodes[p], nodes[k]) for k, ps in enumerate(graph.parents) for p in ps)
    rows = tuple((y_of(i), f"{i}: {name}") for i, name in enumerate(object_names))
    ticks = tuple((x_of(f), f) for f in range(0, span + 1, 25))
    height = int(y_of(max(len(object_names) - 1, 0)) + 40)
    return Layout(WIDTH, height, tuple(nodes), edges, rows, ticks)
