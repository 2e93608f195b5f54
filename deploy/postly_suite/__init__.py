"""What the system tests (deploy/system_test.py), the fault runs (deploy/faults.py) and the
benches (bench/) share: the HTTP client, the fakes, the running suite, deploy/lib.sh's
functions and the measurements.

Found on the path one way: deploy/'s own scripts sit beside it, and every shell entry point
sources deploy/lib.sh, which puts deploy/ on PYTHONPATH."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
