import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))

# the tests keep the verdicts they prove in a directory of their own, never in the user's cache
os.environ.setdefault("SYMATTN_CACHE_DIR", tempfile.mkdtemp(prefix="symattn-test-verdicts-"))
