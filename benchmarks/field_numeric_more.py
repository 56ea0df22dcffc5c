"""Numeric steps for the second batch of ``examples/field/`` sources (imported by ``field_numeric.py``).

Same contract as there: each function returns ``{line: step}``, ``step(rng, bad) -> (lhs, rhs)``, with
``bad=True`` building the corrupted copy's step. NumPy only; it does not import symattn.
"""

from __future__ import annotations

import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def he2021():
    N, d, k = 5, 4, 3

    def setup(g):
        H, P = g.normal(size=(N, d)), g.normal(size=(2 * k, d))
        Wqc, Wkc, Wqr, Wkr = (g.normal(size=(d, d)) for _ in range(4))
        return H, P, Wqc, Wkc, Wqr, Wkr

    def delta(i, j):
        return int(np.clip(i - j + k, 0, 2 * k - 1))

    def line11(g, bad):
        H, P, Wqc, Wkc, Wqr, Wkr = setup(g)
        Qc, Kc, Qr, Kr = H @ Wqc, H @ Wkc, P @ Wqr, P @ Wkr
        i, j = 1, 4
        lhs = Qc[i] @ Kc[j] + Qc[i] @ Kr[delta(i, j)] + Kc[j] @ Qr[delta(j, i)]
        third = H[j] @ Wkc.T @ Wqr @ P[delta(j, i)] if bad else H[j] @ Wkc @ Wqr.T @ P[delta(j, i)]
        return lhs, H[i] @ Wqc @ Wkc.T @ H[j] + H[i] @ Wqc @ Wkr.T @ P[delta(i, j)] + third

    def line14(g, bad):
        H, P, Wqc, Wkc, Wqr, Wkr = setup(g)
        return (H @ Wqc) @ (H @ Wkc).T, H @ Wqc @ Wkc.T @ H.T
    return {11: line11, 14: line14}


def qin2022():
    N, d, M = 6, 3, 6

    def setup(g):
        Qp, Kp = np.maximum(0, g.normal(size=(N, d))), np.maximum(0, g.normal(size=(N, d)))
        return Qp, Kp, 2, 5                      # positions i = 2, j = 5 (1-based)

    def c(x):
        return np.cos(np.pi * x / (2 * M))

    def s(x):
        return np.sin(np.pi * x / (2 * M))

    def line11(g, bad):
        Qp, Kp, i, j = setup(g)
        qk = Qp[i - 1] @ Kp[j - 1]
        return qk * np.cos(np.pi / 2 * (i - j) / M), qk * (c(i) * c(j) + (-1 if bad else 1) * s(i) * s(j))

    def line12(g, bad):
        Qp, Kp, i, j = setup(g)
        qk = Qp[i - 1] @ Kp[j - 1]
        return qk * (c(i) * c(j) + s(i) * s(j)), (Qp[i - 1] * c(i)) @ (Kp[j - 1] * c(j)) + (Qp[i - 1] * s(i)) @ (Kp[j - 1] * s(j))  # noqa: E501
    return {11: line11, 12: line12}


