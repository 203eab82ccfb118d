"""How long the similarity report's normalising takes on cells far larger than a solution (issue 21).

tests/grading/test_similarity_limits.py counts the work (lines of course_grader.similarity run); this
prints the seconds, best of three CPU times each:

- a 104 KB cell (a solution is a few KB; one took 12 s when each token looked for the next one through
  a copy of the rest of the cell), and the ratio of a 4x cell to a 1x cell (linear: about 4);
- a 20 MiB cell, which is cut at MAX_CHARS characters before it is parsed.

    .venv/bin/python benchmarks/similarity_limits.py
"""

from __future__ import annotations

import time

from course_grader import similarity


def seconds(source: str) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        similarity.normalize(source)
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    line = "y = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), dim=-1)  # a comment\n"
    print(f"a 104 KB cell: {seconds(line * 1300):.3f} s")
    small, large = seconds(line * 150), seconds(line * 600)
    print(f"4x the cell: {large / small:.1f}x the time ({small:.3f} s, {large:.3f} s)")
    huge = seconds("x = 1\n" * ((20 << 20) // 6))
    print(f"a 20 MiB cell (cut at {similarity.MAX_CHARS:,} characters): {huge:.3f} s")


if __name__ == "__main__":
    main()
