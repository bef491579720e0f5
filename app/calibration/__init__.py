"""Calibration: the screen's error rates on screenings whose answer the client knew (their
label), and whether one configuration beats another on the same pairs."""
