#!/usr/bin/python3
"""Cairn's random streams in numpy, for the reference scripts to reproduce them exactly.

- philox4x32_10: Philox4x32-10 (Salmon et al., SC'11), vectorised over counters.
- dropout_keep_mask: the keep mask of a Cairn dropout op (runtime/kernels/Dropout.h):
    key = {uint32(seed), uint32(seed >> 32) ^ uint32(stream)},
    counter = {uint32(i / 4), uint32((i / 4) >> 32), uint32(step), uint32(step >> 32)},
    u = (output[i % 4] >> 8) * 2^-24, keep = u >= p.
- epoch_permutation: the training-data order of `EXE train` (splitmix64 Fisher-Yates with
  state = seed + 0x9E3779B97F4A7C15 * (epoch + 1)).

  /usr/bin/python3 test/reference/philox.py --self-test
checks the published Philox known answers and properties of the mask and the shuffle.
"""
import argparse
import sys

import numpy as np

M32 = 0xFFFFFFFF
M64 = 0xFFFFFFFFFFFFFFFF
PHILOX_M0, PHILOX_M1 = 0xD2511F53, 0xCD9E8D57
PHILOX_W0, PHILOX_W1 = 0x9E3779B9, 0xBB67AE85
GOLDEN64 = 0x9E3779B97F4A7C15


def philox4x32_10(counter, key):
    """Ten Philox rounds. counter: 4 arrays (or ints) of uint32 words; key: 2 ints.
    Returns 4 uint64 arrays holding the 32-bit output words."""
    c = [np.asarray(w, dtype=np.uint64) & np.uint64(M32) for w in counter]
    k0, k1 = np.uint64(key[0] & M32), np.uint64(key[1] & M32)
    m0, m1, mask = np.uint64(PHILOX_M0), np.uint64(PHILOX_M1), np.uint64(M32)
    shift = np.uint64(32)
    for r in range(10):
        p0 = m0 * c[0]  # 32 x 32 -> 64 bits: exact in uint64
        p1 = m1 * c[2]
        c = [(p1 >> shift) ^ c[1] ^ k0, p1 & mask, (p0 >> shift) ^ c[3] ^ k1, p0 & mask]
        if r < 9:
            k0 = np.uint64((int(k0) + PHILOX_W0) & M32)
            k1 = np.uint64((int(k1) + PHILOX_W1) & M32)
    return c


def dropout_keep_mask(n, p, seed, step, stream):
    """Boolean keep mask of n elements (flat, row-major) for one Cairn dropout op."""
    blocks = np.arange((n + 3) // 4, dtype=np.uint64)
    key = (seed & M32, ((seed >> 32) & M32) ^ (stream & M32))
    counter = (blocks & np.uint64(M32), blocks >> np.uint64(32), step & M32, (step >> 32) & M32)
    words = np.stack(philox4x32_10(counter, key), axis=1).reshape(-1)[:n]
    u = (words >> np.uint64(8)).astype(np.float64) * 2.0 ** -24
    return u >= p


def dropout_scale(p):
    """The multiplier of kept elements: float32(1 / (1 - p))."""
    return np.float32(1.0 / (1.0 - p))


class SplitMix64:
    """splitmix64 with Python integers (mod 2^64)."""

    def __init__(self, state):
        self.state = state & M64

    def next(self):
        self.state = (self.state + GOLDEN64) & M64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)


def epoch_permutation(n, seed, epoch):
    """The order in which `EXE train --seed SEED` visits n examples in 0-based `epoch`."""
    rng = SplitMix64(seed + GOLDEN64 * (epoch + 1))
    p = list(range(n))
    for i in range(n - 1, 0, -1):
        j = rng.next() % (i + 1)
        p[i], p[j] = p[j], p[i]
    return np.array(p, dtype=np.int64)


def self_test():
    """Returns a list of failures (empty when everything holds)."""
    failures = []
    known = [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
             ((M32,) * 4, (M32, M32), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
             # Random123's third known answer (counter pi digits, key e digits)
             ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
              (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]
    for counter, key, want in known:
        got = tuple(int(w) for w in philox4x32_10(counter, key))
        if got != want:
            failures.append(f"philox({counter}, {key}) = {[hex(w) for w in got]}, "
                            f"want {[hex(w) for w in want]}")
    # The vectorised mask agrees with the scalar definition element by element.
    seed, step, stream, p, n = 0x123456789ABCDEF0, 3, 5, 0.3, 4099
    mask = dropout_keep_mask(n, p, seed, step, stream)
    for i in (0, 1, 2, 3, 4, 7, 1000, n - 1):
        words = philox4x32_10((i // 4, 0, step, 0), (seed & M32, (seed >> 32) ^ stream))
        u = (int(words[i % 4]) >> 8) * 2.0 ** -24
        if mask[i] != (u >= p):
            failures.append(f"mask element {i} disagrees with the scalar Philox")
    rate = dropout_keep_mask(1 << 20, 0.25, 7, 0, 1).mean()
    if abs(rate - 0.75) > 0.003:
        failures.append(f"keep rate at p=0.25 is {rate:.4f}")
    if np.array_equal(dropout_keep_mask(4096, 0.5, 7, 0, 0), dropout_keep_mask(4096, 0.5, 7, 0, 1)):
        failures.append("streams 0 and 1 give the same mask")
    perm = epoch_permutation(1000, 0, 0)
    if sorted(perm.tolist()) != list(range(1000)):
        failures.append("epoch_permutation is not a permutation")
    if np.array_equal(perm, epoch_permutation(1000, 0, 1)):
        failures.append("epochs 0 and 1 have the same order")
    if SplitMix64(0).next() != 0xE220A8397B1DCDAF:  # splitmix64's first output from state 0
        failures.append("splitmix64(0) first output is wrong")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--self-test", action="store_true", help="check the known answers")
    args = ap.parse_args()
    if not args.self_test:
        ap.print_help()
        return 0
    failures = self_test()
    for f in failures:
        print("FAIL:", f)
    print("philox self-test:", "FAIL" if failures else "OK")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
