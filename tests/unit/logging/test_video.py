"""Evaluation videos: GIFs that decode to the frames recorded."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from coach.logging.video import EvaluationVideo, encode_gif


class Frames:
    """Renders a frame whose colour is the number of frames rendered so far."""

    def __init__(self) -> None:
        self.count = 0

    def render(self) -> np.ndarray:
        self.count += 1
        return np.full((8, 6, 3), self.count * 20, dtype=np.uint8)


def test_gif_decodes_to_the_frames(tmp_path: Path) -> None:
    frames = [np.full((4, 5, 3), v, dtype=np.uint8) for v in (0, 120, 240)]
    path = tmp_path / "a.gif"
    path.write_bytes(encode_gif(frames, fps=10))
    with Image.open(path) as image:
        assert image.n_frames == 3 and image.size == (5, 4)
        image.seek(2)
        assert np.asarray(image.convert("RGB"))[0, 0, 0] == 240


def test_records_the_first_episode_of_the_first_copy(tmp_path: Path) -> None:
    video = EvaluationVideo(tmp_path, mp4=False, gif=True)
    environment = Frames()
    video.start(environment)
    for done in (False, False, True, False):
        video.capture(environment, done)
    paths, summary = video.finish(env_steps=123)
    assert [p.name for p in paths] == ["eval_123.gif"]
    assert len(video.frames) == 2  # the frame after the episode's end is the next episode's
    assert summary is not None and summary.value[0].tag == "Evaluation/episode"
    assert summary.value[0].image.height == 8 and summary.value[0].image.width == 6
