"""`python -m edgewise.graph.cli`: the `edgewise` command."""

from . import main

raise SystemExit(main())
