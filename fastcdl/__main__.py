import sys

from fastcdl.cli import main

sys.exit(main())
