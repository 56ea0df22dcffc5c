"""Check every expectation of ``examples/field/`` numerically, without the checker.

For each step of each file the two sides are written again by hand in NumPy (float64, random inputs
of small sizes, fixed seeds) and compared. An original must agree at every step; its corrupted copy
must disagree at the step on its slip's line and agree at every other step. The script also checks
that each corrupted copy differs from its original in exactly the slip's line (besides line 1, the
comment that names the slip), and that the slip's line carries a step. It does not import symattn.

    python benchmarks/field_numeric.py        # one line per file; exit status 1 on any failure
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import tomllib

sys.path.insert(0, str(Path(__file__).resolve().parent))
from field_numeric_more import MORE  # noqa: E402  (the second batch of sources, same contract)

FIELD = Path(__file__).resolve().parent.parent / "examples" / "field"
R = np.random.default_rng


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def agree(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        a, b = np.squeeze(a), np.squeeze(b)
        if a.shape != b.shape:
            return False
    return bool(np.allclose(a, b, rtol=1e-9, atol=1e-10))


# Each file: {line: step}, step(rng, bad) -> (lhs, rhs); bad=True builds the corrupted copy's step.

def bahdanau2015():
    def line12(g, bad):
        n, n2 = 3, 4
        s, h, v = g.normal(size=n), g.normal(size=2 * n), g.normal(size=n2)
        W, U = g.normal(size=(n2, n)), g.normal(size=(n2, 2 * n))
        blocks = np.hstack([U, W] if bad else [W, U])
        return v @ np.tanh(W @ s + U @ h), v @ np.tanh(blocks @ np.concatenate([s, h]))

    def line13(g, bad):
        Tx, n = 5, 3
        e, H = g.normal(size=Tx), g.normal(size=(Tx, 2 * n))
        alpha = np.exp(e) / np.exp(e).sum()
        return alpha @ H, (np.exp(e) @ H) / np.exp(e).sum()
    return {12: line12, 13: line13}


def luong2015():
    def line13(g, bad):
        d = 4
        h, hb, W = g.normal(size=d), g.normal(size=d), g.normal(size=(d, d))
        return h @ W @ hb, hb @ (W if bad else W.T) @ h

    def line14(g, bad):
        d, S = 4, 5
        h, Hb, W = g.normal(size=d), g.normal(size=(S, d)), g.normal(size=(d, d))
        sc = Hb @ W.T @ h                       # score(h_t, hb_s) = h_t^T W_a hb_s, for every s
        a = np.exp(sc) / np.exp(sc).sum()
        return a @ Hb, (np.exp(sc) @ Hb) / np.exp(sc).sum()
    return {13: line13, 14: line14}


def lin2017():
    n, u2, da, r = 6, 4, 3, 2

    def A_of(g):
        H, W1, W2 = g.normal(size=(n, u2)), g.normal(size=(da, u2)), g.normal(size=(r, da))
        return softmax(W2 @ np.tanh(W1 @ H.T), axis=1)

    def line12(g, bad):
        A = A_of(g)
        M = A @ A.T - np.eye(r)
        return np.linalg.norm(M, "fro") ** 2, np.trace(M @ M.T)

    def line13(g, bad):
        A = A_of(g)
        M = A @ A.T - np.eye(r)
        return np.trace(M @ M.T), np.trace(A @ A.T @ A @ A.T) - 2 * np.trace(A @ A.T) + r

    def line14(g, bad):
        A = A_of(g)
        rhs = np.sum((A @ A.T) ** 2) - 2 * np.sum(A ** 2) + (0 if bad else r)
        return np.trace(A @ A.T @ A @ A.T) - 2 * np.trace(A @ A.T) + r, rhs
    return {12: line12, 13: line13, 14: line14}


def parikh2016():
    la, lb, d = 4, 6, 3
    def F(x, W):
        return np.maximum(0, x @ W)       # a feed-forward network (ReLU), applied to rows

    def line12(g, bad):
        a, b, W = g.normal(size=d), g.normal(size=d), g.normal(size=(d, d))
        return F(a, W) @ F(b, W), F(b, W) @ F(a, W)

    def line13(g, bad):
        e = g.normal(size=(la, lb))
        w = np.exp(e) / np.exp(e).sum(axis=1, keepdims=True)      # w[i, j]
        j = 2
        return (w[:, j].sum() if bad else w[1, :].sum()), 1.0

    def line14(g, bad):
        e, A = g.normal(size=(la, lb)), g.normal(size=(la, d))
        j = 1
        alpha = sum(np.exp(e[i, j]) / np.exp(e[:, j]).sum() * A[i] for i in range(la))
        return alpha, (np.exp(e[:, j]) @ A) / np.exp(e[:, j]).sum()
    return {12: line12, 13: line13, 14: line14}


def shaw2018():
    n, dx, dz, kc = 5, 4, 3, 2

    def setup(g):
        X = g.normal(size=(n, dx))
        WQ, WK, WV = (g.normal(size=(dx, dz)) for _ in range(3))
        wK, wV = g.normal(size=(2 * kc + 1, dz)), g.normal(size=(2 * kc + 1, dz))
        def clip(x):
            return max(-kc, min(kc, x))
        aK = np.array([[wK[clip(j - i) + kc] for j in range(n)] for i in range(n)])
        aV = np.array([[wV[clip(j - i) + kc] for j in range(n)] for i in range(n)])
        return X, WQ, WK, WV, aK, aV

    def line11(g, bad):
        X, WQ, WK, WV, aK, aV = setup(g)
        i, j = 1, 3
        lhs = X[i] @ WQ @ (X[j] @ WK + aK[i, j]) / np.sqrt(dz)
        if bad:
            rhs = X[i] @ WQ @ (X[j] @ WK) / np.sqrt(dz) + X[i] @ WQ @ aK[i, j]
        else:
            rhs = (X[i] @ WQ @ (X[j] @ WK) + X[i] @ WQ @ aK[i, j]) / np.sqrt(dz)
        return lhs, rhs

    def line12(g, bad):
        X, WQ, WK, WV, aK, aV = setup(g)
        i = 2
        e = np.array([X[i] @ WQ @ (X[j] @ WK + aK[i, j]) / np.sqrt(dz) for j in range(n)])
        al = np.exp(e) / np.exp(e).sum()
        lhs = sum(al[j] * (X[j] @ WV + aV[i, j]) for j in range(n))
        rhs = sum(al[j] * X[j] @ WV for j in range(n)) + sum(al[j] * aV[i, j] for j in range(n))
        return lhs, rhs
    return {11: line11, 12: line12}


def dai2019():
    d = 4

    def line8(g, bad):
        Ei, Ej, Ui, Uj = (g.normal(size=d) for _ in range(4))
        Wq, Wk = g.normal(size=(d, d)), g.normal(size=(d, d))
        terms = [Ei @ Wq.T @ Wk @ Ej, Ei @ Wq.T @ Wk @ Uj, Ui @ Wq.T @ Wk @ Ej, Ui @ Wq.T @ Wk @ Uj]
        if bad:
            del terms[2]
        return (Wq @ (Ei + Ui)) @ Wk @ (Ej + Uj), sum(terms)

    def line13(g, bad):
        Ei, Ej, R, u, v = (g.normal(size=d) for _ in range(5))
        Wq, WkE, WkR = (g.normal(size=(d, d)) for _ in range(3))
        lhs = Ei @ Wq.T @ WkE @ Ej + Ei @ Wq.T @ WkR @ R + u @ WkE @ Ej + v @ WkR @ R
        return lhs, (Wq @ Ei + u) @ WkE @ Ej + (Wq @ Ei + v) @ WkR @ R
    return {8: line8, 13: line13}


def press2022():
    def line8(g, bad):
        i, d = 6, 3
        q, K, m = g.normal(size=d), g.normal(size=(i, d)), 0.5
        left = np.arange(-(i - 1), 1)                      # [-(i-1), ..., -1, 0]
        right = np.arange(i - 1, -1, -1) if bad else np.arange(0, i)
        return softmax(K @ q + m * left), softmax(K @ q + m * right)

    def line10(g, bad):
        h, n = 3, 8
        return 2.0 ** (-8 * h / n), (2.0 ** (-8 / n)) ** h
    return {8: line8, 10: line10}


def su2021_complex():
    def setup(g):
        xm, xn = g.normal(size=2), g.normal(size=2)
        Wq, Wk = g.normal(size=(2, 2)), g.normal(size=(2, 2))
        return xm, xn, Wq, Wk, 0.7, 5, 2

    def c(v):
        return complex(v[0], v[1])
    def rot(a):
        return np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])

    def line9(g, bad):
        xm, xn, Wq, Wk, th, m, n = setup(g)
        fq, fk = rot(m * th) @ Wq @ xm, rot(n * th) @ Wk @ xn      # eq. (13), as real 2-vectors
        return fq @ fk, (c(fq) * np.conj(c(fk))).real

    def line10(g, bad):
        xm, xn, Wq, Wk, th, m, n = setup(g)
        fq, fk = c(Wq @ xm) * np.exp(1j * m * th), c(Wk @ xn) * np.exp(1j * n * th)
        rel = (n - m) if bad else (m - n)
        return (fq * np.conj(fk)).real, (c(Wq @ xm) * np.conj(c(Wk @ xn)) * np.exp(1j * rel * th)).real
    return {9: line9, 10: line10}


def choromanski2021():
    L, d, r = 5, 3, 4

    def line11(g, bad):
        Qp, Kp, V = g.random(size=(L, r)), g.random(size=(L, r)), g.normal(size=(L, d))
        A = Qp @ Kp.T
        D = np.diag(A @ np.ones(L))
        return np.linalg.inv(D) @ (A @ V), np.linalg.inv(D) @ (Qp @ (Kp.T @ V))

    def line12(g, bad):
        Qp, Kp = g.random(size=(L, r)), g.random(size=(L, r))
        return np.diag(Qp @ Kp.T @ np.ones(L)), np.diag(Qp @ (Kp.T @ np.ones(L)))

    def line16(g, bad):
        x, y = g.normal(size=d), g.normal(size=d)
        kg = np.exp(-np.sum((x - y) ** 2) / 2)
        ey = np.exp(np.sum(y ** 2)) if bad else np.exp(np.sum(y ** 2) / 2)
        return np.exp(x @ y), np.exp(np.sum(x ** 2) / 2) * kg * ey
    return {11: line11, 12: line12, 16: line16}


def wang2020():
    n, dm, dk, dv, k = 6, 4, 3, 2, 3

    def setup(g):
        Q, K, V = (g.normal(size=(n, dm)) for _ in range(3))
        WQ, WK, WV = g.normal(size=(dm, dk)), g.normal(size=(dm, dk)), g.normal(size=(dm, dv))
        E, F = g.normal(size=(k, n)), g.normal(size=(k, n))
        return Q, K, V, WQ, WK, WV, E, F

    def att(q, kk, v):
        return softmax(q @ kk.T / np.sqrt(q.shape[1]), axis=1) @ v

    def line9(g, bad):
        Q, K, V, WQ, WK, WV, E, F = setup(g)
        return att(Q @ WQ, E @ K @ WK, F @ V @ WV), softmax(Q @ WQ @ (E @ K @ WK).T / np.sqrt(dk), axis=1) @ (F @ V @ WV)  # noqa: E501

    def line10(g, bad):
        Q, K, V, WQ, WK, WV, E, F = setup(g)
        lhs = softmax(Q @ WQ @ (E @ K @ WK).T / np.sqrt(dk), axis=1) @ (F @ V @ WV)
        P, Pv = (F, E) if bad else (E, F)
        return lhs, softmax(Q @ WQ @ WK.T @ K.T @ P.T / np.sqrt(dk), axis=1) @ Pv @ V @ WV
    return {9: line9, 10: line10}


def kitaev2020():
    l, dk = 6, 3

    def setup(g):
        return g.normal(size=(l, dk)), g.normal(size=(l, dk)), g.normal(size=(l, dk))

    def o_def(q, k, v, i):                 # positions 0..l-1; P_i = {j : i >= j}
        P = range(i + 1)
        z = np.log(sum(np.exp(q[i] @ k[j]) for j in P))
        return sum(np.exp(q[i] @ k[j] - z) * v[j] for j in P)

    def line11(g, bad):
        q, k, v = setup(g)
        i = 3
        P = range(i + 1)
        return o_def(q, k, v, i), sum(np.exp(q[i] @ k[j]) * v[j] for j in P) / sum(np.exp(q[i] @ k[j]) for j in P)

    def line12(g, bad):
        q, k, v = setup(g)
        i = 3
        P = range(i + 1)
        z = np.log(sum(np.exp(q[i] @ k[j]) for j in P))
        def m(j):
            return 0.0 if j in P else np.inf
        return o_def(q, k, v, i), sum(np.exp(q[i] @ k[j] - m(j) - z) * v[j] for j in range(l))

    def line17(g, bad):
        q = g.normal(size=(l, dk))
        i, j = 1, 4
        kj = q[j] / np.linalg.norm(q[j])
        return q[i] @ kj, q[i] @ q[j] / np.linalg.norm(q[i] if bad else q[j])
    return {11: line11, 12: line12, 17: line17}


def beltagy2020():
    def line10(g, bad):
        n, dk, w = 9, 3, 4
        Q, K, V = (g.normal(size=(n, dk)) for _ in range(3))
        I = np.arange(1, n + 1)
        M = np.where(np.abs(I[:, None] - I[None, :]) <= w // 2, 0.0, -np.inf)
        full = softmax(Q @ K.T / np.sqrt(dk) + M, axis=1) @ V
        lhs, rhs = [], []
        for i in range(1, n + 1):
            lo, hi = max(1, i - w // 2), min(n, i + w // 2)
            if bad:
                hi = i
            Ks, Vs = K[lo - 1:hi], V[lo - 1:hi]
            lhs.append(full[i - 1])
            rhs.append(softmax(Q[i - 1] @ Ks.T / np.sqrt(dk)) @ Vs)
        return np.array(lhs), np.array(rhs)
    return {10: line10}


def child2019():
    def line10(g, bad):
        n, d = 7, 3
        X = g.normal(size=(n, d))                # rows x_i
        Wq, Wk, Wv = (g.normal(size=(d, d)) for _ in range(3))
        i, l = 5, 3
        S = [j for j in range(i + 1) if (i - j) % l == 0]             # the strided set A^(2)_i, j <= i
        KS, VS = np.array([Wk @ X[j] for j in S]), np.array([Wv @ X[j] for j in S])
        lhs = softmax((Wq @ X[i]) @ KS.T / np.sqrt(d)) @ VS
        sc = np.array([(Wq @ X[i]) @ Wk @ X[j] / np.sqrt(d) for j in S])
        num_sc = sc * np.sqrt(d) if bad else sc
        rhs = sum(np.exp(num_sc[a]) * Wv @ X[j] for a, j in enumerate(S)) / np.exp(sc).sum()
        return lhs, rhs
    return {10: line10}


def tsai2019():
    N, d, dk, dv = 5, 4, 3, 2

    def line11(g, bad):
        xq, Xk = g.normal(size=d), g.normal(size=(N, d))
        Wq, Wk, Wv = g.normal(size=(d, dk)), g.normal(size=(d, dk)), g.normal(size=(d, dv))
        def kern(a, b):
            return np.exp((a @ Wq) @ (b @ Wk) / np.sqrt(dk))
        Z = sum(kern(xq, b) for b in Xk)
        lhs = sum(kern(xq, b) / Z * (b @ Wv) for b in Xk)
        return lhs, softmax(xq @ Wq @ (Xk @ Wk).T / np.sqrt(dk)) @ Xk @ Wv

    def line15(g, bad):
        fq, fk, tq, tk = (g.normal(size=d) for _ in range(4))
        WF, WT = g.normal(size=(d, dk)), g.normal(size=(d, dk))
        a, b = (fq @ WF) @ (fk @ WF), (tq @ WT) @ (tk @ WT)
        lhs = np.exp(a / np.sqrt(dk)) * np.exp(b / np.sqrt(dk))
        return lhs, (np.exp(a / np.sqrt(dk) + b) if bad else np.exp((a + b) / np.sqrt(dk)))
    return {11: line11, 15: line15}


def ramsauer2021():
    d, N = 3, 5

    def E(X, xi, beta):
        lse = np.log(np.sum(np.exp(beta * (X.T @ xi)))) / beta
        return -lse + 0.5 * xi @ xi + np.log(N) / beta + 0.5 * 1.3 ** 2

    def grad(X, xi, beta, h=1e-6):
        return np.array([(E(X, xi + h * e, beta) - E(X, xi - h * e, beta)) / (2 * h) for e in np.eye(d)])

    def line9(g, bad):
        X, xi, beta = g.normal(size=(d, N)), g.normal(size=d), 0.8
        rhs = -X @ softmax((1 if bad else beta) * X.T @ xi) + xi
        gr = grad(X, xi, beta)
        return (rhs if np.allclose(gr, rhs, atol=1e-7) else gr), rhs    # central differences, to 1e-7

    def line10(g, bad):
        X, xi, beta = g.normal(size=(d, N)), g.normal(size=d), 0.8
        gr_exact = -X @ softmax(beta * X.T @ xi) + xi
        assert np.allclose(grad(X, xi, beta), gr_exact, atol=1e-7)
        return xi - gr_exact, X @ softmax(beta * X.T @ xi)

    def line15(g, bad):
        S, dy, dr, dk, dv = 4, 3, 2, 3, 2
        Y, Rm = g.normal(size=(N, dy)), g.normal(size=(S, dr))
        WQ, WK, WV = g.normal(size=(dr, dk)), g.normal(size=(dy, dk)), g.normal(size=(dk, dv))
        Q, K, V = Rm @ WQ, Y @ WK, Y @ WK @ WV
        lhs = softmax(Rm @ WQ @ WK.T @ Y.T / np.sqrt(dk), axis=1) @ Y @ WK @ WV
        return lhs, softmax(Q @ K.T / np.sqrt(dk), axis=1) @ V
    return {9: line9, 10: line10, 15: line15}


def elhage2021_one_layer():
    nc, dm, nv = 3, 4, 5

    def line10(g, bad):
        WE, WU = g.normal(size=(dm, nv)), g.normal(size=(nv, dm))
        As = [softmax(g.normal(size=(nc, nc)), axis=0) for _ in range(2)]
        OV = [g.normal(size=(dm, dm)) for _ in range(2)]
        I = np.eye(nc)
        mid = np.eye(nc * dm) + sum(np.kron(A, W) for A, W in zip(As, OV))
        lhs = np.kron(I, WU) @ mid @ np.kron(I, WE)
        rhs = sum(np.kron(A, WU @ W @ WE) for A, W in zip(As, OV))
        return lhs, (rhs if bad else np.kron(I, WU @ WE) + rhs)

    def line13(g, bad):
        A1, A2 = g.normal(size=(nc, nc)), g.normal(size=(nc, nc))
        W1, W2 = g.normal(size=(dm, dm)), g.normal(size=(dm, dm))
        return np.kron(A2, W2) @ np.kron(A1, W1), np.kron(A2 @ A1, W2 @ W1)
    return {10: line10, 13: line13}


def dao2024():
    T, N = 6, 3

    def setup(g):
        return g.normal(size=(T, N)), g.normal(size=(T, N)), g.normal(size=T), g.uniform(0.2, 1.0, size=T)

    def run(B, C, x, a):
        h, y = np.zeros(N), []
        for t in range(T):
            h = a[t] * h + B[t] * x[t]
            y.append(C[t] @ h)
        return np.array(y)

    def L_of(a):
        L = np.zeros((T, T))
        for t in range(T):
            for s in range(t + 1):
                L[t, s] = np.prod(a[s + 1:t + 1])      # a_t ... a_{s+1}; 1 when s = t
        return L

    def line10(g, bad):
        B, C, x, a = setup(g)
        L = L_of(a)
        return run(B, C, x, a), np.array([sum(C[t] @ (L[t, s] * B[s]) * x[s] for s in range(t + 1)) for t in range(T)])

    def line11(g, bad):
        B, C, x, a = setup(g)
        L = L_of(a)
        return run(B, C, x, a), (L * ((B @ C.T) if bad else (C @ B.T))) @ x
    return {10: line10, 11: line11}


def sun2023():
    n_, d, gam = 6, 3, 0.9

    def setup(g):
        return (g.normal(size=(n_, d)) for _ in range(3))

    def states(K, V):
        S, out = np.zeros((d, d)), []
        for n in range(n_):
            S = gam * S + np.outer(K[n], V[n])
            out.append(S.copy())
        return out

    def line11(g, bad):
        Q, K, V = setup(g)
        Ss = states(K, V)
        n = 4  # 0-based position n (the file counts from 1)
        e = (lambda m: gam ** (m - n)) if bad else (lambda m: gam ** (n - m))
        return Q[n] @ Ss[n], sum(e(m) * (Q[n] @ K[m]) * V[m] for m in range(n + 1))

    def line12(g, bad):
        Q, K, V = setup(g)
        n = 4
        I = np.arange(n_)
        D = np.where(I[:, None] >= I[None, :], gam ** (I[:, None] - I[None, :]).clip(min=0), 0.0)
        return sum(gam ** (n - m) * (Q[n] @ K[m]) * V[m] for m in range(n + 1)), ((Q @ K.T * D) @ V)[n]
    return {11: line11, 12: line12}


def peng2023():
    T, d = 6, 3

    def setup(g):
        return g.uniform(0.1, 1.0, size=d), g.normal(size=d), g.normal(size=(T + 1, d)), g.normal(size=(T + 1, d))

    def rec(w, k, v):               # a[t], b[t] for t = 0..T (k, v indexed 1..T)
        a, b = [np.zeros(d)], [np.zeros(d)]
        for t in range(1, T + 1):
            a.append(np.exp(-w) * a[-1] + np.exp(k[t]) * v[t])
            b.append(np.exp(-w) * b[-1] + np.exp(k[t]))
        return a, b

    def line10(g, bad):
        w, u, k, v = setup(g)
        a, b = rec(w, k, v)
        return (np.array([a[t - 1] for t in range(1, T + 1)]),
                np.array([sum((np.exp(-(t - 1 - i) * w + k[i]) * v[i] for i in range(1, t)), np.zeros(d)) for t in range(1, T + 1)]))  # noqa: E501

    def line11(g, bad):
        w, u, k, v = setup(g)
        a, b = rec(w, k, v)
        sh = 0 if bad else 1
        return (np.array([b[t - 1] for t in range(1, T + 1)]),
                np.array([sum((np.exp(-(t - sh - i) * w + k[i]) for i in range(1, t)), np.zeros(d)) for t in range(1, T + 1)]))  # noqa: E501

    def line12(g, bad):
        w, u, k, v = setup(g)
        a, b = rec(w, k, v)
        def wkv(t):
            num = sum((np.exp(-(t - 1 - i) * w + k[i]) * v[i] for i in range(1, t)), np.zeros(d)) + np.exp(u + k[t]) * v[t]  # noqa: E501
            den = sum((np.exp(-(t - 1 - i) * w + k[i]) for i in range(1, t)), np.zeros(d)) + np.exp(u + k[t])
            return num / den
        return (np.array([wkv(t) for t in range(1, T + 1)]),
                np.array([(a[t - 1] + np.exp(u + k[t]) * v[t]) / (b[t - 1] + np.exp(u + k[t])) for t in range(1, T + 1)]))  # noqa: E501
    return {10: line10, 11: line11, 12: line12}


def yang2024():
    L, dk, dv = 5, 3, 2

    def setup(g):
        return (g.normal(size=(L, dk)), g.normal(size=(L, dk)), g.normal(size=(L, dv)), g.uniform(0.3, 1.0, size=(L, dk)))  # noqa: E501

    def states(K, V, al):
        S, out = np.zeros((dk, dv)), []
        for t in range(L):
            S = np.outer(al[t], np.ones(dv)) * S + np.outer(K[t], V[t])
            out.append(S.copy())
        return out

    def line11(g, bad):
        S, al = g.normal(size=(dk, dv)), g.uniform(0.3, 1.0, size=dk)
        return np.outer(al, np.ones(dv)) * S, np.diag(al) @ S

    def line12(g, bad):
        Q, K, V, al = setup(g)
        Ss = states(K, V, al)
        B = np.cumprod(al, axis=0)
        t = 3
        return Q[t] @ Ss[t], sum(((Q[t] * B[t]) @ (K[i] / B[i])) * V[i] for i in range(t + 1))

    def line13(g, bad):
        Q, K, V, al = setup(g)
        Ss = states(K, V, al)
        B = np.cumprod(al, axis=0)
        O = np.array([Q[t] @ Ss[t] for t in range(L)])
        M = np.tril(np.ones((L, L)))
        Kt = K * B if bad else K / B
        return O, (((Q * B) @ Kt.T) * M) @ V
    return {11: line11, 12: line12, 13: line13}


def rabe2021():
    n, d, c = 7, 3, 3

    def setup(g):
        q, K, V = g.normal(size=d), g.normal(size=(n, d)), g.normal(size=(n, d))
        s = K @ q
        return s, V, s.max()

    def line9(g, bad):
        s, V, m = setup(g)
        sm = np.exp(s) / np.exp(s).sum()
        return sm @ V, (np.exp(s) @ V) / np.exp(s).sum()

    def line10(g, bad):
        s, V, m = setup(g)
        return (np.exp(s) @ V) / np.exp(s).sum(), (np.exp(s - m) @ V) / np.exp(s - m).sum()

    def line11(g, bad):
        s, V, m = setup(g)
        e = np.exp(s - m)
        lo = c - 1 if bad else c                         # 0-based start of the second chunk
        num = e[:c] @ V[:c] + e[lo:] @ V[lo:]
        return (e @ V) / e.sum(), num / (e[:c].sum() + e[c:].sum())
    return {9: line9, 10: line10, 11: line11}


def xiong2020():
    n, d, dff, Lyr = 4, 6, 5, 3

    def LN(x):
        return (x - x.mean(axis=-1, keepdims=True)) / x.std(axis=-1, keepdims=True)

    def layer_params(g):
        return dict(WQ=g.normal(size=(d, d)), WK=g.normal(size=(d, d)), WV=g.normal(size=(d, d)),
                    W1=g.normal(size=(d, dff)), b1=g.normal(size=dff), W2=g.normal(size=(dff, d)), b2=g.normal(size=d))

    def layer(x, p):
        x1 = LN(x)
        x2 = softmax((x1 @ p["WQ"]) @ (x1 @ p["WK"]).T / np.sqrt(d), axis=1) @ x1 @ p["WV"]
        x3 = x + x2
        x5 = np.maximum(0, LN(x3) @ p["W1"] + p["b1"]) @ p["W2"] + p["b2"]
        return x5 + x3, x2, x5

    def line17(g, bad):
        x, p = g.normal(size=(n, d)), layer_params(g)
        nxt, x2, x5 = layer(x, p)
        return nxt, x + x2 + x5

    def line18(g, bad):
        x = x1 = g.normal(size=(n, d))
        acc = np.zeros((n, d))
        for _ in range(Lyr):
            x, x2, x5 = layer(x, layer_params(g))
            acc = acc + (x5 if bad else x2 + x5)
        return x, x1 + acc
    return {17: line17, 18: line18}


def zhang2019():
    n = 5
    def rms(a):
        return np.sqrt(np.mean(a ** 2))

    def line8(g, bad):
        a = g.normal(size=n)
        return rms(a), np.linalg.norm(a) / (n if bad else np.sqrt(n))

    def line9(g, bad):
        a, dl = g.normal(size=n), 2.7
        return rms(dl * a), dl * rms(a)

    def line10(g, bad):
        a, gg, dl = g.normal(size=n), g.normal(size=n), 2.7
        return dl * a / rms(dl * a) * gg, a / rms(a) * gg
    return {8: line8, 9: line9, 10: line10}


def ba2016():
    H = 6

    def line9(g, bad):
        a = g.normal(size=H)
        mu = a.mean()
        return np.mean((a - mu) ** 2), np.mean(a ** 2) - mu ** 2

    def line10(g, bad):
        a, dl, gm = g.normal(size=H), 1.7, 0.4
        return np.mean(dl * a + gm), dl * a.mean() + (0 if bad else gm)

    def line11(g, bad):
        a, gg, dl, gm = g.normal(size=H), g.normal(size=H), 1.7, 0.4
        mu, sg = a.mean(), a.std()
        return gg / (dl * sg) * (dl * a + gm - (dl * mu + gm)), gg / sg * (a - mu)
    return {9: line9, 10: line10, 11: line11}


def shazeer2020():
    dm, dff = 4, 6

    def setup(g):
        return g.normal(size=dm), g.normal(size=(dm, dff)), g.normal(size=(dm, dff)), g.normal(size=(dff, dm))

    def swish(z):
        return z * sigmoid(z)
    def glu(x, W, V):
        return sigmoid(x @ W) * (x @ V)

    def line10(g, bad):
        x, W, V, W2 = setup(g)
        return (swish(x @ W) * (x @ V)) @ W2, ((x @ W) * sigmoid(x @ W) * (x @ V)) @ W2

    def line11(g, bad):
        x, W, V, W2 = setup(g)
        return ((x @ W) * sigmoid(x @ W) * (x @ V)) @ W2, ((x @ W) * (glu(x, V, W) if bad else glu(x, W, V))) @ W2
    return {10: line10, 11: line11}


def deepseek2024():
    d, dc, dh, nh, dR = 6, 3, 2, 3, 2

    def setup(g):
        h, hj = g.normal(size=d), g.normal(size=d)
        WDKV, WUK, WUV, WQ = g.normal(size=(dc, d)), g.normal(size=(dh * nh, dc)), g.normal(size=(dh * nh, dc)), g.normal(size=(dh * nh, d))  # noqa: E501
        return h, hj, WDKV, WUK, WUV, WQ

    def line11(g, bad):
        h, hj, WDKV, WUK, WUV, WQ = setup(g)
        i = 1
        sl = slice(i * dh, (i + 1) * dh)
        cj = WDKV @ hj
        qC, kC = (WQ @ h)[sl], (WUK @ cj)[sl]
        return qC @ kC, h @ WQ[sl].T @ WUK[sl] @ cj

    def line12(g, bad):
        qC, kC, qR, kR = g.normal(size=dh), g.normal(size=dh), g.normal(size=dR), g.normal(size=dR)
        return np.concatenate([qC, qR]) @ np.concatenate([kC, kR]), qC @ kC + (0 if bad else qR @ kR)

    def line13(g, bad):
        h, hj, WDKV, WUK, WUV, WQ = setup(g)
        i = 2
        WO = g.normal(size=(d, dh * nh))
        sl = slice(i * dh, (i + 1) * dh)
        cj = WDKV @ hj
        return WO[:, sl] @ (WUV @ cj)[sl], WO[:, sl] @ WUV[sl] @ cj
    return {11: line11, 12: line12, 13: line13}


FILES = {f.__name__: f for f in [
    bahdanau2015, luong2015, lin2017, parikh2016, shaw2018, dai2019, press2022, su2021_complex,
    choromanski2021, wang2020, kitaev2020, beltagy2020, child2019, tsai2019, ramsauer2021,
    elhage2021_one_layer, dao2024, sun2023, peng2023, yang2024, rabe2021, xiong2020, zhang2019,
    ba2016, shazeer2020, deepseek2024] + MORE}


def diff_lines(name: str) -> list[int]:
    good = (FIELD / f"{name}.tex").read_text(encoding="utf-8").split("\n")
    bad = (FIELD / f"{name}_corrupted.tex").read_text(encoding="utf-8").split("\n")
    if len(good) != len(bad):
        return [-1]
    return [k + 1 for k, (a, b) in enumerate(zip(good, bad)) if a != b and k > 0]


def main() -> int:
    with open(FIELD / "EXPECTED.toml", "rb") as f:
        exp = tomllib.load(f)
    failures = 0
    names = sorted({Path(n).stem.removesuffix("_corrupted") for n in exp})
    missing = [n for n in names if n not in FILES] + [n for n in FILES if n not in names]
    for n in missing:
        print(f"{n}: no numeric steps, or not in EXPECTED.toml  FAIL")
        failures += 1
    for name in sorted(FILES):
        steps = FILES[name]()
        for corrupted in (False, True):
            fname = f"{name}_corrupted.tex" if corrupted else f"{name}.tex"
            e = exp.get(fname, {})
            slip = e.get("slip_line") if corrupted else None
            problems, shown = [], []
            if corrupted:
                dl = diff_lines(name)
                if dl != [slip]:
                    problems.append(f"differs from the original in lines {dl}, expected [{slip}]")
                if slip not in steps:
                    problems.append(f"no step on the slip's line {slip}")
            elif not e.get("passes", False):
                problems.append("EXPECTED.toml does not say it passes")
            for line in sorted(steps):
                bad = corrupted and line == slip
                lhs, rhs = steps[line](R(1000 + line), bad)
                ok = agree(lhs, rhs)
                shown.append(f"{line}:{'=' if ok else '≠'}")
                if ok == bad:
                    problems.append(f"step at line {line} {'agrees' if ok else 'disagrees'}")
            verdict = "ok" if not problems else "FAIL: " + "; ".join(problems)
            failures += bool(problems)
            print(f"{fname:34s} {' '.join(shown):28s} {verdict}")
    print(f"\n{2 * len(FILES)} files, {failures} failing expectations")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
