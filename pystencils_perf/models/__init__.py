"""Built-in performance models beyond the paper's limiters, each an opt-in `perf_predict` plugin (``model=NAME``)."""
