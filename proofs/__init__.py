"""The theorem library of symattn: one module per family, each theorem in the seed's notation.

``symattn prove`` imports every module here (see :func:`symattn.theorems.load_library`).
"""
