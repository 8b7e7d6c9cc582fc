"""Questions grouped by meaning for the weekly digest: agglomerative clustering with average linkage on cosine
distance (SciPy's `linkage` / `fcluster`), cut at a distance threshold.

Why this method: the number of topics in a week is unknown, and a distance threshold says directly how alike two
questions must be; average linkage (the mean distance between two groups' members) neither chains unrelated
questions through a string of neighbours, as single linkage does, nor splits a group of paraphrases over one odd
wording, as complete linkage does. A week holds hundreds of questions, so the O(n²) distance matrix is small; the
digest clusters at most MAX_QUESTIONS of them.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

MAX_QUESTIONS = 2000  # the most recent questions clustered (a distance matrix of 2 M entries)
# the largest mean cosine distance within a group, for the bundled multilingual-e5-small's query vectors: chosen by
# reading the groups of a synthetic week at 0.04-0.14 (bench/digest_week.py; docs/benchmarks.md, digest), where
# 0.10 is the largest that keeps groups to one question or topic; tests/bot/test_digest.py pins it on a labelled set
DEFAULT_MAX_DISTANCE = 0.10


def cluster_by_meaning(vectors: npt.NDArray[np.float32], *, max_distance: float = DEFAULT_MAX_DISTANCE
                       ) -> list[list[int]]:  # fmt: skip
    """Groups of row indices whose members are, on average, within `max_distance` cosine distance; largest group
    first (ties: the earliest member first), members in row order. A zero vector (an embedder that failed) stays
    alone."""
    count = len(vectors)
    if count == 0:
        return []
    matrix = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1)
    usable = np.flatnonzero(norms > 0)
    groups: dict[int, list[int]] = {}
    if len(usable) == 1:
        groups[0] = [int(usable[0])]
    elif len(usable) > 1:
        from scipy.cluster.hierarchy import fcluster, linkage  # loaded by the digest only

        unit = matrix[usable] / norms[usable, None]
        tree = linkage(unit, method="average", metric="cosine")
        labels = fcluster(tree, t=max_distance, criterion="distance")
        for row, label in zip(usable.tolist(), labels.tolist(), strict=True):
            groups.setdefault(int(label), []).append(int(row))
    alone = [[int(i)] for i in np.flatnonzero(norms <= 0)]
    found = [*groups.values(), *alone]
    return sorted(found, key=lambda members: (-len(members), members[0]))


def medoid(members: list[int], vectors: npt.NDArray[np.float32]) -> int:
    """The member most like the others (highest mean cosine similarity): the cluster's representative question."""
    if len(members) <= 2:
        return members[0]
    unit = np.asarray(vectors[members], dtype=np.float64)
    norms = np.linalg.norm(unit, axis=1, keepdims=True)
    unit = np.divide(unit, norms, out=np.zeros_like(unit), where=norms > 0)
    similarity = unit @ unit.T
    return members[int(np.argmax(similarity.sum(axis=1)))]
