"""One screen per module: the main screen and the choosers."""
