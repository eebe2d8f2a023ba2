"""``python -m tracemill`` runs the command line."""

from tracemill.cli import main

raise SystemExit(main())
