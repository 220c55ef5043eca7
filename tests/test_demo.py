"""The demo: one short epoch learns far above chance and writes its files."""
import contextlib
import importlib.util
import io
import json
import shutil

import pytest

import retrograd as rg
from retrograd import demo
from retrograd.__main__ import main


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Runs `python -m retrograd demo` in-process for one epoch, capturing what it prints."""
    out = tmp_path_factory.mktemp("demo")
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        status = main(["demo", "--epochs", "1", "--batch-size", "32", "--lr", "0.01", "--seed", "0",
                       "--out", str(out)])
    return status, out, stdout.getvalue(), stderr.getvalue()


def test_one_epoch_learns_far_above_chance(run):
    status, out, stdout, stderr = run
    assert status == 0
    assert "epoch 1/1" in stderr and "100%" in stderr  # the tqdm bar
    history = json.loads((out / "history.json").read_text())
    assert len(history["train_loss"]) == len(history["test_accuracy"]) == 1
    accuracy = history["test_accuracy"][0]
    assert accuracy > 0.6  # chance is 0.1
    assert f"test accuracy: {accuracy:.2%}" in stdout
    assert history["train_loss"][0] < 2.3  # below the loss of a uniform guess, ln(10)


def test_saved_weights_reload_into_a_fresh_model(run):
    _, out, _, _ = run
    state = rg.load(out / "model.rg")
    model = demo.DigitsNet()
    model.load_state_dict(state)
    _, _, x_test, y_test = demo.split_digits()
    _, accuracy = demo.evaluate(model, x_test, y_test)
    history = json.loads((out / "history.json").read_text())
    assert accuracy == history["test_accuracy"][0]


def test_curve_pictures_are_written_when_matplotlib_is_installed(run):
    if importlib.util.find_spec("matplotlib") is None:
        pytest.skip("matplotlib (the 'viz' extra) is not installed")
    _, out, _, _ = run
    for name in ("loss.png", "accuracy.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_graph_picture_is_written_when_graphviz_is_installed(run):
    if importlib.util.find_spec("graphviz") is None or shutil.which("dot") is None:
        pytest.skip("graphviz (the 'viz' extra and the dot program) is not installed")
    _, out, stdout, _ = run
    assert (out / "graph.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    missing = [line for line in stdout.splitlines() if "no pictures" in line]  # matplotlib may be what is missing
    assert not any("graphviz" in line for line in missing), missing


def test_graph_shows_layers_saved_tensors_and_named_parameters():
    pytest.importorskip("graphviz")
    model = demo.DigitsNet()
    x_train, y_train, _, _ = demo.split_digits()
    loss = rg.nn.functional.cross_entropy(model(x_train[:4]), y_train[:4])
    source = rg.viz.make_dot(loss, params=dict(model.named_parameters()), show_saved=True).source
    assert "features.0.weight\n (16, 1, 3, 3)" in source
    assert "classifier.3.bias\n (10)" in source
    assert "AccumulateGrad" in source and "fillcolor=orange" in source and "darkolivegreen1" in source


def test_without_the_extras_it_says_what_to_install_and_still_trains(tmp_path, monkeypatch, capsys):
    import sys
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` raise ImportError
    monkeypatch.setitem(sys.modules, "graphviz", None)
    result = demo.train(epochs=1, batch_size=32, limit=64, out=str(tmp_path), progress=False)
    printed = capsys.readouterr().out
    assert "pip install 'retrograd[viz]'" in printed and "test accuracy:" in printed
    assert (tmp_path / "history.json").exists() and (tmp_path / "model.rg").exists()
    assert not (tmp_path / "loss.png").exists() and not (tmp_path / "graph.png").exists()
    assert len(result["history"]["test_accuracy"]) == 1


def test_command_line_errors():
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        assert main([]) == 2
    assert "python -m retrograd demo" in printed.getvalue()
    with contextlib.redirect_stderr(io.StringIO()):
        assert main(["train"]) == 2
        with pytest.raises(SystemExit):
            main(["demo", "--batch-size", "0"])
