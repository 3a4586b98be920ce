from ztsa.cli import entry

# as the launcher leaves: flushed, then os._exit (no teardown whose flush of a stdio the
# tree shut down could turn CMD's status into Python's 120)
entry()
