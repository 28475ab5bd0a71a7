"""Every image an AutoAugment policy can make of one input, for tests that check that an output
lies among them (each of a sub-policy's two steps applied or not, either sign of a signed magnitude)."""
from __future__ import annotations

from headrace._image import augment as A


def auto_augment_space(img, policy, interpolation, fill):
    """The images ``AutoAugment(policy)`` may give for ``img`` (a list, ``img`` itself first)."""
    h, w = img.shape[:2]

    def steps(name, idx):
        m = A._auto_augment_magnitude(name, idx, h, w) if idx is not None else 0.0
        return [(name, s * m) for s in ((1, -1) if name in A._SIGNED else (1,))]

    space = [img]
    for (o1, _, m1), (o2, _, m2) in A.AUTO_AUGMENT_POLICIES[policy]:
        for a in steps(o1, m1):
            y = A.apply_augment(img, *a, interpolation, fill)
            space.append(y)
            for b in steps(o2, m2):
                space.append(A.apply_augment(img, *b, interpolation, fill))
                space.append(A.apply_augment(y, *b, interpolation, fill))
    return space
