"""`ztsa exec`: confined execution (policy, seccomp filter, tracer, audit log)."""
