"""python3 -m cofem ARGS...: the cofem program (`cofem run SCENE`, `cofem static SCENE`, ...), the one
that goes with this module (cofem.program(): inside the pip-installed package, beside a
`cmake --install`, or the build tree's). The program is run as it is (same arguments, output and
exit status), not re-implemented through the library."""
import os
import sys


def main(argv=None):
    from . import _lib

    args = sys.argv[1:] if argv is None else list(argv)
    prog = _lib.program()
    if prog is None:
        sys.stderr.write("cofem: the cofem program was not found (set COFEM_BIN, or install the package with pip "
                         "or cmake --install)\n")
        return 127
    sys.stdout.flush()
    os.execv(prog, [prog, *args])


if __name__ == "__main__":
    sys.exit(main())
