"""scripts/train_compare.py (issue 23's training comparison) without a GPU:
a few steps of each task on the CPU with torch's SDPA, and its plot."""

import importlib.util
import json
import math
from pathlib import Path

import pytest
import torch.nn.functional as F

_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "train_compare.py"
_spec = importlib.util.spec_from_file_location("train_compare", _SCRIPT)
train_compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(train_compare)


@pytest.mark.parametrize("heads", [4, 8], ids=["d128", "d64"])
@pytest.mark.parametrize("causal", [False, True], ids=["denoising", "next-token"])
def test_a_few_steps_train_on_the_cpu(causal, heads):
    losses = train_compare.train(F.scaled_dot_product_attention, 3, causal, heads, device="cpu")
    assert len(losses) == 3 and all(math.isfinite(x) for x in losses)
    # Untrained, the loss is about log(256) = 5.5 (uniform over the bytes).
    assert 4.0 < losses[0] < 7.0


def test_both_runs_see_the_same_batches():
    first = list(train_compare.batches(2, False, "cpu"))
    again = list(train_compare.batches(2, False, "cpu"))
    assert all((a == b).all() for x, y in zip(first, again) for a, b in zip(x, y))


def test_plot_draws_the_curves(tmp_path):
    pytest.importorskip("matplotlib")
    result = {
        "causal": False,
        "curves": {"tiledattn": [5.5, 3.0, 2.0], "torch SDPA": [5.5, 3.1, 2.0]},
        "final_loss": {"tiledattn": 2.0, "torch SDPA": 2.0},
    }
    path = tmp_path / "curves.json"
    path.write_text(json.dumps(result))
    train_compare.plot(path)
    assert (tmp_path / "curves.png").stat().st_size > 0
