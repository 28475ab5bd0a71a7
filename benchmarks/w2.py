"""W2 "imagenet-like": 2,000 photo-like JPEGs, decode -> RandomResizedCrop 224 -> flip -> normalize
-> HWC2CHW -> batch 128.

This module holds the data generator, the manifest reader and the hand-written per-sample chains
(OpenCV and Pillow) shared by the PyTorch runner and the limits.  cv2/PIL/skimage are imported
inside the functions that need them: the MindSpore runner imports this module for the manifest
only, in an interpreter that has neither OpenCV nor scikit-image.
"""
from __future__ import annotations

import hashlib
import io
import json
import math
import os

import numpy as np

from .config import Config, adapter_configs

COUNT = 2000
QUICK_COUNT = 256
BATCH = 128
SIZE = 224
MEAN = np.array([0.485, 0.456, 0.406], np.float32) * 255
STD = np.array([0.229, 0.224, 0.225], np.float32) * 255
PHOTOS = ["astronaut", "chelsea", "coffee", "rocket", "stereo_motorcycle", "hubble_deep_field",
          "retina", "immunohistochemistry"]
GEN_VERSION = 1   # bump when the generator changes; the cache is regenerated


# --------------------------------------------------------------------------- data generation

def skimage_photos() -> list[np.ndarray]:
    """The 8 colour photos from the scikit-image wheel, RGB uint8, in label order."""
    import skimage.data as d
    out = []
    for name in PHOTOS:
        img = getattr(d, name)()
        out.append(img[0] if name == "stereo_motorcycle" else img)   # (left, right, disparity)
    return out


def make_jpeg(src: np.ndarray, i: int) -> tuple[bytes, int, int]:
    """Image i from photo `src` (RGB uint8): returns (JPEG bytes, width, height).

    Every random choice comes from default_rng([2, i]) in a fixed order, so the bytes depend only
    on i, the photo, and the OpenCV / Pillow / libjpeg builds.
    """
    import cv2
    from PIL import Image

    rng = np.random.default_rng([2, i])
    w, h = (500, 375) if rng.random() < 0.75 else (375, 500)
    sh, sw = src.shape[:2]
    # Largest crop of the photo with the target aspect, scaled to area fraction U(0.3, 1).
    cw_max = min(sw, sh * w / h)
    ch_max = cw_max * h / w
    scale = math.sqrt(rng.uniform(0.3, 1.0))
    cw = max(1, min(sw, round(cw_max * scale)))
    ch = max(1, min(sh, round(ch_max * scale)))
    x0 = int(rng.integers(0, sw - cw + 1))
    y0 = int(rng.integers(0, sh - ch + 1))
    crop = src[y0:y0 + ch, x0:x0 + cw]
    interp = cv2.INTER_AREA if cw > w else cv2.INTER_CUBIC
    img = cv2.resize(crop, (w, h), interpolation=interp)
    if rng.random() < 0.5:
        img = img[:, ::-1]
    hue, sat = rng.uniform(-5, 5), rng.uniform(0.7, 1.3)
    contrast, bright = rng.uniform(0.8, 1.2), rng.uniform(0.8, 1.2)
    sigma = rng.uniform(4, 8)
    # Hue/saturation in OpenCV's 8-bit HSV (H in [0, 180)).
    hsv = cv2.cvtColor(np.ascontiguousarray(img), cv2.COLOR_RGB2HSV).astype(np.float32)
    hsv[..., 0] = np.mod(hsv[..., 0] + hue, 180)
    hsv[..., 1] = np.clip(hsv[..., 1] * sat, 0, 255)
    img = cv2.cvtColor(np.rint(hsv).astype(np.uint8), cv2.COLOR_HSV2RGB).astype(np.float32)
    img = (img - img.mean()) * contrast + img.mean()
    img *= bright
    blur = cv2.GaussianBlur(img, (0, 0), 1.5)
    img += 1.5 * (img - blur)                                        # unsharp mask
    img += rng.standard_normal(img.shape, dtype=np.float32) * sigma   # sensor-like noise
    img = np.clip(np.rint(img), 0, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, "JPEG", quality=90, subsampling=2, progressive=False,
                              optimize=False)
    return buf.getvalue(), w, h


