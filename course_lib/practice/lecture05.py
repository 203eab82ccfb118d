"""Checks of lecture 05's practice (positional encodings): each prints one line, never raises."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from . import attempt, check, failed, number, passed, todo, unanswered

__all__ = ["check_order_prediction", "check_probe", "check_relative_position_bias", "check_rope",
           "check_rope_score", "check_biased_weight", "linear_probe_accuracy"]


@check
def check_order_prediction(same_mean, same_first, encoder, a, b) -> bool:
    """Predict-then-run: without positions, is the mean over tokens the same for the two orders,
    and is the output at position 0?"""
    if unanswered(same_mean) or unanswered(same_first):
        return todo("not done yet: set same_mean and same_first to True or False")
    if not isinstance(same_mean, bool) or not isinstance(same_first, bool):
        return failed("same_mean and same_first should each be True or False")
    with torch.no_grad():
        ha, hb = encoder(a)[0], encoder(b)[0]                                   # (T, d_model) each
    truth_mean = torch.allclose(ha.mean(0), hb.mean(0), atol=1e-5)
    truth_first = torch.allclose(ha[0], hb[0], atol=1e-5)
    if same_mean != truth_mean:
        return failed("the mean over tokens: think of what a permutation does to a sum",
                      "section 1, the picture of the two orders")
    if same_first != truth_first:
        return failed("the output at position 0: which word sits there in each sentence?",
                      "section 1, the picture of the two orders")
    return passed("both the same: each word gets the same output in both orders, only listed elsewhere; "
                  "position 0 holds cls in both")


def linear_probe_accuracy(h_train: torch.Tensor, pos_train: torch.Tensor, h_test: torch.Tensor,
                          pos_test: torch.Tensor, T: int, ridge: float = 0.0) -> float:
    """A linear probe for the position: least squares from the vectors (and a constant 1) to one-hot
    positions, fit on the training vectors; the share of test vectors whose highest score is their
    own position.

    ``ridge > 0`` standardises the features on the training set and adds ``ridge * N`` times the
    identity to the normal equations (not on the constant): vectors that nearly coincide (a layer that
    erased the position) then give a well-posed fit, the same on every CPU's maths library.

    Shape:
        h_train: ``(N, d)``; pos_train: ``(N,)`` ints in ``0 .. T-1``; h_test: ``(M, d)``; pos_test: ``(M,)``.
    """
    targets = F.one_hot(pos_train, T).to(h_train.dtype)                                   # (N, T)
    if ridge > 0:
        mean, std = h_train.mean(dim=0), h_train.std(dim=0).clamp_min(1e-6)
        h_train, h_test = (h_train - mean) / std, (h_test - mean) / std
    x = torch.cat([h_train, torch.ones(len(h_train), 1, dtype=h_train.dtype)], dim=1)     # (N, d + 1)
    x_test = torch.cat([h_test, torch.ones(len(h_test), 1, dtype=h_test.dtype)], dim=1)   # (M, d + 1)
    if ridge > 0:
        penalty = torch.diag(torch.cat([torch.full((x.shape[1] - 1,), ridge * len(x), dtype=x.dtype),
                                        torch.zeros(1, dtype=x.dtype)]))                 # not on the constant
        w = torch.linalg.solve(x.T @ x + penalty, x.T @ targets)                          # (d + 1, T)
    else:
        w = torch.linalg.lstsq(x, targets).solution                                       # (d + 1, T)
    return ((x_test @ w).argmax(dim=1) == pos_test).double().mean().item()


def _probe_data(T: int = 8, d: int = 24):
    """Vectors that carry their position weakly (a random direction per position, under noise and a
    common offset), few for training and many for testing: a probe scored on what it was fit on
    looks far better than it is."""
    g = torch.Generator().manual_seed(5)
    directions = torch.randn(T, d, generator=g, dtype=torch.float64)

    def draw(n):
        pos = torch.arange(T).repeat(n)
        return 0.5 * directions[pos] + torch.randn(len(pos), d, generator=g, dtype=torch.float64) + 3.0, pos
    return (*draw(6), *draw(50), T)


def _ridge_probe(h_train, pos_train, h_test, pos_test, T, ridge, shrink_constant=False, times_n=True) -> float:
    """The probe of the lecture's write, on raw features: the normal equations with ``ridge * N`` (or
    ``ridge``) added on the diagonal, the constant's entry left out unless ``shrink_constant``."""
    x = torch.cat([h_train, torch.ones(len(h_train), 1, dtype=h_train.dtype)], dim=1)     # (N, d + 1)
    x_test = torch.cat([h_test, torch.ones(len(h_test), 1, dtype=h_test.dtype)], dim=1)   # (M, d + 1)
    penalty = ridge * (len(x) if times_n else 1) * torch.eye(x.shape[1], dtype=x.dtype)
    if not shrink_constant:
        penalty[-1, -1] = 0.0
    w = torch.linalg.solve(x.T @ x + penalty, x.T @ F.one_hot(pos_train, T).to(x.dtype))  # (d + 1, T)
    return ((x_test @ w).argmax(dim=1) == pos_test).double().mean().item()


