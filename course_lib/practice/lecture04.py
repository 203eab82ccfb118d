"""Checks for the practice exercises of lecture 04 (embeddings and softmax).

Each check prints one line, ``✓ ...``, ``✗ what is wrong (where to look)`` or ``○ not done yet: ...``,
and returns None, so that a check cell shows that line and nothing else.
"""

from __future__ import annotations

import inspect
import math

import torch
import torch.nn.functional as F
from torch import nn

from . import attempt, check, failed, number, passed, same_tensor, todo, unanswered

__all__ = [
    "check_doubled_logits",
    "check_nearest",
    "check_sample",
    "check_score_std",
    "check_stable_softmax",
    "check_tied_head",
    "check_wordpiece",
]


@check
def check_stable_softmax(fn) -> bool:
    """The student's ``stable_softmax(z, tau)``: softmax(z / tau) over the last axis, for any logits."""
    where = "stable_softmax"
    g = torch.Generator().manual_seed(9)
    z = 3 * torch.randn(4, 6, generator=g, dtype=torch.float64)                    # (B, V): ordinary logits
    ok, got = attempt(fn, z.clone(), 1.0, where=where)
    if not ok:
        return False
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(z.shape):
        return failed(f"stable_softmax should return a tensor of the logits' shape {tuple(z.shape)}, got "
                      f"{tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__}", where)
    got = got.to(torch.float64)
    sums = got.sum(-1)
    if not torch.allclose(sums, torch.ones_like(sums), atol=1e-6):
        return failed(f"the rows of the output sum to {sums.min().item():.3g} .. {sums.max().item():.3g}, not 1: "
                      "each row is one distribution over the V tokens (look at the axis of the sum)", where)
    column_shift = z - z.max(dim=0, keepdim=True).values                          # each column its own shift
    if torch.allclose(got, column_shift.exp() / column_shift.exp().sum(-1, keepdim=True), atol=1e-6) and \
            not torch.allclose(got, torch.softmax(z, dim=-1), atol=1e-6):
        return failed("each column of logits was shifted by its own maximum, so the logits of one row moved by "
                      "different amounts and their gaps changed: the shift must be one number per row (look at "
                      "over which axis the maximum is taken)", where)
    if not same_tensor(got, torch.softmax(z, dim=-1), "at tau = 1 the output", where):
        return False
    sharp = fn(z.clone(), 0.5).to(torch.float64)
    if torch.allclose(sharp, torch.softmax(z * 0.5, dim=-1), atol=1e-6):
        return failed("at tau = 0.5 your distribution is flatter than at tau = 1; a small temperature must "
                      "sharpen it (look at how tau enters)", where)
    if not same_tensor(sharp, torch.softmax(z / 0.5, dim=-1), "at tau = 0.5 the output", where):
        return False
    big = torch.tensor([[1000.0, 999.0, 998.0], [-1000.0, -1001.0, -1003.0]], dtype=torch.float64)
    with torch.no_grad():
        huge = fn(big.clone(), 1.0)
    huge = huge.to(torch.float64) if isinstance(huge, torch.Tensor) else torch.full_like(big, math.nan)
    if not torch.isfinite(huge).all():
        rows = [i for i in range(2) if not torch.isfinite(huge[i]).all()]
        if rows == [1]:
            return failed("NaN for a row of logits around -1000 in a batch whose other row is around +1000: "
                          "every e^z of that row underflows to 0, and 0 / 0 (look at over which axis the "
                          "maximum is taken)", where)
        return failed("NaN or inf for logits around 1000: e^1000 overflows to inf, and inf / inf is NaN "
                      "(look at what you subtract before exp)", where)
    if not same_tensor(huge, torch.softmax(big, dim=-1), "for logits around +-1000 the output", where):
        return False
    return passed("right for ordinary logits, for tau = 0.5, and for logits of +-1000: shifting each row by its "
                  "own maximum changes nothing but keeps exp in range")


