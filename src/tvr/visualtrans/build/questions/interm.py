"""Procedural intermediate state: which of four frames is an intermediate state of this
episode? The correct frame is one of the episode's own intermediate keyframes; the three
distractors are intermediate keyframes of other episodes of the same scene, drawn with the
seed (the paper's distractor frames of other episodes). Needs four episodes of the scene."""

from __future__ import annotations

from tvr.visualtrans.build.questions.base import Context, Draft, EpisodeView, Family

STEM = ("Provide additional <image3>, <image4>, <image5>, and <image6>, which represents a "
        "possible intermediate state during a manipulation task. Which one is a reasonable "
        "intermediate state during the task?\n\nConsider whether the object configuration in "
        "each candidate image reflects a plausible transition from the start state (<image1>) "
        "toward the finish state (<image2>).")  # fmt: skip


def candidates(ep: EpisodeView, ctx: Context) -> list[Draft]:
    own = ep.mediums()
    others = [m for o in ctx.episodes if o.scene == ep.scene and o.episode != ep.episode
              for m in o.mediums()[:1]]  # fmt: skip
    if not own or len(others) < 3:
        return []
    return [Draft("interm.candidates", ep.episode, ep.scene, ep.episode, [ep.start, ep.end],
                  STEM, "choice", correct=own[0], distractors=tuple(others),
                  image_options=True)]  # fmt: skip


FAMILIES = (
    Family("interm.candidates", "procedural_interm", "choice",
           ("stack", "rack", "row", "board", "food", "beads", "lids", "sequence"), candidates,
           r"^provide additional <image3>", "intermediate frame among other episodes' frames"),
)  # fmt: skip