_RIDGE = 1.0        # the check's penalty: with 6 vectors per position it lifts the held-out share from 0.41 to 0.54


def _as_share(got, where):
    try:
        return float(got)
    except (TypeError, ValueError):
        failed(f"probe_accuracy should return a number, the share of test vectors placed right, got "
               f"{type(got).__name__}", where)
        return None


@check
def check_probe(fn) -> bool:
    """The student's ``probe_accuracy(h_train, pos_train, h_test, pos_test, T, ridge=0.0)``: fit a
    least-squares map from vectors (plus a constant) to one-hot positions on the training set, with a
    ridge penalty ``ridge * N`` on every weight but the constant's, and score it on the test set."""
    where = "probe_accuracy"
    h_train, pos_train, h_test, pos_test, T = _probe_data()
    ok, got = attempt(fn, h_train.clone(), pos_train.clone(), h_test.clone(), pos_test.clone(), T, where=where)
    if not ok:
        return False
    if (got := _as_share(got, where)) is None:
        return False
    expected = linear_probe_accuracy(h_train, pos_train, h_test, pos_test, T)
    if abs(got - expected) > 0.01:
        if got > 1:
            return failed(f"{got:g} is not a share between 0 and 1 (look at the last line: a mean of right / wrong)",
                          where)
        if abs(got - linear_probe_accuracy(h_train, pos_train, h_train, pos_train, T)) <= 0.01:
            return failed(f"{got:.3f}: the probe is scored on the vectors it was fit on, which flatters it (look at "
                          "which vectors you score)", where)
        if abs(got - linear_probe_accuracy(h_test, pos_test, h_test, pos_test, T)) <= 0.01:
            return failed(f"{got:.3f}: the probe was fit on the test vectors (look at which vectors the fit sees)",
                          where)
        if abs(got - 1 / T) < 0.05:
            return failed(f"{got:.3f}, about chance (1/{T}): the scores and the positions are not compared along "
                          "the same axis (look at the argmax)", where)
        return failed(f"{got:.3f} with ridge = 0, expected about {expected:.3f} on these vectors (look at the "
                      "constant column of ones and the one-hot targets)", where)
    ok, shrunk = attempt(fn, h_train.clone(), pos_train.clone(), h_test.clone(), pos_test.clone(), T,
                         ridge=_RIDGE, where=where)
    if not ok or (shrunk := _as_share(shrunk, where)) is None:
        return False
    want = _ridge_probe(h_train, pos_train, h_test, pos_test, T, _RIDGE)
    if abs(shrunk - want) <= 0.005:
        return passed(f"without a ridge your probe places {got:.1%} of the {len(pos_test)} held-out vectors right, "
                      f"with ridge = {_RIDGE:g} {shrunk:.1%} (chance: {1 / T:.1%}): with "
                      f"{len(pos_train) // T} training vectors per position the plain fit also fits their noise")
    if abs(shrunk - got) <= 0.005:
        return failed(f"ridge = {_RIDGE:g} gives {shrunk:.3f}, as ridge = 0 does: the penalty has no effect (look at "
                      "whether it reaches the normal equations)", where)
    if abs(shrunk - _ridge_probe(h_train, pos_train, h_test, pos_test, T, _RIDGE, shrink_constant=True)) <= 0.005:
        return failed(f"ridge = {_RIDGE:g} gives {shrunk:.3f}: the constant column is shrunk too, so the bias cannot "
                      "absorb the vectors' common offset (look at the penalty's last diagonal entry)", where)
    if abs(shrunk - _ridge_probe(h_train, pos_train, h_test, pos_test, T, _RIDGE, times_n=False)) <= 0.005:
        return failed(f"ridge = {_RIDGE:g} gives {shrunk:.3f}: the penalty is not multiplied by N = "
                      f"{len(pos_train)}, the number of training vectors (look at λN)", where)
    return failed(f"ridge = {_RIDGE:g} gives {shrunk:.3f}, expected about {want:.3f} (look at the penalty λN on the "
                  "diagonal of XᵀX)", where)