#: the logits of the sampling check: eight tokens, far apart enough that a wrong temperature shows
_SAMPLE_LOGITS = torch.tensor([3.0, 2.2, 1.6, 1.2, 0.8, 0.3, 0.0, -1.5], dtype=torch.float64)
_DRAWS = 20_000
_CHI2_LIMIT = 40.0          # chi-square with at most 7 degrees of freedom: a right sampler stays far below


def _chi2(ids: torch.Tensor, p: torch.Tensor) -> float:
    """Pearson's chi-square of the drawn ids against the probabilities p (cells with p = 0 left out,
    a draw there makes it infinite)."""
    counts = torch.bincount(ids, minlength=len(p)).to(torch.float64)
    expected = p * len(ids)
    if (counts[expected == 0] > 0).any():
        return math.inf
    keep = expected > 0
    return (((counts[keep] - expected[keep]) ** 2) / expected[keep]).sum().item()


def _topk_probs(z: torch.Tensor, tau: float, k: int) -> torch.Tensor:
    """softmax(z / tau) over the k largest logits, 0 elsewhere: what sample() draws from."""
    p = torch.zeros_like(z)
    top = z.topk(k)
    p[top.indices] = torch.softmax(top.values / tau, dim=-1)
    return p


def _nucleus_probs(z: torch.Tensor, tau: float, k: int, top_p: float, select_tau: float | None = None,
                   strict: bool = False) -> torch.Tensor:
    """What sample() draws from with top-p: softmax(z / tau) over the k largest logits, then only the
    most probable tokens whose mass *before* them is below ``top_p`` (the smallest set reaching it),
    renormalised. ``select_tau`` picks that set at another temperature; ``strict`` keeps only tokens whose
    mass *with* them stays below ``top_p`` (two mistakes the check names)."""
    top = z.topk(k)
    p = torch.softmax(top.values / tau, dim=-1)
    sel = p if select_tau is None else torch.softmax(top.values / select_tau, dim=-1)
    mass = sel.cumsum(dim=-1)
    keep = mass < top_p if strict else mass - sel < top_p
    keep[0] = True
    out = torch.zeros_like(z)
    out[top.indices] = p * keep / (p * keep).sum()
    return out


_CROSSING = ("{}: the nucleus is the smallest set whose mass reaches top_p, so the token that crosses it stays in "
             "(look at the mass before each token)")
_TOP_P_CASES = ((1.0, 8, 0.75, "tau = 1, top_p = 0.75"), (2.0, 8, 0.75, "tau = 2, top_p = 0.75"),
                (0.5, 3, 0.9, "tau = 0.5, k = 3, top_p = 0.9"))


