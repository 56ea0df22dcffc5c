import atexit
import os
import shutil
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.dirname(__file__))

# the tests keep the verdicts they prove in a directory of their own, never in the user's cache
if "SYMATTN_CACHE_DIR" not in os.environ:
    os.environ["SYMATTN_CACHE_DIR"] = tempfile.mkdtemp(prefix="symattn-test-verdicts-")
    atexit.register(shutil.rmtree, os.environ["SYMATTN_CACHE_DIR"], True)


# the quick subset: `python -m pytest -m "not slow"` leaves out the tests listed in slow_tests.txt
_SLOW_LIST = os.path.join(os.path.dirname(__file__), "slow_tests.txt")


def _slow_ids() -> set:
    with open(_SLOW_LIST, encoding="utf-8") as fh:
        return {line.strip() for line in fh if line.strip() and not line.startswith("#")}


def pytest_collection_modifyitems(config, items):
    slow = _slow_ids()
    for item in items:
        if item.nodeid in slow:
            item.add_marker(pytest.mark.slow)
