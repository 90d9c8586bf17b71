"""index.html of a report: the statistics and a grid of example samples for a person to look at.

Each example shows the initial image (centre camera), the three final views (the sample's own
view marked in the View setting), the object table (index, size, colour, material, shape,
position, visible or not, and what the steps change) and the reference steps (object, attribute,
value, move type). The page is one file with inline CSS; it links the plots and the example
images, which `copy_examples` copies into the report folder so the report stays whole when it is
moved or shared without the dataset.
"""

from __future__ import annotations

import html
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tvr.trance.data.sample import Sample, image_name
from tvr.trance.paper import PAPER_TABLE8_SAMPLES
from tvr.trance.report.tables import TABLE8_NOTE, order_sensitive_line, table8_header, table8_rows
from tvr.trance.sampling.stats import order_sensitive_flags
from tvr.trance.world import vocab
from tvr.trance.world.vocab import IMAGE_SLOTS, VIEW_NAMES, VIEWS

#: the page's captions spell the centre view the British way, as the report always has
_CAPTION_VIEW = {**VIEW_NAMES, "C": "centre"}

#: the images of a sample, in the order the page shows them: (stage, view)


@dataclass
class Example:
    """One example sample on the page, with its images' paths relative to the report folder."""

    split: str
    position: int
    sample: Sample
    order_sensitive: bool
    images: dict[str, str | None] = field(default_factory=dict)  # "init.C" -> "images/..."

    @property
    def view(self) -> str | None:
        v = self.sample.extra.get("view")
        return v if v in VIEWS else None

    def summary(self) -> dict[str, Any]:
        return {
            "split": self.split,
            "position": self.position,
            "id": self.sample.id,
            "steps": len(self.sample.steps),
            "order_sensitive": self.order_sensitive,
            "view": self.view,
            "images": self.images,
        }


def choose_examples(n_samples: int, n: int) -> list[int]:
    """`n` positions spread evenly over a split (first and last included), in order."""
    if n <= 0 or n_samples == 0:
        return []
    if n >= n_samples:
        return list(range(n_samples))
    return sorted({round(float(x)) for x in np.linspace(0, n_samples - 1, n)})


