"""Named checks, each printed as it passes or fails, and the closing `N passed, M failed`."""


class Checks:
    def __init__(self):
        self.passed, self.failed = 0, 0

    def __call__(self, name, condition, detail=""):
        if condition:
            self.passed += 1
            print(f"ok   {name}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL {name}{': ' + str(detail) if detail else ''}", flush=True)

    def summary(self):
        """Prints the closing line; the process's exit status."""
        print(f"{self.passed} passed, {self.failed} failed")
        return 0 if self.failed == 0 else 1
