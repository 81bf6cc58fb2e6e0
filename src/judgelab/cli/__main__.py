"""``python -m judgelab.cli``: the same as the ``judgelab`` command."""

import sys

from judgelab.cli import main

if __name__ == "__main__":
    sys.exit(main())
