import atexit
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))

# the tests keep the verdicts they prove in a directory of their own, never in the user's cache
if "SYMATTN_CACHE_DIR" not in os.environ:
    os.environ["SYMATTN_CACHE_DIR"] = tempfile.mkdtemp(prefix="symattn-test-verdicts-")
    atexit.register(shutil.rmtree, os.environ["SYMATTN_CACHE_DIR"], True)