def copy_examples(splits: list[Any], per_split: int, report_dir: Path) -> list[Example]:
    """Pick `per_split` samples spread over each split and copy their PNGs (when they exist)
    to report_dir/images/<split>/."""
    examples = []
    for sp in splits:
        positions = choose_examples(len(sp.samples), per_split)
        flags, _ = order_sensitive_flags([sp.samples[i] for i in positions])
        for i, flag in zip(positions, flags, strict=True):
            s = sp.samples[i]
            ex = Example(sp.name, i, s, flag)
            for stage, view in IMAGE_SLOTS:
                src = sp.image(i, stage, view)
                rel = None
                if src is not None:
                    rel = f"images/{sp.name}/{image_name(s.id, stage, view)}"
                    (report_dir / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(src, report_dir / rel)
                ex.images[f"{stage}.{view}"] = rel
            examples.append(ex)
    return examples


# --- the page -----------------------------------------------------------------------------------------
_CSS = """
body { font-family: system-ui, sans-serif; margin: 16px; color: #222; background: #fafafa; }
h1 { font-size: 20px; } h2 { font-size: 17px; margin-top: 28px; } h3 { font-size: 15px; }
table { border-collapse: collapse; font-size: 12px; }
td, th { border: 1px solid #ccc; padding: 2px 6px; text-align: right; }
th { background: #eee; } td.l, th.l { text-align: left; }
.paper { color: #777; }
.summary { max-width: 1100px; }
.plots img { max-width: 100%; border: 1px solid #ddd; background: white; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(680px, 1fr)); gap: 14px; }
.example { background: white; border: 1px solid #ccc; border-radius: 6px; padding: 10px; }
.example h3 { margin: 0 0 6px 0; }
.tag { display: inline-block; font-size: 11px; padding: 1px 6px; border-radius: 8px;
       background: #e5e5e5; margin-left: 4px; font-weight: normal; }
.tag.os { background: #ffd8a8; }
.images { display: flex; gap: 6px; margin-bottom: 8px; }
figure { margin: 0; text-align: center; font-size: 11px; border: 3px solid transparent; }
figure.view { border-color: #e8590c; }
figure img { width: 160px; height: 120px; display: block; image-rendering: auto; }
.noimg { width: 160px; height: 120px; display: flex; align-items: center; justify-content: center;
         background: #eee; color: #999; }
.tables { display: flex; gap: 12px; align-items: flex-start; flex-wrap: wrap; }
.swatch { display: inline-block; width: 10px; height: 10px; border: 1px solid #555;
          margin-right: 4px; vertical-align: middle; }
tr.hidden td { color: #999; }
td.changed { background: #fff3bf; }
"""


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _visible(pos: list[int]) -> bool:
    return all(vocab.VISIBLE_MIN <= p <= vocab.VISIBLE_MAX for p in pos)


def _value_text(value: int) -> str:
    """`position.front-left.1` -> `front-left 1`; `color.red` -> `red`."""
    rest = vocab.VALUES[value].split(".", 1)[1]
    return rest.replace(".", " ")


def _figure(ex: Example, stage: str, view: str) -> str:
    rel = ex.images.get(f"{stage}.{view}")
    label = "initial" if stage == "init" else "final"
    caption = f"{label}, {_CAPTION_VIEW[view]} ({view})"
    mark = stage == "fin" and ex.view == view
    if mark:
        caption += " &larr; View"
    if rel is None:
        body = '<div class="noimg">no image</div>'
    else:
        alt = f"{ex.sample.id} {stage}.{view}"
        body = f'<a href="{_e(rel)}"><img src="{_e(rel)}" alt="{_e(alt)}"></a>'
    cls = ' class="view"' if mark else ""
    return f"<figure{cls}>{body}<figcaption>{caption}</figcaption></figure>"


def _object_table(s: Sample) -> str:
    head = (
        "<tr><th>#</th><th class=l>size</th><th class=l>colour</th><th class=l>material</th>"
        "<th class=l>shape</th><th>position</th><th>visible</th><th class=l>after the steps</th></tr>"
    )
    rows = []
    for i, o in enumerate(s.objects):
        f = s.final[i] if i < len(s.final) else o
        vis = _visible(o["position"])
        changes = []
        for attr in ("size", "color", "material", "shape"):
            if f[attr] != o[attr]:
                changes.append(f"{attr} {f[attr]}")
        if list(f["position"]) != list(o["position"]):
            now = "visible" if _visible(f["position"]) else "invisible"
            changes.append(f"at ({f['position'][0]}, {f['position'][1]}), {now}")
        rgb = "#" + "".join(f"{c:02x}" for c in vocab.COLOR_RGB[o["color"]])
        swatch = f'<span class="swatch" style="background:{rgb}"></span>'
        change_cell = (
            f'<td class="l changed">{_e("; ".join(changes))}</td>' if changes else "<td></td>"
        )
        rows.append(
            f"<tr{'' if vis else ' class=hidden'}><td>{i}</td><td class=l>{_e(o['size'])}</td>"
            f"<td class=l>{swatch}{_e(o['color'])}</td><td class=l>{_e(o['material'])}</td>"
            f"<td class=l>{_e(o['shape'])}</td>"
            f"<td>({o['position'][0]}, {o['position'][1]})</td>"
            f"<td>{'yes' if vis else 'no'}</td>{change_cell}</tr>"
        )
    return f'<table class="objects">{head}{"".join(rows)}</table>'


def _steps_table(s: Sample) -> str:
    head = (
        "<tr><th>step</th><th>object</th><th class=l>attribute</th><th class=l>value</th>"
        "<th class=l>move type</th></tr>"
    )
    rows = []
    for k, st in enumerate(s.steps, start=1):
        rows.append(
            f'<tr class="step"><td>{k}</td><td>{st.obj}</td><td class=l>{_e(st.attr)}</td>'
            f"<td class=l>{_e(_value_text(st.value))}</td>"
            f"<td class=l>{_e(st.move_type or '-')}</td></tr>"
        )
    return f'<table class="steps">{head}{"".join(rows)}</table>'


def _example_html(ex: Example) -> str:
    s = ex.sample
    tags = f'<span class="tag">{len(s.steps)} step{"s" if len(s.steps) > 1 else ""}</span>'
    tags += f'<span class="tag">{s.num_visible} visible</span>'
    if ex.order_sensitive:
        tags += '<span class="tag os">order-sensitive</span>'
    if ex.view:
        tags += f'<span class="tag">View: {ex.view}</span>'
    figures = "".join(_figure(ex, stage, view) for stage, view in IMAGE_SLOTS)
    return (
        f'<div class="example" data-split="{_e(ex.split)}" data-id="{_e(s.id)}">'
        f"<h3>{_e(ex.split)} #{ex.position}: {_e(s.id)}{tags}</h3>"
        f'<div class="images">{figures}</div>'
        f'<div class="tables">{_object_table(s)}{_steps_table(s)}</div></div>'
    )


def _table8_html(stats: dict[str, Any]) -> str:
    header = table8_header(stats)
    ths = "".join(
        f"<th{' class=paper' if h.endswith('(paper)') else ''}>{_e(h)}</th>" for h in header
    )
    rows = []
    for row in table8_rows(stats):
        cells = [f"<td class=l>{_e(row[0])}</td>"]
        for j, c in enumerate(row[1:], start=1):
            cls = " class=paper" if header[j].endswith("(paper)") else ""
            cells.append(f"<td{cls}>{_e(c)}</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return f'<table class="table8"><tr>{ths}</tr>{"".join(rows)}</table>'


def index_html(report: dict[str, Any], examples: list[Example], setting: str | None) -> str:
    """The page, as one string."""
    stats = report["stats"]
    splits = ", ".join(
        f"{_e(k)}: {v['samples']:,} ({v['order_sensitive_share']:.1%} order-sensitive)"
        for k, v in report["splits"].items()
    )
    by_split: dict[str, list[Example]] = {}
    for ex in examples:
        by_split.setdefault(ex.split, []).append(ex)
    sections = []
    for split, exs in by_split.items():
        sections.append(
            f"<h3>{_e(split)}</h3><div class=grid>{''.join(_example_html(e) for e in exs)}</div>"
        )
    view_note = (
        "<p>View setting: the orange frame marks the final view each sample is posed with.</p>"
        if setting == "view"
        else ""
    )
    combined = report["plots"].get("combined")
    plots = (
        f'<a href="{_e(combined)}"><img src="{_e(combined)}" alt="balance"></a>' if combined else ""
    )
    singles = " · ".join(
        f'<a href="{_e(p)}">{_e(k)}</a>' for k, p in report["plots"].items() if k != "combined"
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>tvr report: {_e(report["source"])}</title>
<style>{_CSS}</style></head>
<body>
<h1>Dataset report: {_e(report["source"])}</h1>
<div class="summary">
<p>{_e(report["kind"])}, setting {_e(setting or "unknown")}. Splits: {splits}.
Statistics below are over <b>{_e(report["scope"])}</b> ({stats["samples"]:,} samples).
Machine-readable: <a href="report.json">report.json</a>, <a href="report.md">report.md</a>.</p>
<p>Order-sensitive samples: {_e(order_sensitive_line(stats))}.</p>
</div>
<h2>Balanced factors (like Fig. 11 of the journal paper)</h2>
<div class="plots">{plots}<p>One figure per factor: {singles}</p></div>
<h2>n-gram atomic transformations (Table 8)</h2>
<p>Grey columns: the paper's numbers, for its {PAPER_TABLE8_SAMPLES:,} samples.
{_e(TABLE8_NOTE)}</p>
{_table8_html(stats)}
<h2>Example samples</h2>
{view_note}
<p>Grey rows: objects outside the visible area of the initial scene. Yellow: what the reference
steps change. Click an image for the full-size PNG.</p>
{"".join(sections)}
</body></html>
"""
