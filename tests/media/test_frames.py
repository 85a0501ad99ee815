"""The one channel rule (``hub.media.to_frame``): layouts, values, channels and batches."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from hub.errors import HubError
from hub.media import frames_of, image_observation_key, looks_like_image, to_frame, to_uint8
from hub.specs import Composite, Unbounded


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        ((32, 24), (32, 24, 3)),  # grayscale
        ((32, 24, 1), (32, 24, 3)),  # HWC grayscale
        ((32, 24, 3), (32, 24, 3)),  # HWC
        ((32, 24, 4), (32, 24, 3)),  # HWC with alpha
        ((3, 32, 24), (32, 24, 3)),  # CHW
        ((1, 32, 24), (32, 24, 3)),  # CHW grayscale
        ((4, 84, 84), (84, 84, 3)),  # a stack of 4 grayscale frames (EnvPool's Atari)
        ((2, 84, 84), (84, 84, 3)),  # a stack of 2 grayscale frames
        ((2, 32, 24, 3), (32, 24, 3)),  # a stack of HWC frames
        ((2, 3, 32, 24), (32, 24, 3)),  # a stack of CHW frames
        ((4, 32, 24, 1), (32, 24, 3)),  # a stack of HWC grayscale frames
    ],
)
def test_layouts(shape, expected):
    frame = to_frame(np.zeros(shape, dtype=np.uint8))
    assert frame.shape == expected and frame.dtype == np.uint8
    assert frame.flags.c_contiguous


def test_chw_and_hwc_give_the_same_frame():
    rng = np.random.default_rng(0)
    hwc = rng.integers(0, 256, (8, 10, 3), dtype=np.uint8)
    assert (to_frame(np.moveaxis(hwc, -1, 0)) == hwc).all()
    assert (to_frame(torch.from_numpy(hwc).permute(2, 0, 1)) == hwc).all()
    assert (to_frame(hwc) == hwc).all()


def test_a_stack_gives_its_newest_frame():
    gray = np.stack([np.full((16, 16), v, dtype=np.uint8) for v in (10, 20, 30, 40)])
    assert (to_frame(gray) == 40).all()
    colour = np.stack([np.full((16, 16, 3), v, dtype=np.uint8) for v in (10, 20)])
    assert (to_frame(colour) == 20).all()
    chw = np.stack([np.full((3, 16, 16), v, dtype=np.uint8) for v in (10, 20)])
    assert (to_frame(chw) == 20).all()


def test_grayscale_is_repeated_into_rgb_and_alpha_is_dropped():
    gray = np.arange(64, dtype=np.uint8).reshape(8, 8)
    assert (to_frame(gray) == gray[..., None]).all()
    rgba = np.zeros((8, 8, 4), np.uint8)
    rgba[..., 0], rgba[..., 3] = 200, 17
    frame = to_frame(rgba)
    assert (frame[..., 0] == 200).all() and (frame[..., 1:] == 0).all()


def test_values():
    unit = np.array([[0.0, 0.5], [1.0, 0.25]], dtype=np.float32)
    assert to_frame(unit)[..., 0].tolist() == [[0, 127], [255, 63]]  # floats in [0, 1]
    wide = np.array([[0.0, 2.0], [300.0, -5.0]], dtype=np.float32)
    assert to_frame(wide)[..., 0].tolist() == [[0, 2], [255, 0]]  # [0, 255], clipped
    mask = np.array([[True, False], [False, True]])
    assert to_frame(mask)[..., 0].tolist() == [[255, 0], [0, 255]]
    with_nan = np.array([[np.nan, 0.5], [1.0, 0.0]], dtype=np.float64)
    assert to_frame(with_nan)[..., 0].tolist() == [[0, 127], [255, 0]]  # NaN: 0, still [0, 1]
    ints = np.array([[-1, 100], [256, 7]], dtype=np.int64)
    assert to_frame(ints)[..., 0].tolist() == [[0, 100], [255, 7]]


def test_tensors_of_any_dtype():
    half = torch.full((3, 4, 4), 0.5, dtype=torch.bfloat16)  # numpy has no bfloat16
    assert (to_frame(half) == 127).all()
    assert (to_frame(torch.ones(4, 4, dtype=torch.bool)) == 255).all()
    assert (to_frame(torch.full((4, 4, 3), 9, dtype=torch.uint8)) == 9).all()


def test_to_uint8_keeps_uint8_without_a_copy():
    image = np.zeros((2, 2), np.uint8)
    assert to_uint8(image) is image


def test_a_bad_rank_is_a_clear_error():
    with pytest.raises(HubError, match=r"cannot make a frame of an image of shape \(5,\)"):
        to_frame(np.zeros(5, dtype=np.uint8))
    with pytest.raises(HubError, match="stack of"):
        to_frame(np.zeros((2, 2, 2, 2, 2), dtype=np.uint8))


def test_frames_of_a_batch():
    images = np.zeros((2, 3, 8, 8), dtype=np.uint8)  # a [2, 3] batch of grayscale images
    images[1, 2] = 50
    frames = frames_of(images, 2)
    assert len(frames) == 6 and all(f.shape == (8, 8, 3) for f in frames)
    assert (frames[5] == 50).all() and (frames_of(images, 2, env_ids=[5])[0] == 50).all()
    assert frames_of(np.zeros((8, 8, 3), np.uint8), 0)[0].shape == (8, 8, 3)


def test_what_looks_like_an_image():
    assert looks_like_image((84, 84)) and looks_like_image((4, 84, 84))
    assert looks_like_image((84, 84, 3)) and looks_like_image((4, 84, 84, 3))
    assert not looks_like_image((128,)) and not looks_like_image((2, 2))
    assert not looks_like_image((1, 2, 3, 4, 5))


def test_image_observation_key():
    pixels = Composite(observation=Unbounded((4, 84, 84), dtype=torch.uint8))
    pixels["pixels"] = Unbounded((64, 64, 3), dtype=torch.uint8)
    assert image_observation_key(pixels, 0) == "pixels"
    batch = Composite(
        ram=Unbounded((8, 128), dtype=torch.uint8),
        observation=Unbounded((8, 4, 84, 84), dtype=torch.uint8),
        shape=(8,),
    )
    assert image_observation_key(batch, 1) == "observation"
    assert image_observation_key(Composite(obs=Unbounded((84, 84))), 0) is None  # float
    assert image_observation_key(Composite(tiny=Unbounded((2, 2), dtype=torch.uint8)), 0) is None
    assert image_observation_key(None, 0) is None
