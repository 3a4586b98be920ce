from ztsa.cli import main

raise SystemExit(main())
