"""Write data/example.parquet: two audio-tagging models scored on the same clips.

2,000 clips x 40 tags x 2 models = 160,000 rows of (model, sample, label, score, truth, weight).
Scores are rounded to two decimals, so ties are common, as with calibrated or quantised models.
About 1 in 20 clips is emptied of tags on top of those drawn with none: 9.65% have no tag.
The clip weights are drawn for each model, so they differ between the models for 989 clips.
Deterministic: run it again and the file is identical.
"""

from pathlib import Path

import numpy as np
import polars as pl

N_CLIPS, N_TAGS, SEED = 2_000, 40, 20191
TAGS = [f"tag_{i:02d}" for i in range(N_TAGS)]


def make() -> pl.DataFrame:
    rng = np.random.default_rng(SEED)
    popularity = rng.dirichlet(np.full(N_TAGS, 0.6)) * 2.5
    truth = rng.random((N_CLIPS, N_TAGS)) < np.clip(popularity, 0.002, 0.5)
    truth[rng.random(N_CLIPS) < 0.05] = False
    frames = []
    for model, skill in (("baseline", 1.0), ("candidate", 2.0)):
        logits = rng.normal(size=truth.shape) + skill * truth
        score = np.round(1 / (1 + np.exp(-logits)), 2)
        frames.append(
            pl.DataFrame(
                {
                    "model": model,
                    "sample": np.repeat([f"clip_{i:05d}" for i in range(N_CLIPS)], N_TAGS),
                    "label": np.tile(TAGS, N_CLIPS),
                    "score": score.reshape(-1),
                    "truth": truth.reshape(-1),
                    "weight": np.repeat(rng.choice([1.0, 2.0], N_CLIPS), N_TAGS),
                }
            )
        )
    return pl.concat(frames).sample(fraction=1.0, shuffle=True, seed=SEED)


if __name__ == "__main__":
    out = Path(__file__).with_name("example.parquet")
    make().write_parquet(out, statistics=False)
    print(f"wrote {out}")