@check
def check_sample(fn) -> bool:
    """The student's ``sample(logits, tau, k, n, generator, top_p=1.0)``: n ids drawn from softmax(z / tau)
    over the k largest logits, cut to the nucleus of mass ``top_p``, with the given generator. Checked on
    20,000 draws by a chi-square test."""
    where = "sample"
    z = _SAMPLE_LOGITS
    ok, got = attempt(fn, z.clone(), 1.0, 8, _DRAWS, torch.Generator().manual_seed(0), where=where)
    if not ok:
        return False
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != (_DRAWS,):
        shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
        return failed(f"sample should return a tensor of n = {_DRAWS:,} token ids, got {shape}", where)
    if got.is_floating_point() or got.dtype == torch.bool:
        return failed(f"sample should return token ids (integers), got {got.dtype} (look at what you return: "
                      "positions in the vocabulary, not probabilities)", where)
    got = got.long()
    if got.min() < 0 or got.max() >= len(z):
        return failed(f"ids from {got.min().item()} to {got.max().item()}, but the vocabulary has ids "
                      f"0 .. {len(z) - 1} (look at how a uniform number becomes an id)", where)
    again = fn(z.clone(), 1.0, 8, _DRAWS, torch.Generator().manual_seed(0))
    if not torch.equal(torch.as_tensor(again).long(), got):
        return failed("two calls with generators seeded alike gave different draws (look at where your random "
                      "numbers come from: the generator argument)", where)
    other = torch.as_tensor(fn(z.clone(), 1.0, 8, _DRAWS, torch.Generator().manual_seed(1))).long()
    if torch.equal(other, got):
        return failed("two different seeds gave the same draws: nothing random is drawn (look at the uniform "
                      "numbers)", where)
    uniform = torch.full_like(z, 1 / len(z))
    if _chi2(got, torch.softmax(z, -1)) > _CHI2_LIMIT:
        if _chi2(got, _nucleus_probs(z, 1.0, 8, 1.0, strict=True)) <= _CHI2_LIMIT:
            return failed(_CROSSING.format("with top_p = 1 the least probable kept token is never drawn"), where)
        if got.unique().numel() == 1:
            return failed(f"every draw is id {got[0].item()}: at tau = 1 every token has a chance (look at the "
                          "sampling step, not an argmax)", where)
        if _chi2(got, uniform) < _CHI2_LIMIT:
            return failed("at tau = 1 the ids come out about equally often, not with probabilities softmax(z) "
                          "(look at how the probabilities enter the draw)", where)
        counts = torch.bincount(got, minlength=len(z)).tolist()
        return failed(f"at tau = 1 and k = V the counts {counts} do not fit softmax(z) (chi-square "
                      f"{_chi2(got, torch.softmax(z, -1)):.0f}; look at the cumulative sum and the comparison "
                      "with u)", where)
    cases = ((0.5, 8, "tau = 0.5"), (2.0, 8, "tau = 2"), (1.0, 3, "k = 3"), (0.5, 3, "tau = 0.5, k = 3"))
    for seed, (tau, k, name) in enumerate(cases, start=2):
        draws = torch.as_tensor(fn(z.clone(), tau, k, _DRAWS, torch.Generator().manual_seed(seed))).long()
        expected = _topk_probs(z, tau, k)
        if _chi2(draws, expected) <= _CHI2_LIMIT:
            continue
        if k < len(z) and not torch.isin(draws, z.topk(k).indices).all():
            return failed(f"with {name}, ids outside the {k} largest logits were drawn (look at how the others "
                          "are left out)", where)
        if _chi2(draws, _topk_probs(z, 1.0, k)) <= _CHI2_LIMIT:
            return failed(f"with {name} the counts fit tau = 1: the temperature has no effect (look at how tau "
                          "enters)", where)
        if _chi2(draws, _topk_probs(z, 1 / tau, k)) <= _CHI2_LIMIT:
            return failed(f"with {name} the counts fit tau = {1 / tau:g}: the temperature works the wrong way "
                          "(look at how tau enters)", where)
        if _chi2(draws, _nucleus_probs(z, tau, k, 1.0, strict=True)) <= _CHI2_LIMIT:
            return failed(_CROSSING.format(f"with {name} and top_p = 1 the least probable kept token is never "
                                           "drawn"), where)
        last = z.topk(k).indices[-1]                                      # the smallest kept logit
        if k < len(z) and draws.eq(last).double().mean() > expected[last] + 0.05:
            return failed(f"with {name} the smallest kept logit is drawn too often: the kept probabilities do "
                          "not sum to 1 (look at over which logits the softmax runs)", where)
        return failed(f"with {name} the counts do not fit softmax(z / tau) over the k largest logits (chi-square "
                      f"{_chi2(draws, expected):.0f}; look at the temperature and at which logits are kept)", where)
    for seed, (tau, k, top_p, name) in enumerate(_TOP_P_CASES, start=10):
        ok, draws = attempt(fn, z.clone(), tau, k, _DRAWS, torch.Generator().manual_seed(seed), top_p=top_p,
                            where=where)
        if not ok:
            return False
        draws = torch.as_tensor(draws).long()
        expected = _nucleus_probs(z, tau, k, top_p)
        if _chi2(draws, expected) <= _CHI2_LIMIT:
            continue
        nucleus = int((expected > 0).sum())
        if _chi2(draws, _topk_probs(z, tau, k)) <= _CHI2_LIMIT:
            return failed(f"with {name} the counts fit top-k alone: top_p has no effect (look at where top_p leaves "
                          "tokens out)", where)
        if _chi2(draws, _nucleus_probs(z, tau, k, top_p, select_tau=1.0)) <= _CHI2_LIMIT:
            return failed(f"with {name} the kept tokens are those of tau = 1: the nucleus was chosen before the "
                          "temperature (look at which probabilities top_p is compared with)", where)
        if _chi2(draws, _nucleus_probs(z, tau, k, top_p, strict=True)) <= _CHI2_LIMIT:
            return failed(_CROSSING.format(f"with {name} one token too few is kept"), where)
        if not torch.isin(draws, (expected > 0).nonzero().flatten()).all():
            return failed(f"with {name} ids outside the nucleus of the {nucleus} most probable tokens were drawn "
                          "(look at the uniform numbers: the kept mass no longer sums to 1)", where)
        return failed(f"with {name} the counts do not fit the nucleus of {nucleus} tokens, renormalised (chi-square "
                      f"{_chi2(draws, expected):.0f}; look at the kept probabilities)", where)
    return passed(f"{len(cases) + 1} settings of (tau, k) and {len(_TOP_P_CASES)} of top_p, {_DRAWS:,} draws "
                  f"each: every chi-square below {_CHI2_LIMIT:g}, and one seed gives one sequence of draws")