def _rope_reference(x: torch.Tensor, positions: torch.Tensor, theta: torch.Tensor, sign: float = 1.0,
                    layout: str = "interleaved") -> torch.Tensor:
    """Each pair of features turned counter-clockwise (``sign=-1``: clockwise) by ``positions * theta``."""
    angle = sign * positions.to(x.dtype)[:, None] * theta                                  # (T, d/2)
    if layout == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
    else:
        a, b = x.chunk(2, dim=-1)
    first, second = a * angle.cos() - b * angle.sin(), a * angle.sin() + b * angle.cos()
    if layout == "interleaved":
        return torch.stack([first, second], dim=-1).flatten(-2)
    return torch.cat([first, second], dim=-1)


def _rope_grid_reference(rotate, q, k, theta, T):
    pos = torch.arange(T)
    return rotate(q.expand(T, -1), pos, theta) @ rotate(k.expand(T, -1), pos, theta).T     # (T, T)


@check
def check_rope(apply_rope, score_grid) -> bool:
    """The student's ``apply_rope(x, positions, theta)`` (each pair (2i, 2i+1) of the last axis turned
    counter-clockwise by ``positions[t] * theta[i]``) and ``score_grid(q, k, theta, T)`` (the (T, T) scores of
    q at position m, row, with k at position n, column)."""
    where = "apply_rope"
    g = torch.Generator().manual_seed(8)
    d, T = 8, 6
    theta = 10 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)                       # (4,): 1 .. 0.1 rad
    x = torch.randn(2, T, d, generator=g, dtype=torch.float64)
    positions = torch.arange(T) + 3                                                      # not 0 .. T-1
    ok, got = attempt(apply_rope, x.clone(), positions.clone(), theta.clone(), where=where)
    if not ok:
        return False
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(x.shape):
        shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
        return failed(f"for x of shape {tuple(x.shape)} apply_rope should return the same shape, got {shape}", where)
    got = got.double()
    if not torch.allclose(got, _rope_reference(x, positions, theta), atol=1e-9):
        if torch.allclose(got, x, atol=1e-9):
            return failed("the vectors come back unchanged: nothing is turned (look at the angle m θ_i)", where)
        if not torch.allclose(got.norm(dim=-1), x.norm(dim=-1), atol=1e-6):
            return failed("the vectors' lengths change, so this is not a rotation (look at the cos and sin of one "
                          "angle per pair)", where)
        if torch.allclose(got, _rope_reference(x, positions, theta, sign=-1.0), atol=1e-9):
            return failed("each pair turns clockwise, the wrong way: (1, 0) should go towards (0, 1) (look at the "
                          "signs of the sin terms)", where)
        if torch.allclose(got, _rope_reference(x, positions, theta, layout="half"), atol=1e-9):
            return failed("feature i is paired with feature i + d/2, the halves layout; here a pair is two "
                          "neighbours, features 2i and 2i + 1 (look at how you take the pairs)", where)
        if torch.allclose(got, _rope_reference(x, torch.arange(T), theta), atol=1e-9):
            return failed("the tokens are turned as if at positions 0 .. T-1, not at the positions given (look at "
                          "the positions argument)", where)
        return failed("the turned vectors differ from a rotation of each pair (2i, 2i + 1) by positions[t] · "
                      "theta[i] (look at which angle each pair gets)", where)
    where = "score_grid"
    q, k = torch.randn(d, generator=g, dtype=torch.float64), torch.randn(d, generator=g, dtype=torch.float64)
    ok, grid = attempt(score_grid, q.clone(), k.clone(), theta.clone(), 9, where=where)
    if not ok:
        return False
    if not isinstance(grid, torch.Tensor) or tuple(grid.shape) != (9, 9):
        shape = tuple(grid.shape) if isinstance(grid, torch.Tensor) else type(grid).__name__
        return failed(f"score_grid(q, k, theta, 9) should return a (9, 9) tensor, got {shape}", where)
    grid = grid.double()
    expected = _rope_grid_reference(lambda v, p, t: _rope_reference(v, p, t), q, k, theta, 9)
    if torch.allclose(grid, expected, atol=1e-9):
        spread = max(torch.diagonal(grid, o).std().item() for o in range(-7, 8))
        return passed(f"pairs turned by m θ_i, lengths kept; on your grid every diagonal (one offset n − m) holds "
                      f"one score, spread below {max(spread, 1e-12):.0e}, whatever m")
    if torch.allclose(grid, expected.T, atol=1e-9):
        return failed("the grid is transposed: row m should hold the query at position m, column n the key at "
                      "position n", where)
    if torch.allclose(grid, torch.full_like(grid, torch.dot(q, k).item()), atol=1e-9):
        return failed("every score is q · k: the vectors were not turned by their positions (look at what you "
                      "pass to apply_rope)", where)
    if torch.allclose(torch.diagonal(grid), torch.full((9,), torch.dot(q, k).item(), dtype=grid.dtype), atol=1e-9):
        return failed("the diagonal is right but not the rest: q and k should each be turned by their own position, "
                      "m for the row and n for the column", where)
    return failed("the grid differs from the scores of q turned to position m with k turned to position n (look at "
                  "which vector goes to which axis)", where)


