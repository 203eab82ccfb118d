"""Colour-vision-deficiency simulation and colour difference, in numpy (no other dependency).

* :func:`simulate`: Machado, Oliveira & Fernandes (2009), "A physiologically-based model for
  simulation of color vision deficiency", IEEE TVCG 15(6): their matrices at severity 1.0
  (protanopia, deuteranopia; tritanopia too), applied to linear RGB.
* :func:`lab`: sRGB -> CIELAB (D65); :func:`ciede2000`: the CIEDE2000 colour difference, as written
  out by Sharma, Wu & Dalal (2005), "The CIEDE2000 color-difference formula: implementation notes".
"""

from __future__ import annotations

import numpy as np
from matplotlib.colors import to_rgb

MACHADO = {
    "normal": np.eye(3),
    "protanopia": np.array([[0.152286, 1.052583, -0.204868],
                            [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968],
                              [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
    "tritanopia": np.array([[1.255528, -0.076749, -0.178779],
                            [-0.078411, 0.930809, 0.147602],
                            [0.004733, 0.691367, 0.303900]]),
}


def to_linear(rgb):
    rgb = np.asarray(rgb, float)
    return np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)


def to_srgb(lin):
    lin = np.clip(np.asarray(lin, float), 0, 1)
    return np.where(lin <= 0.0031308, 12.92 * lin, 1.055 * lin ** (1 / 2.4) - 0.055)


def simulate(colors, kind: str) -> np.ndarray:
    """sRGB colours (names, hex or rows of floats in [0, 1]) as a reader with ``kind`` sees them."""
    rgb = np.array([to_rgb(c) if isinstance(c, str) else c[:3] for c in colors], float)
    return to_srgb(to_linear(rgb) @ MACHADO[kind].T)


def lab(rgb) -> np.ndarray:
    """sRGB rows in [0, 1] -> CIELAB (D65 white)."""
    m = np.array([[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750],
                  [0.0193339, 0.1191920, 0.9503041]])
    xyz = to_linear(rgb) @ m.T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])], axis=1)


def ciede2000(lab1, lab2) -> np.ndarray:
    """CIEDE2000 colour difference between rows of two CIELAB arrays (kL = kC = kH = 1)."""
    L1, a1, b1 = np.asarray(lab1, float).T
    L2, a2, b2 = np.asarray(lab2, float).T
    C1, C2 = np.hypot(a1, b1), np.hypot(a2, b2)
    Cm = (C1 + C2) / 2
    G = 0.5 * (1 - np.sqrt(Cm ** 7 / (Cm ** 7 + 25.0 ** 7)))
    a1p, a2p = (1 + G) * a1, (1 + G) * a2
    C1p, C2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    h1p = np.degrees(np.arctan2(b1, a1p)) % 360
    h2p = np.degrees(np.arctan2(b2, a2p)) % 360
    dLp, dCp = L2 - L1, C2p - C1p
    dh = h2p - h1p
    dh = np.where(C1p * C2p == 0, 0, np.where(dh > 180, dh - 360, np.where(dh < -180, dh + 360, dh)))
    dHp = 2 * np.sqrt(C1p * C2p) * np.sin(np.radians(dh / 2))
    Lpm, Cpm = (L1 + L2) / 2, (C1p + C2p) / 2
    hsum = h1p + h2p
    hpm = np.where(C1p * C2p == 0, hsum,
                   np.where(np.abs(h1p - h2p) <= 180, hsum / 2,
                            np.where(hsum < 360, (hsum + 360) / 2, (hsum - 360) / 2)))
    T = (1 - 0.17 * np.cos(np.radians(hpm - 30)) + 0.24 * np.cos(np.radians(2 * hpm))
         + 0.32 * np.cos(np.radians(3 * hpm + 6)) - 0.20 * np.cos(np.radians(4 * hpm - 63)))
    dtheta = 30 * np.exp(-(((hpm - 275) / 25) ** 2))
    Rc = 2 * np.sqrt(Cpm ** 7 / (Cpm ** 7 + 25.0 ** 7))
    Sl = 1 + 0.015 * (Lpm - 50) ** 2 / np.sqrt(20 + (Lpm - 50) ** 2)
    Sc, Sh = 1 + 0.045 * Cpm, 1 + 0.015 * Cpm * T
    Rt = -np.sin(np.radians(2 * dtheta)) * Rc
    return np.sqrt((dLp / Sl) ** 2 + (dCp / Sc) ** 2 + (dHp / Sh) ** 2 + Rt * (dCp / Sc) * (dHp / Sh))


def min_difference(colors, kind: str) -> tuple[float, tuple[int, int]]:
    """The smallest CIEDE2000 difference between any two of ``colors`` as ``kind`` sees them."""
    L = lab(simulate(colors, kind))
    best = (np.inf, (0, 0))
    for i in range(len(L)):
        for j in range(i + 1, len(L)):
            d = float(ciede2000(L[i:i + 1], L[j:j + 1])[0])
            best = min(best, (d, (i, j)))
    return best
