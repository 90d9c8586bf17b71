"""`tvr vlm prompt` and the CLI's messages for user mistakes."""

import json

from tests.visualtrans.make_data import make_visualtrans
from tests.vlm.make_trance import make_trance
from tvr.cli import main


def test_prompt_shows_the_filled_visualtrans_template(tmp_path, capsys):
    data, images, items = make_visualtrans(tmp_path)
    assert main(["vlm", "prompt", "--task", "visualtrans", "--data", str(data),
                 "--images", str(images), "--item", "4"]) == 0  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    text, last = "\n".join(out[:-1]), json.loads(out[-1])
    assert items[4]["question"] in text and "<answer>...</answer>" in text and "$" not in text
    assert len(last["images"]) == 6 and last["images"][2].endswith("_medium1.jpg")


def test_prompt_with_a_user_template(tmp_path, capsys):
    data, images, _ = make_trance(tmp_path, n=1)
    mine = tmp_path / "mine.txt"
    mine.write_text(
        "Steps ($max_steps at most) for:\n$objects_table\nCost: $$0\n", encoding="utf-8"
    )
    assert main(["vlm", "prompt", "--task", "trance", "--data", str(data), "--images",
                 str(images), "--prompt", str(mine), "--setting", "basic"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert out.startswith("Steps (1 at most) for:\nobj | shape |") and "Cost: $0" in out


def test_user_mistakes_are_messages(tmp_path, capsys, monkeypatch):
    for name in ("TVR_VLM_BASE_URL", "OPENAI_BASE_URL", "TVR_VLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    data, images, _ = make_visualtrans(tmp_path)
    base = ["vlm", "run", "--task", "visualtrans", "--data", str(data), "--images", str(images),
            "--out", str(tmp_path / "r.jsonl")]  # fmt: skip
    assert main(base) == 2
    assert "no endpoint" in capsys.readouterr().err
    assert main([*base, "--base-url", "http://127.0.0.1:9/v1", "--prompt", "nope.txt",
                 "--model", "m"]) == 2  # fmt: skip
    assert "no such prompt template" in capsys.readouterr().err
    assert main(["vlm", "export", "--task", "visualtrans", "--data", str(data), "--images",
                 str(images), "--results", "r.jsonl", "--out", "p.jsonl"]) == 2  # fmt: skip
    assert "tvr visualtrans evaluate" in capsys.readouterr().err
    assert main(["visualtrans", "evaluate", "--data", str(data), "--predictions",
                 str(tmp_path / "absent.jsonl"), "--out", str(tmp_path / "s")]) == 2  # fmt: skip
    assert "no such file" in capsys.readouterr().err
