"""The seal of the proof kernel: :class:`~symattn.proof.verdict.Verdict` accepts the status
"proved" only with this object, which only :mod:`symattn.proof.kernel` passes (a test checks that
no other module of the package names it). A verdict proved in a worker process keeps it: the seal
unpickles as this same object."""


class _Seal:
    __slots__ = ()

    def __reduce__(self):
        return (_the_seal, ())

    def __repr__(self):
        return "<the proof kernel's seal>"


def _the_seal():
    return SEAL


SEAL = _Seal()
