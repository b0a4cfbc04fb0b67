module muster.invalid/bench/noop-extender

go 1.24
