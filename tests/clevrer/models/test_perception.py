"""The video frame parser and tracking: each detector's forward and backward, the U-Net's targets
and grouping, attribute crops, mAP and attribute scores, tracking on ground-truth masks (exact
objects, the world's visibility), a resumable training run and detection in the official layout."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchvision")
pytest.importorskip("lightning")
pytest.importorskip("pycocotools")

from tvr.clevrer.data.annotations import read_annotation  # noqa: E402
from tvr.clevrer.data.layout import find_annotation, find_video  # noqa: E402
from tvr.clevrer.data.masks import MaskFrame, MaskObject, MaskProposals, encode_mask, read_masks  # noqa: E402
from tvr.clevrer.models.perception import (  # noqa: E402
    DetectorConfig,
    detect_video,
    load_parser,
    observed_scene_reader,
    track,
    tracks_to_dynamics,
    train_detector,
)
from tvr.clevrer.models.perception.attributes import AttributeNet, attribute_loss, crop_objects  # noqa: E402
from tvr.clevrer.models.perception.detectors import build_detector  # noqa: E402
from tvr.clevrer.models.perception.evaluate import tracking_scores  # noqa: E402
from tvr.clevrer.models.perception.metrics import FrameFound, FrameTruth, attribute_scores, coco_map  # noqa: E402
from tvr.clevrer.models.perception.unet import OFFSET_SCALE, CentreUNet  # noqa: E402
from tvr.clevrer.programs.dynamics import facts_from_dynamics, read_dynamics  # noqa: E402
from tvr.clevrer.world.camera import project  # noqa: E402
from tvr.core.errors import UserError  # noqa: E402


def _two_boxes(h: int = 64, w: int = 96) -> torch.Tensor:
    """Id maps (2, h, w): two objects in the first image (touching), one in the second."""
    ids = torch.full((2, h, w), -1, dtype=torch.int64)
    ids[0, 10:22, 20:32] = 0
    ids[0, 10:22, 32:44] = 1
    ids[1, 30:40, 50:62] = 0
    return ids


@pytest.mark.parametrize("name", ["unet", "maskrcnn-r18", "maskrcnn-r50"])
def test_each_detector_trains_and_detects_on_a_tiny_batch(name):
    torch.manual_seed(0)
    det = build_detector(name, (64, 96), width=8)
    det.train()
    images = torch.rand(2, 3, 64, 96)
    losses = det.losses(images, _two_boxes())
    total = sum(losses.values())
    assert torch.isfinite(total)
    total.backward()
    grads = [p.grad for p in det.parameters() if p.requires_grad]
    assert any(g is not None and g.abs().sum() > 0 for g in grads)
    det.eval()
    found = det.detect(images)
    assert len(found) == 2
    for d in found:
        assert d.masks.shape[1:] == (64, 96) and d.masks.dtype == torch.bool
        assert d.scores.shape == (d.masks.shape[0],)


def test_unet_targets_mark_each_centroid_and_point_to_it():
    net = CentreUNet(width=4)
    ids = _two_boxes()
    t = net.targets(ids)
    # object 0 of image 0 covers rows 10..21, cols 20..31: centroid (15.5, 25.5)
    assert t["heat"][0].max() == 1.0
    assert int((t["heat"][0] == 1.0).sum()) == 2 and int((t["heat"][1] == 1.0).sum()) == 1
    dy, dx = t["offset"][0, :, 10, 20] * OFFSET_SCALE
    assert (float(dy), float(dx)) == pytest.approx((5.5, 5.5))
    assert torch.equal(t["object"][0] > 0, ids[0] >= 0)


def test_unet_grouping_splits_touching_objects_by_their_centres():
    net = CentreUNet(width=4, min_pixels=1)
    ids = _two_boxes()[0]
    t = net.targets(ids[None])
    maps = torch.zeros(4, 64, 96)
    maps[0] = torch.where(ids >= 0, 10.0, -10.0)
    maps[1] = torch.logit(t["heat"][0].clamp(1e-4, 1 - 1e-4))
    maps[2:] = t["offset"][0]
    d = net.group(maps)
    assert len(d.scores) == 2
    got = sorted(d.masks, key=lambda m: int(m.nonzero()[:, 1].min()))
    assert torch.equal(got[0], ids == 0) and torch.equal(got[1], ids == 1)


def test_attribute_crops_hold_the_masked_object_and_the_classifier_trains():
    img = np.zeros((320, 480, 3), dtype=np.uint8)
    img[100:130, 200:230] = (200, 30, 30)
    img[100:130, 230:260] = (30, 30, 200)  # a touching neighbour that must be masked out
    mask = np.zeros((1, 320, 480), dtype=bool)
    mask[0, 100:130, 200:230] = True
    crop = crop_objects(img, mask, 16)
    assert crop.shape == (1, 4, 16, 16)
    centre = crop[0, :, 8, 8]
    assert centre[3] == pytest.approx(1.0) and centre[0] > 0.7 and centre[2] < 0.2
    assert float(crop[0, 2].max()) < 0.2  # no blue: the neighbour is zeroed
    net = AttributeNet(width=8)
    logits = net(torch.rand(3, 4, 32, 32))
    assert [v.shape[1] for v in logits.values()] == [8, 2, 3]
    loss = attribute_loss(logits, torch.tensor([[0, 0, 0], [1, 1, 1], [7, 0, 2]]))
    loss.backward()
    assert torch.isfinite(loss)


def _rle_square(y: int, x: int, side: int = 20) -> dict:
    m = np.zeros((320, 480), dtype=np.uint8)
    m[y : y + side, x : x + side] = 1
    return encode_mask(m)


def test_map_and_attribute_scores_reward_only_what_is_right():
    truth = [
        FrameTruth(
            (_rle_square(50, 50), _rle_square(100, 200)),
            (("red", "metal", "cube"), ("blue", "rubber", "sphere")),
        )
    ]
    perfect = [
        FrameFound(np.array([0.9, 0.8]), truth[0].rles, truth[0].attributes, np.array([True, True]))
    ]
    assert coco_map(truth, perfect)["segm_ap"] == pytest.approx(1.0)
    assert attribute_scores(truth, perfect)["attributes_acc"] == 1.0
    shifted = [FrameFound(np.array([0.9, 0.8]), (_rle_square(58, 50), truth[0].rles[1]),
                          (("red", "metal", "cube"), ("blue", "metal", "sphere")), np.array([True, True]))]  # fmt: skip
    m = coco_map(truth, shifted)
    # the shifted square (IoU 0.43, scored higher) is a false positive at every threshold: precision
    # 1/2 up to recall 1/2, i.e. 51 of COCO's 101 recall points at 0.5
    assert m["segm_ap"] == m["segm_ap50"] == m["bbox_ap"] == pytest.approx(0.5 * 51 / 101)
    s = attribute_scores(truth, shifted)
    assert s["recall"] == pytest.approx(0.5)  # the shifted square (IoU 0.43) does not match
    assert s["material_acc"] == 0.0 and s["color_acc"] == 1.0


# ------------------------------------------------------------------ tracking on the rendered set


def _annotation_objects(root, index):
    ann = read_annotation(find_annotation(root, index))
    return ann, {(o.color, o.material, o.shape): o.object_id for o in ann.object_property}


def test_tracking_ground_truth_masks_recovers_the_annotations_objects(rendered_set):
    for index in range(3):
        masks = read_masks(rendered_set / "masks" / f"sim_{index:05d}.json")
        tracks = track(masks)
        ann, ids = _annotation_objects(rendered_set, index)
        in_masks = {(o.color, o.material, o.shape) for f in masks.frames for o in f.objects}
        assert {(p.color, p.material, p.shape) for p in tracks.objects} == in_masks == set(ids)
        agree, total, errors = 0, 0, []
        for i, p in enumerate(tracks.objects):
            oid = ids[(p.color, p.material, p.shape)]
            listed = [any((o.color, o.material, o.shape) == (p.color, p.material, p.shape) for o in f.objects)
                      for f in masks.frames]  # fmt: skip
            assert tracks.seen[:, i].tolist() == listed
            for k, frame in enumerate(ann.motion_trajectory[: len(masks.frames)]):
                state = frame.objects[oid]
                agree += state.inside_camera_view == tracks.visible[k, i]
                total += 1
                if state.inside_camera_view and tracks.visible[k, i]:
                    errors.append(
                        np.linalg.norm(project(np.array(state.location)) - tracks.xy[k, i])
                    )
        assert agree / total >= 0.98
        assert np.median(errors) < 2.0 and np.mean(errors) < 4.0


def test_tracking_scores_against_the_true_runs(rendered_set):
    truth = read_dynamics(rendered_set / "dynamics" / "sim_00000.json")
    tracks = track(read_masks(rendered_set / "masks" / "sim_00000.json"))
    s = tracking_scores(tracks, truth)
    assert s["exact"] == 1.0 and s["found"] == s["objects"] and s["spurious"] == 0
    assert s["visible_agreement"] >= 0.98 and s["centre_error_px"] < 4.0
    fewer = dataclasses.replace(
        tracks,
        objects=tracks.objects[1:],
        xy=tracks.xy[:, 1:],
        visible=tracks.visible[:, 1:],
        seen=tracks.seen[:, 1:],
        area=tracks.area[:, 1:],
    )
    s = tracking_scores(fewer, truth)
    assert s["exact"] == 0.0 and s["found"] == s["objects"] - 1
    assert s["visible_agreement"] < 0.95


def test_tracking_survives_missed_and_misnamed_masks(rendered_set):
    masks = read_masks(rendered_set / "masks" / "sim_00000.json")
    rng = np.random.default_rng(0)
    frames = []
    for f in masks.frames:
        objs = []
        for o in f.objects:
            r = rng.random()
            if r < 0.1:
                continue  # missed
            if r < 0.2:
                o = MaskObject("gray" if o.color != "gray" else "red", o.material, o.shape, o.mask)
            objs.append(o)
        frames.append(MaskFrame(f.frame_filename, f.frame_index, tuple(objs)))
    noisy = track(MaskProposals(masks.video_name, tuple(frames)))
    clean = track(masks)
    assert noisy.objects and set(noisy.objects) == set(clean.objects)
    order = [clean.objects.index(p) for p in noisy.objects]
    assert (noisy.visible == clean.visible[:, order]).mean() > 0.97


def test_tracks_in_the_dynamics_layout_read_back(rendered_set):
    tracks = track(read_masks(rendered_set / "masks" / "sim_00001.json"))
    facts = facts_from_dynamics(tracks_to_dynamics(tracks), collisions="proposed")
    assert facts.objects == tracks.objects
    assert facts.factual.motion is not None
    t = facts.factual.motion.visible.shape[0]
    assert np.array_equal(facts.factual.motion.visible, tracks.visible[:t])


# ------------------------------------------------------------------ training and detection


def _config(root, out, **kw) -> DetectorConfig:
    base = dict(
        data_root=str(root), detector="unet", image_size=(64, 96), width=8, frames_per_video=2,
        val_frames_per_video=2, epochs=1, batch_size=4, output_dir=str(out), accelerator="cpu",
        log_every_n_steps=1,
    )  # fmt: skip
    return DetectorConfig(**{**base, **kw})


def test_a_training_run_scores_resumes_and_detects_in_the_official_layout(
    rendered_set, tmp_path, capsys
):
    run = train_detector(_config(rendered_set, tmp_path))
    assert (run / "config.json").is_file() and (run / "checkpoints" / "last.ckpt").is_file()
    scores = json.loads((run / "detector_eval.json").read_text())
    for key in (
        "bbox_ap",
        "segm_ap",
        "precision",
        "recall",
        "attributes_acc",
        "crop_attributes_acc",
    ):
        assert 0.0 <= scores[key] <= 1.0
    assert scores["frames"] == 2
    train_detector(_config(rendered_set, tmp_path, epochs=2))  # resumes: one more epoch
    rows = (run / "metrics.csv").read_text().strip().splitlines()
    assert [r.split(",")[0] for r in rows[1:]] == ["0", "1"]
    assert "epoch 2/2" in capsys.readouterr().out
    with pytest.raises(UserError, match="holds another run"):
        train_detector(_config(rendered_set, tmp_path, width=16))

    parser = load_parser(run)
    proposals = detect_video(parser, find_video(rendered_set, 2), 2, score_threshold=0.0)
    assert len(proposals.frames) == 128 and proposals.video_name == "sim_00002"
    assert proposals.frames[5].frame_filename == "sim_00002/frame_00005.png"
    again = MaskProposals.from_json(json.loads(json.dumps(proposals.to_json())))
    assert again == proposals
    tracks = observed_scene_reader(run, rendered_set)(2)
    assert tracks.xy.shape == (128, len(tracks.objects), 2)