def _relative_reference(table: torch.Tensor, T: int) -> torch.Tensor:
    k = (len(table) - 1) // 2
    return torch.stack([torch.stack([table[min(max(j - i, -k), k) + k] for j in range(T)]) for i in range(T)])


@check
def check_relative_position_bias(cls) -> bool:
    """The student's ``RelativePositionBias(K)``: a learned table of 2K + 1 numbers, zero at the start;
    ``forward(scores)`` adds to entry (i, j) of the last two axes the table at offset j - i, clipped to
    [-K, K]. Checked for translation invariance: the same offset gets the same bias everywhere."""
    where = "RelativePositionBias"
    K = 3
    ok, module = attempt(cls, K, where=where)
    if not ok:
        return False
    if not isinstance(module, nn.Module):
        return failed(f"RelativePositionBias should be an nn.Module, got {type(module).__name__}", where)
    scores = torch.randn(2, 3, 9, 9, generator=torch.Generator().manual_seed(3))   # (B, h, T, T); T = 9 > K + 1
    ok, out = attempt(module.forward, scores.clone(), where=where)
    if not ok:
        return False
    params = list(module.parameters())
    if sum(p.numel() for p in params) != 2 * K + 1:
        return failed(f"with K = {K} the module should learn 2K + 1 = {2 * K + 1} numbers, it has "
                      f"{sum(p.numel() for p in params)} (look at the table: one number per offset -K .. K)", where)
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != tuple(scores.shape):
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        return failed(f"for scores of shape {tuple(scores.shape)} the output should have the same shape, got {shape}",
                      where)
    if not torch.allclose(out, scores):
        return failed("with a fresh (all-zero) table the scores should come out unchanged (look at how the table "
                      "starts and what you add)", where)
    (table,) = params
    with torch.no_grad():
        table.copy_(torch.tensor([-4.0, -3.0, -2.0, -1.0, 0.5, 1.0, 2.0]))
    bias = (module(torch.zeros(1, 1, 9, 9))[0, 0]).detach().double()
    expected = _relative_reference(table.detach().double(), 9)
    shifted = [torch.diagonal(bias, o).unique().numel() for o in range(-8, 9)]
    if max(shifted) > 1:
        return failed("the bias changes along a diagonal: the same offset j - i gets different numbers at different "
                      "positions, so a shift of the sentence changes the scores (look at how the offset is computed)",
                      where)
    if torch.allclose(bias, expected.T):
        return failed("the bias of query i for key j is read at offset i - j: the table comes out mirrored (look at "
                      "which index is the query)", where)
    if not torch.allclose(bias, expected):
        near = _relative_reference(table.detach().double(), 4)
        if torch.allclose(bias[:4, :4], near):
            return failed("right for offsets up to K, wrong beyond: offsets past ±K should share the end entries of "
                          "the table (look at the clipping)", where)
        i, j = (bias != expected).nonzero()[0].tolist()
        return failed(f"entry (query {i}, key {j}) gets {bias[i, j].item():g}, expected the table at offset {j - i} "
                      f"clipped to ±{K}, {expected[i, j].item():g}", where)
    module.zero_grad()
    module(torch.zeros(9, 9)).sum().backward()
    if table.grad is None:
        return failed("a loss on the output sends no gradient into the table: it cannot be learned (look at "
                      "whether the table is an nn.Parameter used in forward)", where)
    counts = torch.tensor([9 - abs(o) if abs(o) < K else 0 for o in range(-K, K + 1)], dtype=torch.float32)
    counts[0] = counts[-1] = sum(9 - o for o in range(K, 9))
    if not torch.allclose(table.grad, counts):
        return failed(f"the table's gradient is {table.grad.tolist()}, expected the number of (i, j) pairs at each "
                      f"offset, {counts.tolist()} (look at the lookup)", where)
    return passed(f"every offset j - i gets one number wherever it occurs, clipped at ±{K}, added to scores of any "
                  "leading shape, and a loss reaches the table")


