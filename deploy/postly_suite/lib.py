"""deploy/lib.sh's functions, for the Python that stops and starts parts of a running suite
(one place knows how: the shell library that deploy/up.sh uses)."""
import subprocess

from postly_suite import ROOT


def call(function, *arguments):
    """Runs one of deploy/lib.sh's functions with its arguments; raises when it fails."""
    script = f'source "{ROOT}/deploy/lib.sh"; {function} "$@"'
    subprocess.run(["bash", "-c", script, "lib.sh", *map(str, arguments)], check=True)


def postgres_start(directory, port, durable=False):
    call("postgres_start", directory, port, *(["durable"] if durable else []))


def postgres_stop(directory):
    call("postgres_stop", directory)


def broker_start(directory, port):
    call("broker_start", directory, port)


def broker_stop(directory):
    call("broker_stop", directory)


def psql(port, database, statement, **values):
    """One statement through psql as the suite's superuser; its rows, `|`-separated. `values`
    are psql variables, which the statement reads as literals (`:'name'`)."""
    variables = [argument for name, value in values.items() for argument in ("-v", f"{name}={value}")]
    script = f'source "{ROOT}/deploy/lib.sh"; "$pg_bin/psql" -h 127.0.0.1 -p "$1" -U postgres -d "$2" -v ON_ERROR_STOP=1 -tAq "${{@:3}}"'
    result = subprocess.run(["bash", "-c", script, "lib.sh", str(port), database, *variables, "-f", "-"],
                            input=statement, check=True, capture_output=True, text=True)
    return result.stdout.splitlines()