def w2_dir(root: str, count: int) -> str:
    return os.path.join(root, "w2" if count == COUNT else f"w2-{count}")


def _params(count: int, skimage: bool) -> dict:
    return {"count": count, "gen_version": GEN_VERSION, "photos": "skimage" if skimage else "custom"}


def is_generated(root: str, count: int, skimage: bool = True) -> bool:
    """True if w2_dir(root, count) holds a complete set made with these parameters."""
    try:
        with open(os.path.join(w2_dir(root, count), "meta.json")) as f:
            return json.load(f).get("params") == _params(count, skimage)
    except (OSError, ValueError):
        return False


_POOL_PHOTOS: list[np.ndarray] = []


def _pool_init(photos: list[np.ndarray]) -> None:
    import cv2
    cv2.setNumThreads(1)
    _POOL_PHOTOS[:] = photos


def _pool_jpeg(i: int) -> tuple[bytes, int, int]:
    return make_jpeg(_POOL_PHOTOS[i % 8], i)


def generate(root: str, count: int = COUNT, photos: list[np.ndarray] | None = None,
             processes: int = 1) -> str:
    """Writes `count` JPEGs + manifest.tsv + all_sha256.txt under w2/ (once); returns the dir.

    `photos` replaces the scikit-image photos (tests use synthetic ones). `processes` > 1 makes
    the JPEGs in that many processes; the files are the same bytes (each depends only on its index).
    """
    d = w2_dir(root, count)
    if is_generated(root, count, photos is None):
        return d
    meta_p = os.path.join(d, "meta.json")
    want = _params(count, photos is None)
    import cv2
    import PIL
    cv2.setNumThreads(1)
    if photos is None:
        photos = skimage_photos()
    os.makedirs(d, exist_ok=True)
    sha = hashlib.sha256()
    rows, total = [], 0
    pool = None
    if processes > 1:
        import multiprocessing
        pool = multiprocessing.get_context("fork").Pool(processes, _pool_init, (photos,))
        made = pool.imap(_pool_jpeg, range(count), chunksize=16)
    else:
        made = (make_jpeg(photos[i % 8], i) for i in range(count))
    for i, (data, w, h) in enumerate(made):
        label = i % 8
        rel = f"jpeg/c{label}/{i:06d}.jpg"
        os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
        with open(os.path.join(d, rel), "wb") as f:
            f.write(data)
        sha.update(data)
        total += len(data)
        rows.append(f"{i}\t{rel}\t{label}\t{len(data)}\t{w}\t{h}\n")
    if pool is not None:
        pool.close()
        pool.join()
    with open(os.path.join(d, "manifest.tsv"), "w") as f:
        f.write("index\trelpath\tlabel\tnbytes\twidth\theight\n")
        f.writelines(rows)
    with open(os.path.join(d, "all_sha256.txt"), "w") as f:
        f.write(sha.hexdigest() + "\n")
    versions = {"numpy": np.__version__, "opencv": cv2.__version__, "pillow": PIL.__version__}
    try:
        import skimage
        versions["scikit-image"] = skimage.__version__
    except ImportError:
        pass
    with open(meta_p, "w") as f:
        json.dump({"params": want, "versions": versions, "sha256": sha.hexdigest(),
                   "total_bytes": total, "mean_kib": total / count / 1024}, f, indent=1)
    return d


def manifest(d: str) -> list[tuple[str, int]]:
    """[(absolute path, label)] in index order."""
    out = []
    with open(os.path.join(d, "manifest.tsv")) as f:
        next(f)
        for line in f:
            _, rel, label, *_ = line.rstrip("\n").split("\t")
            out.append((os.path.join(d, rel), int(label)))
    return out