def _neighbour_table() -> torch.Tensor:
    """(12, 6) rows: row 0 is the query; row 5 points its way but is short, row 9 is long and only
    loosely aligned, so a dot product and a cosine rank them differently."""
    g = torch.Generator().manual_seed(11)
    table = torch.randn(12, 6, generator=g, dtype=torch.float64)
    table[5] = 0.3 * (table[0] + 0.2 * torch.randn(6, generator=g, dtype=torch.float64))
    table[9] = 6.0 * (0.4 * table[0] / table[0].norm() + torch.randn(6, generator=g, dtype=torch.float64) / 3)
    return table


@check
def check_nearest(fn) -> bool:
    """The student's ``nearest(table, i, k)``: the k rows of highest cosine similarity with row i, not i."""
    where = "nearest"
    table, i, k = _neighbour_table(), 0, 3
    ok, got = attempt(fn, table.clone(), i, k, where=where)
    if not ok:
        return False
    try:
        got = [int(j) for j in (got.tolist() if isinstance(got, torch.Tensor) else got)]
    except (TypeError, ValueError):
        return failed(f"nearest should return the k row indices, got {type(got).__name__}", where)
    unit = table / table.norm(dim=-1, keepdim=True)
    cos = unit @ unit[i]
    cos[i] = -math.inf
    expected = cos.topk(k).indices.tolist()
    if got == expected:
        return passed(f"rows {expected} have the highest cosine with row {i} (itself left out): only the "
                      "direction counts, not the length")
    if len(got) != k:
        return failed(f"asked for k = {k} neighbours, got {len(got)} (look at how many you keep)", where)
    if i in got:
        return failed(f"row {i} is among its own neighbours: its cosine with itself is 1, the largest there is "
                      "(look at how the row itself is left out)", where)
    dot = table @ table[i]
    dot[i] = -math.inf
    if got == dot.topk(k).indices.tolist():
        return failed(f"row 9, long but only loosely aligned (cosine {cos[9].item():.2f}), ranks above row 5 "
                      f"(cosine {cos[5].item():.2f}): a plain dot product rewards length (look at the rows' "
                      "lengths)", where)
    if sorted(got) == sorted(expected):
        return failed(f"the right rows in the wrong order: {got}, expected {expected}, most similar first "
                      "(look at the order of the result)", where)
    return failed(f"the neighbours of row {i} are {expected} by cosine similarity, got {got} (look at the "
                  "normalization: each row divided by its own length)", where)