@check
def check_rope_score(answer) -> bool:
    """Quiz: one pair of features, theta = 1 radian per position, q = k = (1, 0); RoPE turns q as the token at
    position 5 and k as the token at position 3. Their dot product?"""
    value = math.cos(2.0)
    causes = {1.0: "1 is the score of two unturned vectors: RoPE turns both by their positions (look at R(mθ))",
              math.cos(8.0): "cos 8 adds the two positions: the key's rotation enters transposed, so the angles "
                             "subtract (look at R(mθ)ᵀ R(nθ))",
              math.cos(5.0): "cos 5 turns only the query: the key is turned too, by its own position",
              math.cos(3.0): "cos 3 turns only the key: the query is turned too, by its own position",
              -value: "the sign: turning both by their positions leaves cos((m − n)θ), and cos 2 is negative"}
    return number(answer, value, f"cos((5 − 3)·1) = {value:.3f}: only the offset m − n = 2 is left, whatever m and n "
                  "are", rel_tol=0.0, abs_tol=5e-3,
                  low="too small: the score of two unit vectors is the cosine of the angle left between them",
                  high="too large: the score of two unit vectors is the cosine of the angle left between them",
                  where="section 5.1", name="score", wrong=causes)


@check
def check_biased_weight(answer) -> bool:
    """Retrieval (lecture 04, softmax): a query scores four keys 0, 0, 0, 0; a relative bias adds 3 to the score of
    the previous token. The softmax weight on the previous token?"""
    value = math.exp(3) / (math.exp(3) + 3)
    causes = {0.25: "0.25 spreads the weight evenly: the bias is added to the score before the softmax, so it "
                    "changes the weights (look at where b enters)",
              1.0: "1.0 is the argmax: a softmax gives every key e^score over the sum, never all to one "
                   "(lecture 04, softmax)",
              0.75: "the bias is not a share: it enters as e^3 in the softmax (lecture 04, softmax)",
              math.exp(3) / (math.exp(3) + 4): "the denominator counts the previous key twice: e^3 + 3 e^0 over "
                                               "the four keys (lecture 04, softmax)"}
    return number(answer, value,
                  f"e^3 / (e^3 + 3) = {value:.3f}: a bias of 3 multiplies that key's share by e^3 before "
                  "the normalisation", rel_tol=0.0, abs_tol=3e-3,
                  low="too small: the previous key gets e^(0 + 3), each other key e^0 (lecture 04, softmax)",
                  high="too large: the other three keys keep e^0 each (lecture 04, softmax)",
                  where="lecture 04, softmax", name="weight", wrong=causes, wrong_where="section 6")
