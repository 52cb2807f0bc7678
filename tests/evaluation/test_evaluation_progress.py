"""The run's progress bar counts the samples of every process (`hf_vitrobust.evaluation.progress`)."""

from hf_vitrobust.evaluation.progress import RunProgress


def test_the_count_is_the_sum_over_processes(tmp_path):
    main = RunProgress(tmp_path, 0, 3, total=100, enabled=True)
    other = RunProgress(tmp_path, 2, 3, total=None, enabled=True)
    assert main.bar is not None and other.bar is None  # only the main process draws
    other.add(7)
    main.add(5)
    assert main.bar.n == 12 and main.total_across_processes() == 12  # rank 1 has written nothing yet: 0
    other.add(30)
    main.add(1)
    assert main.bar.n == 43 and main.bar.total == 100
    # A resumed process starts its count again at zero, whatever an earlier run left.
    assert RunProgress(tmp_path, 2, 3, total=None, enabled=False).count == 0
    assert main.total_across_processes() == 6
    main.close()


def test_one_process_writes_no_counter_file(tmp_path):
    progress = RunProgress(tmp_path / "work", 0, 1, total=None, enabled=False)
    progress.add(4)
    assert progress.total_across_processes() == 4 and not (tmp_path / "work").exists()