@check
def check_doubled_logits(answer) -> bool:
    """Quiz: z = [2, 0]; every logit is multiplied by 2: p_1 after (softmax([4, 0])[0])."""
    if unanswered(answer):
        return todo("not done yet: set doubled to a number")
    before = 1 / (1 + math.exp(-2))
    value = 1 / (1 + math.exp(-4))
    if isinstance(answer, (int, float)) and not isinstance(answer, bool) and abs(answer - before) < 5e-3:
        return failed(f"{before:.3f} is p_1 before the change: multiplying every logit by 2 is not a shift, it "
                      "doubles the gap (look at what a temperature does)", "doubled")
    return number(answer, value, f"z = [4, 0]: p_1 = e^4 / (e^4 + 1) = {value:.3f}; doubling the logits is tau = 1/2, "
                  "the same order, sharper", rel_tol=0.0, abs_tol=2e-3,
                  low="too small (the gap between the logits is now 4: look at e^4 / (e^4 + e^0))",
                  high="too large (the gap between the logits is now 4: look at e^4 / (e^4 + e^0))",
                  where="doubled")


@check
def check_tied_head(cls) -> bool:
    """The student's ``TiedHead(embedding)``: logits ``h E^T + b`` with E the embedding's own weight
    (shared, not copied) and a bias of its own, zero at the start; ``loss(h, targets)``, the mean of
    -log softmax(z)[target], stable for any logits. Seeded inside, the notebook's random
    state left as it was."""
    with torch.random.fork_rng():
        torch.manual_seed(5)
        return _tied_head(cls)