# --------------------------------------------------------------------------- per-sample chains

def rrc_params(h: int, w: int, rng, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3)):
    """RandomResizedCrop box (y, x, ch, cw): 10 attempts, then the centre-crop fallback."""
    area = h * w
    lo, hi = math.log(ratio[0]), math.log(ratio[1])
    for _ in range(10):
        target = area * rng.uniform(*scale)
        ar = math.exp(rng.uniform(lo, hi))
        cw = int(round(math.sqrt(target * ar)))
        ch = int(round(math.sqrt(target / ar)))
        if 0 < cw <= w and 0 < ch <= h:
            return rng.randint(0, h - ch), rng.randint(0, w - cw), ch, cw
    in_ratio = w / h
    if in_ratio < ratio[0]:
        cw, ch = w, int(round(w / ratio[0]))
    elif in_ratio > ratio[1]:
        ch, cw = h, int(round(h * ratio[1]))
    else:
        cw, ch = w, h
    return (h - ch) // 2, (w - cw) // 2, ch, cw


def normalize_chw(img: np.ndarray) -> np.ndarray:
    """uint8 HWC -> float32 CHW, (x - mean) / std."""
    out = np.empty((3, *img.shape[:2]), np.float32)
    np.subtract(img.transpose(2, 0, 1), MEAN[:, None, None], out=out)
    out *= (1 / STD)[:, None, None]
    return out


def chain_cv2(buf: bytes, rng) -> np.ndarray:
    """The W2 chain hand-written with OpenCV; `rng` is a random.Random."""
    import cv2
    img = cv2.imdecode(np.frombuffer(buf, np.uint8), cv2.IMREAD_COLOR_RGB)
    y, x, ch, cw = rrc_params(img.shape[0], img.shape[1], rng)
    img = cv2.resize(img[y:y + ch, x:x + cw], (SIZE, SIZE), interpolation=cv2.INTER_LINEAR)
    if rng.random() < 0.5:
        img = cv2.flip(img, 1)
    return normalize_chw(img)


def chain_pil(buf: bytes, rng) -> np.ndarray:
    """The same chain with Pillow (antialiased bilinear resize, torchvision-classic)."""
    from PIL import Image
    img = Image.open(io.BytesIO(buf)).convert("RGB")
    w, h = img.size
    y, x, ch, cw = rrc_params(h, w, rng)
    img = img.resize((SIZE, SIZE), Image.BILINEAR, box=(x, y, x + cw, y + ch))
    if rng.random() < 0.5:
        img = img.transpose(Image.FLIP_LEFT_RIGHT)
    return normalize_chw(np.asarray(img))


def check_batch(images, labels) -> None:
    images, labels = np.asarray(images), np.asarray(labels)
    assert images.shape[1:] == (3, SIZE, SIZE) and images.dtype == np.float32, \
        (images.shape, images.dtype)
    assert labels.shape[0] == images.shape[0], (labels.shape, images.shape)
    assert -3 < float(images.mean()) < 3, float(images.mean())   # normalized, not raw pixels


_HR_MS_VARIANTS = [("MindDataset", "main: MindDataset + Decode/RandomResizedCrop/..."),
                   ("ImageFolderDataset", "files"),
                   ("RandomCropDecodeResize", "MindDataset + fused decode-crop-resize")]
