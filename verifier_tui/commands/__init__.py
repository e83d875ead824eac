"""The headless faces: the commands that print, and their words on a terminal."""
