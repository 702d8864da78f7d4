"""python -m tiledattn.bench (see tiledattn.bench.cli)."""

import sys

from tiledattn.bench.cli import main

if __name__ == "__main__":
    sys.exit(main())