def _tied_head(cls) -> bool:
    where = "TiedHead"
    V, d = 11, 6
    embedding = nn.Embedding(V, d)
    ok, head = attempt(cls, embedding, where=where)
    if not ok:
        return False
    if not isinstance(head, nn.Module):
        return failed(f"TiedHead should be an nn.Module, got {type(head).__name__}", where)
    h = torch.randn(2, 3, d)
    ok, logits = attempt(head.forward, h, where=where)
    if not ok:
        return False
    if not isinstance(logits, torch.Tensor) or tuple(logits.shape) != (2, 3, V):
        shape = tuple(logits.shape) if isinstance(logits, torch.Tensor) else type(logits).__name__
        return failed(f"for h of shape (2, 3, d_model = {d}) the logits should be (2, 3, V = {V}), got {shape} "
                      "(look at which side of E is transposed)", where)
    own = [p for p in head.parameters() if p is not embedding.weight]
    shared = any(p is embedding.weight for p in head.parameters())
    if not shared and any(tuple(p.shape) in ((V, d), (d, V)) for p in own):
        return failed("the head holds its own (V, d_model) table: a copy of E, not E itself, so training "
                      "one does not train the other (look at what you store)", where)
    biases = [p for p in own if tuple(p.shape) == (V,)]
    if not biases:
        return failed(f"no bias of shape (V,) = ({V},) among the head's parameters: tying shares W, the head keeps "
                      "its own b (look at the head's parameters)", where)
    if biases[0].detach().abs().max() > 0:
        return failed(f"the bias starts at values up to {biases[0].detach().abs().max().item():.2g}, not at zero: a "
                      "random start favours some tokens before any training (look at how b is made)", where)
    extra = sum(p.numel() for p in own)
    if extra != V:
        return failed(f"besides the shared table the head holds {extra} numbers; its own part is the bias, V = {V} "
                      "(look at the head's parameters)", where)
    with torch.no_grad():
        biases[0].copy_(torch.linspace(-1, 1, V))
        expected = h @ embedding.weight.T + biases[0]
        got = head(h)
    if torch.allclose(got, h @ embedding.weight.T, atol=1e-5):
        return failed("the logits do not change when the bias does (look at whether b is added)", where)
    if not torch.allclose(got, expected, atol=1e-5):
        return failed("the logits are not h E^T + b (largest difference "
                      f"{(got - expected).abs().max().item():.2g}; look at the product)", where)
    with torch.no_grad():
        embedding.weight[4] += 1.0
        moved = head(h)
    if torch.allclose(moved, got, atol=1e-6):
        return failed("changing a row of the embedding leaves the logits as they were: the head reads a copy "
                      "(look at what you store)", where)
    if not callable(getattr(head, "loss", None)):
        return failed("the head has no method loss(h, targets) (look at the class: a third method)", where)
    try:
        loss_source = inspect.getsource(type(head).loss)
    except (OSError, TypeError):
        loss_source = ""
    called = [name for name in ("cross_entropy", "log_softmax", "nll_loss") if name in loss_source]
    if called:
        return failed(f"loss calls {called[0]}: the task is to compute log p yourself, with the shift by each row's "
                      "maximum (look at the formula for log p above the cell)", where)
    flat, targets = h.reshape(6, d), torch.tensor([0, 4, 4, 9, 2, 10])          # (N, d_model), (N,)
    ok, loss = attempt(head.loss, flat, targets, where=where)
    if not ok:
        return False
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        return failed("loss should return one number, a tensor of one element (look at the mean)", where)
    with torch.no_grad():
        want = F.cross_entropy(head(flat), targets)
        nll = -torch.log_softmax(head(flat), dim=-1)                             # (N, V)
    if torch.allclose(loss.detach(), nll.gather(1, targets[:, None]).sum(), atol=1e-4):
        return failed("the loss is the sum over the N vectors, not their mean (look at the last step)", where)
    if torch.allclose(loss.detach(), -want, atol=1e-4):
        return failed("the loss has the wrong sign: it is -log p of the right token, a positive number (look at "
                      "the sign)", where)
    if not torch.allclose(loss.detach(), want, atol=1e-4):
        return failed(f"the loss is {loss.item():.4f}, the mean of -log p(target) is {want.item():.4f} (look at which "
                      "entry of each row you take)", where)
    with torch.no_grad():
        big = 300 * flat / flat.norm(dim=-1, keepdim=True)                     # logits of several hundred
        want_big = F.cross_entropy(head(big), targets)
    big_loss = head.loss(big, targets)
    if not torch.isfinite(big_loss).all():
        return failed("the loss is inf or NaN for logits of several hundred: e^z overflows (look at what you "
                      "subtract before exp)", where)
    if not torch.allclose(big_loss.detach(), want_big, rtol=1e-4, atol=1e-3):
        return failed(f"for logits of several hundred the loss is {big_loss.item():.4g}, expected "
                      f"{want_big.item():.4g} (look at how the shift is undone in log p)", where)
    embedding.zero_grad()
    head.loss(flat, targets).backward()
    if embedding.weight.grad is None or embedding.weight.grad.abs().sum() == 0:
        return failed("your loss sends no gradient into the embedding table (look at how the head reads E)", where)
    return passed(f"logits h E^T + b of shape (2, 3, {V}), {V} parameters of its own, a loss equal to "
                  "F.cross_entropy even for logits of several hundred, and its gradient reaches E")




@check
def check_score_std(answer) -> bool:
    """Retrieval quiz (lecture 02): q and k of d_k = 64 features, every entry independent N(0, 1); the standard
    deviation of q . k / sqrt(d_k)?"""
    causes = {8.0: "8 is the standard deviation of q . k itself, a sum of 64 products of variance 1: the division "
                   "by sqrt(d_k) is missing (lecture 02, the scaling)",
              64.0: "64 is the variance of q . k, before the division: a standard deviation is its square root, "
                    "and the division by sqrt(d_k) follows (lecture 02, the scaling)",
              0.125: "0.125 divides by sqrt(d_k) twice: q . k has standard deviation sqrt(d_k) = 8, divided once "
                     "by 8 (lecture 02, the scaling)"}
    return number(answer, 1.0, "1: q . k sums 64 products of variance 1, variance 64; divided by sqrt(64) = 8 the "
                  "scores have standard deviation 1 whatever d_k, the temperature that keeps the softmax soft",
                  rel_tol=0.02, low="too small: q . k has variance d_k (lecture 02, the scaling)",
                  high="too large: q . k has variance d_k (lecture 02, the scaling)", where="lecture 02",
                  name="score_std", wrong=causes, wrong_rel_tol=1e-3)


