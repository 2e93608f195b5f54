"""Named checks, each printed as it passes or fails, and the closing `N passed, M failed`."""


# What the unchanged iOS app's strict decoder needs of a post: every key, timestamps with milliseconds.
APP_POST_KEYS = ["_id", "title", "content", "author", "slug", "createdAt", "updatedAt", "status", "readTime", "views", "likes", "comments", "coverImage"]


def decodes_as_app_post(post):
    """True when the app's decoder takes `post`: every key it reads, `...T12:34:56.789Z` times."""
    return all(k in post for k in APP_POST_KEYS) and all(
        isinstance(post[k], str) and len(post[k]) == 24 and post[k][19] == "." and post[k].endswith("Z") for k in ("createdAt", "updatedAt"))


class Checks:
    def __init__(self):
        self.passed, self.failed = 0, 0
        self.failures = []

    def __call__(self, name, condition, detail=""):
        if condition:
            self.passed += 1
            print(f"ok   {name}", flush=True)
        else:
            self.failed += 1
            self.failures.append(name)
            print(f"FAIL {name}{': ' + str(detail) if detail else ''}", flush=True)

    def summary(self):
        """Prints the closing line, after the failed checks' names (CI keeps only the end of a log); the process's exit status."""
        for name in self.failures:
            print(f"failed: {name}")
        print(f"{self.passed} passed, {self.failed} failed")
        return 0 if self.failed == 0 else 1
