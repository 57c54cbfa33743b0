"""Built-in performance models beyond the paper's limiters, each a `perf_predict` plugin chosen by name
(``model=NAME``); ``throughput`` is the default (`launch.DEFAULT_MODEL`)."""