#: a toy WordPiece vocabulary where the longest match and the shortest one split words differently
_PIECES = {"un", "u", "n", "##n", "##b", "##bel", "##e", "##i", "##ie", "##v", "##va", "##a", "##bly", "##l", "##y",
           "##g", "##d",
           "play", "p", "##lay", "##ing", "##ed", "##s", "cat", "c", "##at", "##t"}
_WORDS = {"unbelievably": ["un", "##bel", "##ie", "##va", "##bly"], "playing": ["play", "##ing"],
          "cats": ["cat", "##s"], "played": ["play", "##ed"], "play": ["play"], "catz": ["[UNK]"],
          "xplay": ["[UNK]"]}


def _split(word: str, vocab, longest: bool = True, mark: str = "##") -> list[str]:
    """WordPiece's split (``longest=True``, ``mark="##"``), or a wrong variant: the shortest match first, or
    continuation pieces looked up without their mark."""
    pieces, start = [], 0
    while start < len(word):
        ends = range(len(word), start, -1) if longest else range(start + 1, len(word) + 1)
        piece = next((p for p in ((word[start:e] if start == 0 else mark + word[start:e]) for e in ends)
                      if p in vocab), None)
        if piece is None:
            return ["[UNK]"]
        pieces.append(piece)
        start += len(piece) - (len(mark) if start else 0)
    return pieces


@check
def check_wordpiece(fn) -> bool:
    """The student's ``wordpiece_split(word, vocab)``: BERT's greedy longest-match-first split of one word into
    pieces of ``vocab`` (``##`` before every piece but the first), or ``["[UNK]"]`` when some part of the word
    matches no piece."""
    where = "wordpiece_split"
    got = {}
    for word in _WORDS:
        ok, pieces = attempt(fn, word, set(_PIECES), where=where)
        if not ok:
            return False
        if not isinstance(pieces, (list, tuple)) or not all(isinstance(p, str) for p in pieces):
            return failed(f"wordpiece_split should return a list of str, got {type(pieces).__name__} for {word!r}",
                          where)
        got[word] = list(pieces)
    for word, want in _WORDS.items():
        have = got[word]
        if have == want:
            continue
        if want == ["[UNK]"]:
            if "[UNK]" in have:
                return failed(f"{word!r} gave {have}: when a part of the word matches no piece, the whole word "
                              "becomes one [UNK] (look at what you return when nothing matches)", where)
            return failed(f"{word!r} gave {have}, but its letter {'z' if 'z' in word else 'x'!r} is no piece: the "
                          "word cannot be spelled and becomes [UNK] (look at the case where no piece matches)", where)
        if have == _split(word, _PIECES, mark=""):
            return failed(f"{word!r} gave {have}, expected {want}: every piece after the first is looked up with "
                          "## before it, the mark of a continuation (look at the continuation pieces)", where)
        if have == _split(word, _PIECES, longest=False):
            return failed(f"{word!r} gave {have}, the shortest pieces first; WordPiece takes the longest piece of "
                          f"the vocabulary at each step, {want} (look at the order in which you try lengths)", where)
        if [p.removeprefix("##") for p in have] == [p.removeprefix("##") for p in want]:
            return failed(f"{word!r} gave {have}, expected {want}: ## marks every piece after the first, and only "
                          "those (look at the continuation pieces)", where)
        return failed(f"{word!r} gave {have}, expected {want} (look at where the next piece starts)", where)
    return passed(f"{len(_WORDS)} words split as BERT's WordPiece does: the longest piece first, ## on every "
                  "continuation, and [UNK] for a word that cannot be spelled")
