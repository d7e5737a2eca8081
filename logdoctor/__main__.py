import sys

from logdoctor.cli import main

sys.exit(main())