CONFIGS = [
    *[Config("w2", s, v, compare=v, note=n) for s in ("headrace", "mindspore")
      for v, n in _HR_MS_VARIANTS],
    *[Config("w2", s, "MindDataset low-memory", (1,), compare="MindDataset low-memory",
             note="set_prefetch_size(2), 1 worker, shuffle buffer of one batch (MindSpore FAQ)")
      for s in ("headrace", "mindspore")],
    *adapter_configs("w2", "MindDataset"),
    Config("w2", "torch", "OpenCV", compare="MindDataset", note="files, hand-written cv2 chain"),
    Config("w2", "torch", "Pillow", compare="MindDataset", note="files, PIL decode + resize"),
    Config("w2", "grain", "threads", compare="MindDataset",
           note="files, the torch runner's cv2 chain in ReadOptions(num_threads=w)"),
    Config("w2", "grain", "mp_prefetch", compare="MindDataset",
           note="files, cv2 chain batched in w worker processes"),
    *[Config("w2", "grain", f"{v} + device_put", (2,), compare="MindDataset + headrace.jax",
             note=f"{v}, then grain.experimental.device_put onto the CPU device (issue 15: the JAX peer)")
      for v in ("threads", "mp_prefetch")],
    Config("w2", "dali", "decode + random_resized_crop", compare="MindDataset",
           note="CPU pipeline (device_id=None), num_threads=w"),
    Config("w2", "dali", "image_random_crop", compare="RandomCropDecodeResize",
           note="CPU pipeline, fused decode of the crop window, num_threads=w"),
    Config("w2", "tf", "TFRecord", compare="MindDataset"),
    Config("w2", "tf", "decode_and_crop_jpeg", compare="RandomCropDecodeResize", note="fused"),
]


FUSED_LIMIT = "headrace RandomCropDecodeResize 224"  # the limits row: one core's fused decode
OTHER_PEERS = ("grain", "dali", "mindspore", "tf")     # issue 42's "best other peer" (besides PyTorch)


def goal_ratios(results: list[dict]) -> str:
    """Issue 42's W2 figures from one run: headrace's main row (MindDataset) at each worker count
    over PyTorch + OpenCV, over the fastest row of the other peers (their device_put rows feed JAX,
    another job, and are left out), and over that many cores of the fused decode limit row; ""
    unless the run has headrace's main row and at least one of the others."""
    def rows(system: str, workload: str = "w2") -> list[dict]:
        return [r for r in results if r["workload"] == workload and r["system"] == system and r.get("summary")]

    main = {r["workers"]: r["summary"]["median"] for r in rows("headrace") if r["variant"] == "MindDataset"}
    torch = {r["workers"]: r["summary"]["median"] for r in rows("torch") if r["variant"] == "OpenCV"}
    limit = [r["summary"]["median"] for r in rows("python", "limits") if r["variant"] == FUSED_LIMIT]
    lines = []
    for w in sorted(main):
        others = [r for s in OTHER_PEERS for r in rows(s) if r["workers"] == w and "device_put" not in r["variant"]]
        best = max(others, key=lambda r: r["summary"]["median"], default=None)
        if w not in torch and best is None and not limit:
            continue
        cells = [f"{main[w]:,.0f}",
                 f"{main[w] / torch[w]:.2f}" if w in torch else "–",
                 (f"{main[w] / best['summary']['median']:.2f} ({best['system']} {best['variant']}, "
                  f"{best['summary']['median']:,.0f})") if best is not None else "–",
                 f"{main[w] / (w * limit[0]):.3f}" if limit else "–"]
        lines.append(f"| {w} | " + " | ".join(cells) + " |")
    if not lines:
        return ""
    head = ("Issue 42's W2 ratios from this run: headrace's main row (MindDataset) over PyTorch + OpenCV, over "
            "the fastest other peer's row (Grain, DALI CPU, MindSpore, tf.data; not the device_put rows) and over "
            f"workers x the one-core fused decode limit ('{FUSED_LIMIT}'"
            + (f", {limit[0]:,.0f} images/s" if limit else ", not in this run") + ").\n\n"
            "| workers | headrace images/s | / PyTorch + OpenCV | / best other peer | / (workers x fused decode limit) |\n"
            "|---|---|---|---|---|")
    return head + "\n" + "\n".join(lines) + "\n"
