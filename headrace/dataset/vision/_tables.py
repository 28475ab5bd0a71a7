"""MindSpore's ``Inter`` / ``Border`` enums mapped to OpenCV and Pillow codes (the kernels in
``headrace._image`` take the codes, never the enums)."""
from __future__ import annotations

import cv2
from PIL import Image

from headrace.dataset.vision.utils import Border, Inter

CV_INTER = {Inter.NEAREST: cv2.INTER_NEAREST, Inter.BILINEAR: cv2.INTER_LINEAR,
            Inter.BICUBIC: cv2.INTER_CUBIC, Inter.AREA: cv2.INTER_AREA}
PIL_INTER = {Inter.NEAREST: Image.NEAREST, Inter.BILINEAR: Image.BILINEAR,
             Inter.BICUBIC: Image.BICUBIC, Inter.ANTIALIAS: Image.LANCZOS}
CV_BORDER = {Border.CONSTANT: cv2.BORDER_CONSTANT, Border.EDGE: cv2.BORDER_REPLICATE,
             Border.REFLECT: cv2.BORDER_REFLECT_101, Border.SYMMETRIC: cv2.BORDER_REFLECT}
PIL_PAD_MODE = {Border.CONSTANT: "constant", Border.EDGE: "edge", Border.REFLECT: "reflect",
                Border.SYMMETRIC: "symmetric"}
