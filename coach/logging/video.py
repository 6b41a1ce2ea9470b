"""Evaluation episodes as videos: GIF and mp4 files in ``videos/``, GIFs in TensorBoard."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image
from tensorboard.compat.proto.summary_pb2 import Summary

from coach.errors import CoachError


def encode_gif(frames: list[np.ndarray], fps: int) -> bytes:
    """An animated GIF of ``frames`` (H x W x 3 uint8 arrays), looping."""
    images = [Image.fromarray(np.asarray(f, dtype=np.uint8)) for f in frames]
    buffer = io.BytesIO()
    images[0].save(
        buffer,
        format="GIF",
        save_all=True,
        append_images=images[1:],
        duration=max(1, round(1000 / fps)),
        loop=0,
    )
    return buffer.getvalue()


class EvaluationVideo:
    """Records the first evaluation episode of the first environment copy.

    Args:
        directory: Where the files go (``videos/`` of the experiment).
        mp4: Write ``eval_<env steps>.mp4`` (needs imageio with its ffmpeg).
        gif: Write ``eval_<env steps>.gif``.
        fps: Frames per second of the files.
    """

    def __init__(self, directory: Path, mp4: bool, gif: bool, fps: int = 30) -> None:
        self.directory = directory
        self.mp4 = mp4
        self.gif = gif
        self.fps = fps
        self.frames: list[np.ndarray] = []
        self.recording = False

    def start(self, environment: Any) -> None:
        """A new evaluation: record from its first frame."""
        self.frames = []
        self.recording = True

    def capture(self, environment: Any, done: bool) -> None:
        """After a step: keep the first copy's frame, until its episode ends."""
        if not self.recording:
            return
        if done:  # the copy already shows the next episode's first frame
            self.recording = False
            return
        frame = environment.render()
        if frame is None:
            raise CoachError("the environment renders no frames: set render_mode='rgb_array'")
        self.frames.append(np.asarray(frame))

    def finish(self, env_steps: int) -> tuple[list[Path], Summary | None]:
        """Write the files; return them and a TensorBoard summary of the GIF."""
        self.recording = False
        if not self.frames:
            return [], None
        self.directory.mkdir(parents=True, exist_ok=True)
        written = []
        gif = encode_gif(self.frames, self.fps)
        if self.gif:
            path = self.directory / f"eval_{env_steps}.gif"
            path.write_bytes(gif)
            written.append(path)
        if self.mp4:
            import imageio.v2 as imageio

            path = self.directory / f"eval_{env_steps}.mp4"
            frames: list[Any] = list(self.frames)
            imageio.mimwrite(path, frames, fps=self.fps, macro_block_size=1)
            written.append(path)
        height, width = self.frames[0].shape[:2]
        image = Summary.Image(height=height, width=width, colorspace=3, encoded_image_string=gif)
        return written, Summary(value=[Summary.Value(tag="Evaluation/episode", image=image)])
