"""``python -m retrograd demo [options]``: the command line (``demo`` is the one command)."""
import sys


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m retrograd demo [--epochs N] [--batch-size N] [--lr LR] [--seed N] [--out DIR]\n\n"
              "commands:\n  demo    train a small convolutional network on the 8x8 handwritten digits\n\n"
              "See 'python -m retrograd demo --help' for the options.")
        return 0 if argv else 2
    if argv[0] != "demo":
        print(f"python -m retrograd: unknown command {argv[0]!r}; the command is 'demo'", file=sys.stderr)
        return 2
    from .demo import main as demo_main  # here, not at the top: the usage and its errors do not load the demo
    return demo_main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
