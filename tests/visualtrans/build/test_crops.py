"""Object crops: a tiny randomly initialised Grounding DINO, made from a config and a tokenizer
built here (nothing downloaded), runs on the CPU through transformers' zero-shot detection
classes and crops the task object of an episode."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tvr.core.errors import UserError


def tiny_grounding_dino(folder: Path) -> Path:
    from transformers import (
        BertConfig,
        BertTokenizerFast,
        GroundingDinoConfig,
        GroundingDinoForObjectDetection,
        GroundingDinoImageProcessor,
        GroundingDinoProcessor,
        SwinConfig,
    )

    folder.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", "stacked", "blocks", "bowls"]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tokenizer = BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True)
    text = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1,
                      num_attention_heads=2, intermediate_size=37, max_position_embeddings=64)  # fmt: skip
    backbone = SwinConfig(embed_dim=16, depths=[1, 1, 1, 1], num_heads=[1, 1, 1, 1], window_size=4,
                          image_size=64, out_features=["stage2", "stage3", "stage4"])  # fmt: skip
    config = GroundingDinoConfig(
        backbone_config=backbone, text_config=text, d_model=32, encoder_layers=1,
        decoder_layers=2, encoder_attention_heads=2, decoder_attention_heads=2,
        encoder_ffn_dim=32, decoder_ffn_dim=32, num_queries=10, num_feature_levels=3,
        encoder_n_points=2, decoder_n_points=2, max_text_len=32, use_timm_backbone=False,
    )  # fmt: skip
    GroundingDinoForObjectDetection(config).save_pretrained(folder)
    image = GroundingDinoImageProcessor(size={"shortest_edge": 64, "longest_edge": 96})
    GroundingDinoProcessor(image_processor=image, tokenizer=tokenizer).save_pretrained(folder)
    return folder


@pytest.mark.slow
def test_tiny_grounding_dino_crops_the_task_object(tmp_path):
    pytest.importorskip("transformers")
    pytest.importorskip("torch")
    from tvr.video.frames import write_image
    from tvr.visualtrans.build.crops import crop_episodes

    model = tiny_grounding_dino(tmp_path / "gdino")
    images = tmp_path / "images"
    rng = np.random.default_rng(0)
    record = {"episode": "build_unstack_lego_0", "scene": "build_unstack_lego", "frames": {}}
    for role in ("start", "end"):
        rel = f"build_unstack_lego/build_unstack_lego_0_{role}.jpg"
        write_image(images / rel, (rng.random((48, 64, 3)) * 255).astype(np.uint8))
        record["frames"][role] = {"image": rel}
    other = {"episode": "sort_beads_0", "scene": "sort_beads", "frames": record["frames"]}
    crops, note = crop_episodes(model, [record, other], images, tmp_path / "crops", threshold=0.0)
    assert [p.name for p in crops["build_unstack_lego_0"]] == [
        "build_unstack_lego_0_start_crop.jpg", "build_unstack_lego_0_end_crop.jpg"]  # fmt: skip
    assert all(p.is_file() for p in crops["build_unstack_lego_0"])
    assert "sort_beads_0" not in crops
    assert "2 crops" in note and "no query for sort_beads" in note


def test_a_detector_must_be_a_local_folder(tmp_path):
    from tvr.visualtrans.build.crops import Detector

    with pytest.raises(UserError, match="not a local model folder"):
        Detector(tmp_path / "IDEA-Research/grounding-dino-tiny")


def test_crop_box_pads_and_clips():
    from tvr.visualtrans.build.crops import crop_box

    assert crop_box([10, 10, 20, 30], 64, 48) == (9, 8, 22, 33)
    assert crop_box([0, 0, 0.5, 0.5], 64, 48) == (0, 0, 64, 48)  # degenerate: the whole frame
