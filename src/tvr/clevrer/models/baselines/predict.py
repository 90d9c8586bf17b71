"""Answer question files with a trained baseline: a submission in the challenge's format.

A descriptive question gets the arg-max of ANSWERS; an option is "correct" when its logit is
positive (probability above 1/2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch.utils.data import DataLoader

from tvr.clevrer.data.questions import VideoQuestions
from tvr.clevrer.data.submission import SubmittedQuestion, SubmittedVideo
from tvr.clevrer.models.baselines.data import ANSWERS, VideoQA, collate
from tvr.clevrer.models.baselines.module import BaselineModule, frames_for
from tvr.training.runs import load_run_module


@dataclass
class Baseline:
    """A trained baseline ready to answer (eval mode, on `device`)."""

    module: BaselineModule
    device: torch.device

    @classmethod
    def load(cls, checkpoint: str | Path, device: str = "cpu") -> Baseline:
        module = load_run_module(BaselineModule, checkpoint, "baseline", device)
        return cls(module, torch.device(device))

    @torch.no_grad()
    def answer(
        self, videos: Sequence[VideoQuestions], data: str, progress: bool = True
    ) -> list[SubmittedVideo]:
        """Answers to every question of `videos` (frames are read from the set `data`)."""
        cfg = self.module.config
        dataset = VideoQA(
            videos, self.module.word_vocab, frames_for(cfg, list(videos), data, progress)
        )
        loader = DataLoader(dataset, batch_size=cfg.batch_videos, collate_fn=collate)
        out = []
        for batch in loader:
            batch = {k: v.to(self.device) if torch.is_tensor(v) else v for k, v in batch.items()}
            answer, option = self.module(batch)
            best = answer.argmax(-1).tolist()
            correct = (option > 0).tolist()
            k = 0
            for v in batch["video"].tolist():
                answers: list[SubmittedQuestion] = []
                choices: dict[int, str] = {}
                items = dataset.items[v]
                for i, item in enumerate(items):
                    if item.choice_id is None:
                        answers.append(SubmittedQuestion(item.question_id, answer=ANSWERS[best[k]]))
                    else:
                        choices[item.choice_id] = "correct" if correct[k] else "wrong"
                        last = i + 1 == len(items) or items[i + 1].question_id != item.question_id
                        if last:
                            answers.append(SubmittedQuestion(item.question_id, choices=choices))
                            choices = {}
                    k += 1
                out.append(SubmittedVideo(dataset.scenes[v], tuple(answers)))
        return out
