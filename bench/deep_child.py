"""Child process of W5 deep: ``python -m bench.deep_child <framework> <steps>`` prints one JSON line."""
import json
import sys

from bench.workloads.deep import _child

if __name__ == "__main__":
    print(json.dumps(_child(sys.argv[1], int(sys.argv[2]))))
