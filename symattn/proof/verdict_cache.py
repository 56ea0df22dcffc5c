"""Proved verdicts kept on disk, so that a claim proved once is not proved again in every process.

A verdict is stored under a key, the SHA-256 of

- the versions of symattn, SymPy and Python;
- the claim's structural form (:func:`structure`: every node's class, every name and assumption,
  numbers exactly; Dummies numbered in the order they occur, so the key does not depend on what
  the process built before), the dimensions ``at`` it is checked at, and a label naming it
  (a theorem and a claim number);
- the source text of the definitions, of the proof engine and of the gradients (every ``.py`` file of
  ``symattn/defs``, ``symattn/proof`` and ``symattn/grad``, whose VJP rules prove gradient claims) and
  of the modules that state the claim.

A change to any of them gives another key, under which nothing is stored: a stale entry is never
found, the claim is proved again. Only proved verdicts are stored (general, or at the listed
dimensions, with their scope), each with the record of its audit; an entry without a record that
passed is never read back as proved (:func:`symattn.proof.kernel.from_cache`), the claim is
proved again. A verdict read back is a :class:`CachedVerdict`: its first trace
line says that it comes from the cache, from which file and under which key, and how it was proved.

Two files are read: one shipped with the package (``symattn/_verdicts.json``, written by
``symattn prove --refresh --ship``) and one per user, written whenever a claim is proved:
``$SYMATTN_CACHE_DIR/verdicts.json``, else ``$XDG_CACHE_HOME/symattn/verdicts.json``, else
``~/.cache/symattn/verdicts.json``. ``SYMATTN_VERDICT_CACHE=off`` turns both off. A file that
cannot be read or parsed is ignored with a warning (and replaced when the user file is written).
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import os
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import sympy as sp

from .._version import __version__
from .kernel import from_cache
from .verdict import Verdict

FORMAT = 1
FILE_NAME = "verdicts.json"
SHIPPED = Path(__file__).resolve().parent.parent / "_verdicts.json"
_PACKAGE = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class CachedVerdict(Verdict):
    """A proved verdict read from the verdict cache instead of proved in this process.

    ``method`` says so, with the start of the key (``induction on H (C), cached (key 3fa2…)``), so
    whatever shows the method (a kernel's provenance, a table) shows it too; ``proved_by``: the
    method of the proof as it was found; ``cache_key``: the whole key; ``cache_file``: the file
    it was read from."""

    proved_by: str = ""
    cache_key: str = ""
    cache_file: str = ""

    def as_dict(self) -> dict:
        out = super().as_dict()
        out["cached"] = {"key": self.cache_key, "file": self.cache_file}
        return out


def enabled() -> bool:
    return os.environ.get("SYMATTN_VERDICT_CACHE", "").strip().lower() not in ("off", "0", "no", "false")


def user_dir() -> Path:
    """$SYMATTN_CACHE_DIR, else $XDG_CACHE_HOME/symattn, else ~/.cache/symattn."""
    if os.environ.get("SYMATTN_CACHE_DIR"):
        return Path(os.environ["SYMATTN_CACHE_DIR"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "symattn"


def user_file() -> Path:
    return user_dir() / FILE_NAME


# -- the key -------------------------------------------------------------------------------------

def structure(*exprs) -> str:
    """The structural form of SymPy objects as one string: each node's module and class with its
    arguments, symbols with their class, name and assumptions, other atoms by ``srepr``. Dummies
    are numbered in the order they occur, so equal structures built in different processes (or
    after other Dummies were made) give the same string, and different ones never do."""
    dummies: dict = {}
    out: list[str] = []

    def walk(e):
        if isinstance(e, sp.Basic):
            cls = f"{type(e).__module__}.{type(e).__qualname__}"
            if isinstance(e, sp.Dummy):
                k = dummies.setdefault(e, len(dummies))
                out.append(f"{cls}#{k}({e.name!r},{sorted(e.assumptions0.items())})")
            elif isinstance(e, sp.Symbol):
                out.append(f"{cls}({e.name!r},{sorted(e.assumptions0.items())})")
            elif not e.args:
                try:
                    text = sp.srepr(e)
                except Exception:  # an atom SymPy's repr printer does not know
                    text = str(e)
                out.append(f"{cls}<{text}>")
            else:
                out.append(f"{cls}(")
                for a in e.args:
                    walk(a)
                    out.append(",")
                out.append(")")
        elif isinstance(e, (tuple, list)):
            out.append("[")
            for a in e:
                walk(a)
                out.append(",")
            out.append("]")
        elif isinstance(e, dict):
            out.append("{")
            for k, v in sorted(e.items(), key=lambda kv: structure(kv[0])):
                walk(k)
                out.append(":")
                walk(v)
                out.append(",")
            out.append("}")
        else:
            out.append(f"{type(e).__qualname__}<{e!r}>")

    for x in exprs:
        walk(x)
        out.append(";")
    return "".join(out)


_DIGESTS: dict = {}


def source_digest(*paths) -> str:
    """SHA-256 over the source text of ``symattn/defs``, ``symattn/proof`` and ``symattn/grad`` (every ``.py`` file)
    and of the files ``paths``, in a fixed order (computed once per process and set of paths)."""
    extra = tuple(sorted(str(p) for p in paths if p))
    if extra not in _DIGESTS:
        package = [(f"{part}/{f.name}", f) for part in ("defs", "proof", "grad")
                   for f in sorted((_PACKAGE / part).glob("*.py"))]
        # the other files by their names: the theorem library is a link to proofs/ in a checkout
        # and a folder inside the package once installed, and both must give the same key
        files = package + sorted((Path(p).name, Path(p)) for p in extra)
        h = hashlib.sha256()
        for name, f in files:
            h.update(name.encode())
            h.update(b"\0")
            try:
                h.update(f.read_bytes())
            except OSError:
                h.update(b"<unreadable>")
            h.update(b"\0")
        _DIGESTS[extra] = h.hexdigest()
    return _DIGESTS[extra]


def claim_key(lhs, rhs, *, at=None, label: str = "", sources=()) -> str:
    """The key of the claim lhs = rhs (checked ``at`` the given dimensions), named ``label``, whose
    statement lives in the files ``sources``."""
    parts = [
        f"format {FORMAT}", f"symattn {__version__}", f"sympy {sp.__version__}",
        f"python {sys.version_info[0]}.{sys.version_info[1]}", f"label {label}",
        f"sources {source_digest(*sources)}", "claim " + structure(lhs, rhs, at),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


# -- the files -----------------------------------------------------------------------------------

_LOCK = threading.Lock()
_LOADED: dict = {}  # path -> {key: entry}, read once per process
_NEW: dict = {}  # entries proved in this process, not yet written


def _read(path: Path) -> dict:
    """The entries of a cache file ({} when it is missing; a warning and {} when it is unreadable)."""
    key = str(path)
    if key in _LOADED:
        return _LOADED[key]
    entries: dict = {}
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = None
    except OSError as exc:
        warnings.warn(f"symattn: ignoring the verdict cache {path}: {exc.strerror}", stacklevel=3)
        text = None
    if text is not None:
        try:
            data = json.loads(text)
            if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("entries"), dict):
                raise ValueError(f"not a verdict cache of format {FORMAT}")
            entries = {k: v for k, v in data["entries"].items() if _valid(v)}
        except ValueError as exc:
            warnings.warn(f"symattn: ignoring the verdict cache {path}: it is corrupt ({exc}); "
                          "its claims are proved again", stacklevel=3)
            entries = {}
    _LOADED[key] = entries
    return entries


def _valid(entry) -> bool:
    return (isinstance(entry, dict) and entry.get("status") == "proved"
            and isinstance(entry.get("general"), bool) and isinstance(entry.get("method"), str)
            and isinstance(entry.get("scope"), str) and isinstance(entry.get("trace", []), list)
            and isinstance(entry.get("over", [[], [], []]), list) and len(entry.get("over", [[], [], []])) == 3)


def files() -> list[Path]:
    """The cache files read, in order: the user's, then the one shipped with the package."""
    return [user_file(), SHIPPED]


def lookup(key: str, lhs=None, rhs=None) -> CachedVerdict | None:
    """The cached proved verdict under ``key`` (with the claim's sides), or None."""
    if not enabled():
        return None
    with _LOCK:
        found = _NEW.get(key)
        path = "this process"
        if found is None:
            for f in files():
                found = _read(f).get(key)
                if found is not None:
                    path = str(f)
                    break
    if found is None:
        return None
    first = (f"from the verdict cache ({path}, key {key}): proved by {found['method']} "
             f"with symattn {found.get('symattn', '?')} on {found.get('date', '?')} "
             f"in {float(found.get('seconds', 0.0)):.2f} s; not proved again in this process")
    over = tuple(tuple(str(x) for x in part) for part in found.get("over", [[], [], []]))
    method = f"{found['method']}, cached (key {key[:16]})"
    return from_cache(found, CachedVerdict, general=found["general"], method=method, scope=found["scope"],
                      trace=(first, *map(str, found.get("trace", []))), seconds=0.0, lhs=lhs, rhs=rhs,
                      over=over, proved_by=found["method"], cache_key=key, cache_file=path)


def entry(v: Verdict, **meta) -> dict:
    """The stored form of a proved verdict (``meta``: what names the claim, e.g. theorem and claim)."""
    return {"status": "proved", "general": bool(v.general), "method": v.method, "scope": v.scope,
            "over": [list(part) for part in v.over], "trace": [str(t) for t in v.trace],
            "audit": v.audit.as_dict(),
            "seconds": round(float(v.seconds), 4), "symattn": __version__,
            "date": datetime.date.today().isoformat(), "written": round(time.time(), 3), **meta}


def remember(key: str, v: Verdict, *, save: bool = True, **meta) -> bool:
    """Keep a proved verdict (never one read from the cache, never an unproved one); with ``save``,
    write it to the user's file at once. True when it was kept."""
    if not enabled() or not v.proved or isinstance(v, CachedVerdict):
        return False
    with _LOCK:
        _NEW[key] = entry(v, **meta)
    if save:
        flush()
    return True


def flush(path: Path | None = None, *, replace: bool = False) -> Path | None:
    """Write the verdicts proved in this process to ``path`` (default: the user's file), merged
    with the entries already there unless ``replace``. Returns the path, or None when nothing was
    written (cache off, nothing new, or the directory is not writable: a warning)."""
    if not enabled():
        return None
    path = Path(path) if path is not None else user_file()
    with _LOCK:
        if not _NEW and not replace:
            return None
        old = {} if replace else dict(_fresh_read(path))
        old.update(_NEW)
        data = {"format": FORMAT, "written_by": f"symattn {__version__}", "entries": dict(sorted(_prune(old).items()))}
        tmp = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".verdicts-", suffix=".json", dir=path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(_dumps(data))
            os.chmod(tmp, 0o644)  # a cache holds no secrets; the shipped file is read by everyone
            os.replace(tmp, path)  # readers see the old file or the new one, never half of one
            tmp = None
        except OSError as exc:
            warnings.warn(f"symattn: cannot write the verdict cache {path}: {exc.strerror or exc}", stacklevel=2)
            return None
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        _LOADED[str(path)] = data["entries"]
        return path


KEEP = 3  # entries kept per claim: the newest, and a few for sources switched back and forth


def _prune(entries: dict) -> dict:
    """The entries without the older ones of a claim: each edit of the sources gives every claim a
    new key, so a developer's cache would otherwise grow by the whole library at every edit."""
    by_claim: dict = {}
    for key, e in entries.items():
        by_claim.setdefault((e.get("theorem"), e.get("claim")), []).append((float(e.get("written", 0) or 0), key))
    keep = set()
    for (theorem, _), found in by_claim.items():
        found.sort(reverse=True)
        keep |= {key for _, key in (found if theorem is None else found[:KEEP])}
    return {k: e for k, e in entries.items() if k in keep}


def _dumps(data: dict) -> str:
    """The file's text: JSON with one entry a line (small diffs when a few claims change)."""
    head = {k: v for k, v in data.items() if k != "entries"}
    lines = [f"{json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in data["entries"].items()]
    inner = ",\n".join(lines)
    return json.dumps(head, ensure_ascii=False)[:-1] + ', "entries": {\n' + inner + ("\n" if lines else "") + "}}\n"


def _fresh_read(path: Path) -> dict:
    """The entries on disk now (another process may have written since this one read them)."""
    _LOADED.pop(str(path), None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a corrupt file was warned about when read; it is replaced
        return _read(path)


def forget() -> None:
    """Drop what this process read or proved (the files stay): the next lookup reads them again."""
    with _LOCK:
        _LOADED.clear()
        _NEW.clear()


def pending() -> dict:
    """The entries proved in this process and not yet written ({key: entry}, a copy)."""
    with _LOCK:
        return dict(_NEW)


def adopt(entries: dict) -> None:
    """Take entries proved in another process (a worker of ``symattn prove --jobs``) to write them."""
    with _LOCK:
        _NEW.update({k: v for k, v in entries.items() if _valid(v)})


def entries(path: Path) -> dict:
    """The valid entries of the cache file ``path`` ({} when it is missing or unreadable)."""
    if not enabled():
        return {}
    with _LOCK:
        return dict(_read(Path(path)))