def xiong2021():
    n, m, dq, dv = 6, 3, 4, 2

    def line11(g, bad):
        Q, K, V = g.normal(size=(n, dq)), g.normal(size=(n, dq)), g.normal(size=(n, dv))
        Qt, Kt = g.normal(size=(m, dq)), g.normal(size=(m, dq))
        F = softmax(Q @ Kt.T / np.sqrt(dq), axis=1)
        A = softmax(Qt @ Kt.T / np.sqrt(dq), axis=1)
        B = softmax(Qt @ K.T / np.sqrt(dq), axis=1)
        Ap = np.linalg.pinv(A)
        return (F @ Ap @ B) @ V, F @ (Ap @ (B @ V))

    def line12(g, bad):
        q = g.normal(size=(n, dq))
        qt = np.array([q[j * n // m:(j + 1) * n // m].sum(axis=0) / (n / m) for j in range(m)])
        return qt.sum(axis=0), (n / m if bad else m / n) * q.sum(axis=0)
    return {11: line11, 12: line12}


def tay2021():
    l, d, k = 5, 3, 2

    def setup(g):
        return g.normal(size=(l, d)), g.normal(size=(l, l)), g.normal(size=(d, d)), g.normal(size=(1, d))

    def line10(g, bad):
        X, R, W, b = setup(g)
        def G(Z):
            return Z @ W + np.ones((l, 1)) @ b
        return softmax(R, axis=1) @ G(X), softmax(R, axis=1) @ (X @ W + np.ones((l, 1)) @ b)

    def line11(g, bad):
        X, R, W, b = setup(g)
        rhs = softmax(R, axis=1) @ X @ W + (0 if bad else np.ones((l, 1)) @ b)
        return softmax(R, axis=1) @ (X @ W + np.ones((l, 1)) @ b), rhs

    def line14(g, bad):
        X, R, W, b = setup(g)
        R1, R2 = g.normal(size=(l, k)), g.normal(size=(l, k))
        S = softmax(R1 @ R2.T, axis=1)
        return S @ (X @ W + np.ones((l, 1)) @ b), S @ X @ W + np.ones((l, 1)) @ b
    return {10: line10, 11: line11, 14: line14}


def jaegle2021():
    N, M, D, C, F = 3, 6, 4, 5, 2

    def setup(g):
        L, X = g.normal(size=(N, D)), g.normal(size=(M, C))
        WQ, WK, WV = g.normal(size=(D, F)), g.normal(size=(C, F)), g.normal(size=(C, F))
        return L, X, WQ, WK, WV

    def line10(g, bad):
        L, X, WQ, WK, WV = setup(g)
        Q, K, V = L @ WQ, X @ WK, X @ WV
        sc = L @ WQ @ WK.T @ X.T
        return softmax(Q @ K.T / np.sqrt(F), axis=1) @ V, softmax(sc if bad else sc / np.sqrt(F), axis=1) @ X @ WV

    def line11(g, bad):
        L, X, WQ, WK, WV = setup(g)
        Q, K, V = L @ WQ, X @ WK, X @ WV
        n = 1
        e = np.exp(K @ Q[n] / np.sqrt(F))
        return (softmax(Q @ K.T / np.sqrt(F), axis=1) @ V)[n], sum(e[m] / e.sum() * V[m] for m in range(M))
    return {10: line10, 11: line11}


def dosovitskiy2021():
    N, P2C, D, Dh = 4, 6, 5, 3

    def line11(g, bad):
        xc, xp, E, Epos = g.normal(size=D), g.normal(size=(N, P2C)), g.normal(size=(P2C, D)), g.normal(size=(N + 1, D))
        z0 = np.vstack([xc[None, :], xp @ E]) + Epos
        return z0[0], (xc if bad else xc + Epos[0])

    def line12(g, bad):
        z, U = g.normal(size=(N + 1, D)), g.normal(size=(D, 3 * Dh))
        q, k, v = np.split(z @ U, 3, axis=1)
        return (softmax(q @ k.T / np.sqrt(Dh), axis=1) @ v)[0], softmax(q[0] @ k.T / np.sqrt(Dh)) @ v
    return {11: line11, 12: line12}


def liu2021():
    h, w, C, M = 8, 12, 5, 4

    def line8(g, bad):
        return 4 * h * w * C ** 2 + 2 * M ** 2 * h * w * C, h * w / M ** 2 * (4 * M ** 2 * C ** 2 + 2 * (M ** 2 if bad else (M ** 2) ** 2) * C)  # noqa: E501

    def line9(g, bad):
        msa, wmsa = 4 * h * w * C ** 2 + 2 * (h * w) ** 2 * C, 4 * h * w * C ** 2 + 2 * M ** 2 * h * w * C
        return msa - wmsa, 2 * h * w * C * (h * w - M ** 2)
    return {8: line8, 9: line9}


def jiang2023():
    n, d, W, i = 9, 3, 3, 6               # i is 1-based, W < i <= n

    def setup(g):
        return g.normal(size=(n, d)), g.normal(size=(n, d)), g.normal(size=(n, d))

    def masked(q, k, v):
        J = np.arange(1, n + 1)
        Mrow = np.where((i - W <= J) & (J <= i), 0.0, -np.inf)
        a = np.exp(k @ q[i - 1] / np.sqrt(d) + Mrow)
        return (a / a.sum()) @ v

    def line10(g, bad):
        q, k, v = setup(g)
        e = {j: np.exp(q[i - 1] @ k[j - 1] / np.sqrt(d)) for j in range(i - W, i + 1)}
        Z = sum(e.values())
        lo = i - W + 1 if bad else i - W
        return masked(q, k, v), sum(e[j] / Z * v[j - 1] for j in range(lo, i + 1))

    def line11(g, bad):
        q, k, v = setup(g)
        e = {j: np.exp(q[i - 1] @ k[j - 1] / np.sqrt(d)) for j in range(i - W, i + 1)}
        Z = sum(e.values())
        return sum(e[j] / Z * v[j - 1] for j in e), sum(e[j] * v[j - 1] for j in e) / Z
    return {10: line10, 11: line11}


def dao2023():
    N, d = 5, 3

    def setup(g):
        Q, K, V, dO = (g.normal(size=(N, d)) for _ in range(4))
        P = softmax(Q @ K.T, axis=1)
        return P, V, dO, P @ V, dO @ V.T

    def line10(g, bad):
        P, V, dO, O, dP = setup(g)
        return (dO * O).sum(axis=1), (P * dP).sum(axis=1)

    def line11(g, bad):
        P, V, dO, O, dP = setup(g)
        D = (dO * O).sum(axis=1, keepdims=True)
        return P * (dP - D @ np.ones((1, N))), P * dP - (P @ np.diag(D[:, 0]) if bad else np.diag(D[:, 0]) @ P)
    return {10: line10, 11: line11}


def ramapuram2024():
    n = 7
    ss = np.linspace(-3.0, 3.0, 13)

    def line10(g, bad):
        return sigmoid(ss - np.log(n)), (1 / (1 + np.exp(-ss) / n) if bad else 1 / (1 + n * np.exp(-ss)))

    def line11(g, bad):
        return 1 / (1 + n * np.exp(-ss)), np.exp(ss) / (n + np.exp(ss))
    return {10: line10, 11: line11}


def ye2024():
    N, d, lam = 5, 3, 0.35

    def setup(g):
        Q1, Q2, K1, K2 = (g.normal(size=(N, d)) for _ in range(4))
        A1, A2 = softmax(Q1 @ K1.T / np.sqrt(d), axis=1), softmax(Q2 @ K2.T / np.sqrt(d), axis=1)
        return A1, A2, g.normal(size=(N, 2 * d))

    def line10(g, bad):
        A1, A2, V = setup(g)
        return (A1 - lam * A2) @ V, A1 @ V - (1 if bad else lam) * A2 @ V

    def line11(g, bad):
        A1, A2, V = setup(g)
        return (A1 - lam * A2) @ np.ones(N), (1 - lam) * np.ones(N)          # 1_N, the ones vector
    return {10: line10, 11: line11}


def shazeer2020_talking():
    H, n, m, dk = 3, 4, 5, 2

    def setup(g):
        return g.normal(size=(H, n, dk)), g.normal(size=(H, m, dk)), g.normal(size=(H, H)), 1   # h' = 1 (0-based)

    def line9(g, bad):
        Q, K, P, hp = setup(g)
        J = [Q[h] @ K[h].T for h in range(H)]
        return sum(P[h, hp] * J[h] for h in range(H)), sum(P[h, hp] * Q[h] @ K[h].T for h in range(H))

    def line10(g, bad):
        Q, K, P, hp = setup(g)
        Pm = P.T if bad else P
        left = np.hstack([Pm[h, hp] * Q[h] for h in range(H)])
        return sum(P[h, hp] * Q[h] @ K[h].T for h in range(H)), left @ np.hstack(list(K)).T
    return {9: line9, 10: line10}


def so2021():
    def line8(g, bad):
        x = np.linspace(-2.0, 2.0, 9)
        return np.maximum(0, x) ** 2, x * np.maximum(0, x)

    def line9(g, bad):
        n, d, i = 7, 3, 4
        q, w = g.normal(size=(n, d)), g.normal(size=(3, d))
        lhs = sum(w[s] * q[i - s] for s in range(3))
        return lhs, w[0] * q[i] + w[1] * q[i + 1 if bad else i - 1] + w[2] * q[i - 2]
    return {8: line8, 9: line9}


def kobayashi2020():
    n, d, dp = 5, 4, 3

    def line11(g, bad):
        x = g.normal(size=(n, d))
        WQ, WK, WV = (g.normal(size=(d, dp)) for _ in range(3))
        bQ, bK, bV, WO = g.normal(size=dp), g.normal(size=dp), g.normal(size=dp), g.normal(size=(dp, d))
        i = 2
        alpha = softmax(np.array([(x[i] @ WQ + bQ) @ (x[j] @ WK + bK) / np.sqrt(dp) for j in range(n)]))
        lhs = sum(alpha[j] * ((x[j] @ WV + bV) @ WO) for j in range(n))
        return lhs, sum(alpha[j] * x[j] @ WV @ WO for j in range(n)) + (0 if bad else bV @ WO)
    return {11: line11}


def abnar2020():
    n = 4

    def setup(g):
        return softmax(g.normal(size=(n, n)), axis=1), softmax(g.normal(size=(n, n)), axis=1), np.eye(n)

    def line10(g, bad):
        W1, W2, I = setup(g)
        A1, A2 = 0.5 * W1 + 0.5 * I, 0.5 * W2 + 0.5 * I
        return A2 @ A1, (0.5 * W2 + 0.5 * I) @ (0.5 * W1 + 0.5 * I)

    def line11(g, bad):
        W1, W2, I = setup(g)
        rhs = 0.25 * W2 @ W1 + 0.25 * W2 + (0 if bad else 0.25 * W1) + 0.25 * I
        return (0.5 * W2 + 0.5 * I) @ (0.5 * W1 + 0.5 * I), rhs
    return {10: line10, 11: line11}


def zhai2021():
    T, d = 5, 3

    def line10(g, bad):
        K, V, w = g.normal(size=(T, d)), g.normal(size=(T, d)), g.normal(size=(T, T))
        t = 1
        lhs = sum(np.exp(K[tp] + w[t, tp]) * V[tp] for tp in range(T))
        ew = np.exp(w).T if bad else np.exp(w)
        return lhs, (ew @ (np.exp(K) * V))[t]

    def line11(g, bad):
        K, V = g.normal(size=(T, d)), g.normal(size=(T, d))
        lhs = sum(np.exp(K[tp]) * V[tp] for tp in range(T)) / sum(np.exp(K[tp]) for tp in range(T))
        return lhs, (softmax(K, axis=0) * V).sum(axis=0)        # softmax over the context positions t'
    return {10: line10, 11: line11}


def schlag2021():
    dv, dd = 3, 4

    def setup(g):
        return g.normal(size=(dv, dd)), g.normal(size=dv), g.normal(size=dd), 0.6

    def line9(g, bad):
        W, v, p, b = setup(g)
        vbar = W @ p
        return W + b * np.outer(v - vbar, p), W + b * np.outer(v - W @ p, p)

    def line10(g, bad):
        W, v, p, b = setup(g)
        rhs = W @ (np.eye(dd) - b * np.outer(p, p)) + (1 if bad else b) * np.outer(v, p)
        return W + b * np.outer(v - W @ p, p), rhs
    return {9: line9, 10: line10}


def peng2021():
    d, D, dv = 3, 5, 2

    def setup(g):
        return g.normal(size=(D, d)), g.normal(size=d), g.normal(size=d)

    def phi(Wr, x):
        return np.sqrt(1 / D) * np.concatenate([np.sin(Wr @ x), np.cos(Wr @ x)])

    def line10(g, bad):
        Wr, x, y = setup(g)
        return phi(Wr, x) @ phi(Wr, y), np.mean(np.sin(Wr @ x) * np.sin(Wr @ y) + np.cos(Wr @ x) * np.cos(Wr @ y))

    def line11(g, bad):
        Wr, x, y = setup(g)
        return np.mean(np.sin(Wr @ x) * np.sin(Wr @ y) + np.cos(Wr @ x) * np.cos(Wr @ y)), np.mean(np.cos(Wr @ (x + y if bad else x - y)))  # noqa: E501

    def line12(g, bad):
        Wr = g.normal(size=(D, d))
        T, t = 6, 4
        q, k, v = g.normal(size=(T + 1, d)), g.normal(size=(T + 1, d)), g.normal(size=(T + 1, dv))
        S = np.zeros((2 * D, dv))
        for s in range(1, t + 1):
            S = S + np.outer(phi(Wr, k[s]), v[s])
        return phi(Wr, q[t]) @ S, sum((phi(Wr, q[t]) @ phi(Wr, k[i])) * v[i] for i in range(1, t + 1))
    return {10: line10, 11: line11, 12: line12}


def dong2021():
    n, din, dqk, dv = 5, 4, 3, 2

    def setup(g):
        x, R = g.normal(size=din), g.normal(size=(n, din))
        WQ, WK, WV = g.normal(size=(din, dqk)), g.normal(size=(din, dqk)), g.normal(size=(din, dv))
        bQ, bK, bV = g.normal(size=dqk), g.normal(size=dqk), g.normal(size=dv)
        one = np.ones((n, 1))
        X = one @ x[None, :] + R
        P = softmax((X @ WQ + one @ bQ[None, :]) @ (X @ WK + one @ bK[None, :]).T / np.sqrt(dqk), axis=1)
        return x, R, WV, bV, one, X, P

    def line9(g, bad):
        x, R, WV, bV, one, X, P = setup(g)
        return P @ X @ WV + one @ bV[None, :], P @ (one @ x[None, :] + R) @ WV + one @ bV[None, :]

    def line10(g, bad):
        x, R, WV, bV, one, X, P = setup(g)
        rest = R @ WV if bad else P @ R @ WV
        return P @ (one @ x[None, :] + R) @ WV + one @ bV[None, :], one @ (x @ WV + bV)[None, :] + rest
    return {9: line9, 10: line10}


def chen2023():
    L, Lp, th = 2048, 8192, 0.9

    def setup(g):
        q, k = g.normal(size=2), g.normal(size=2)
        return q, k, 3, 11

    def f(x, m):
        return complex(x[0], x[1]) * np.exp(1j * m * th)

    def fp(x, m):
        return f(x, m * L / Lp)

    def line9(g, bad):
        q, k, m, n = setup(g)
        qm = complex(q[0], q[1]) * np.exp(1j * m * L * th / Lp)
        rhs = qm * np.conj(complex(k[0], k[1]) * np.exp(1j * n * L * th / Lp))
        return (fp(q, m) * np.conj(fp(k, n))).real, rhs.real

    def line10(g, bad):
        q, k, m, n = setup(g)
        rel = (n - m) if bad else (m - n)
        return ((fp(q, m) * np.conj(fp(k, n))).real,
                (complex(q[0], q[1]) * complex(k[0], -k[1]) * np.exp(1j * rel * L * th / Lp)).real)
    return {9: line9, 10: line10}


def gu2022():
    N, T = 3, 6

    def setup(g):
        return 0.5 * g.normal(size=(N, N)), g.normal(size=(N, 1)), g.normal(size=(1, N)), g.normal(size=T)

    def run(A, B, C, u):
        x, y = np.zeros((N, 1)), []
        for k in range(T):
            x = A @ x + B * u[k]
            y.append((C @ x).item())
        return np.array(y)

    def mp(A, e):
        return np.linalg.matrix_power(A, e)

    def line9(g, bad):
        A, B, C, u = setup(g)
        return run(A, B, C, u)[2], (C @ mp(A, 2) @ B * u[0] + C @ A @ B * u[1] + C @ B * u[2]).item()

    def line10(g, bad):
        A, B, C, u = setup(g)
        return run(A, B, C, u), np.array([sum((C @ mp(A, j if bad else k - j) @ B).item() * u[j] for j in range(k + 1))
                                          for k in range(T)])
    return {9: line9, 10: line10}


def expm(M, terms=40, squarings=8):
    """The matrix exponential by scaling and squaring a Taylor series (NumPy has none)."""
    X = M / 2.0 ** squarings
    E, term = np.eye(len(M)), np.eye(len(M))
    for k in range(1, terms):
        term = term @ X / k
        E = E + term
    for _ in range(squarings):
        E = E @ E
    return E


def gu2023():
    N, dt = 3, 0.7

    def setup(g):
        A = g.normal(size=(N, N)) - 3 * np.eye(N)       # invertible (eigenvalues near -3)
        return A, g.normal(size=(N, 1)), np.eye(N)

    def line9(g, bad):
        A, B, I = setup(g)
        Bbar = np.linalg.inv(dt * A) @ (expm(dt * A) - I) @ (dt * B)
        return Bbar, np.linalg.inv(A) @ (expm(dt * A) - I) @ ((dt if bad else 1.0) * B)

    def line10(g, bad):
        A, B, I = setup(g)
        return np.linalg.inv(A) @ (expm(dt * A) - I) @ B, (expm(dt * A) - I) @ np.linalg.inv(A) @ B
    return {9: line9, 10: line10}


MORE = [he2021, qin2022, xiong2021, tay2021, jaegle2021, dosovitskiy2021, liu2021, jiang2023, dao2023,
        ramapuram2024, ye2024, shazeer2020_talking, so2021, kobayashi2020, abnar2020, zhai2021, schlag2021,
        peng2021, dong2021, chen2023, gu2022, gu2023]
